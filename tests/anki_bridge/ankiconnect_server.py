"""A local AnkiConnect for the tests and the benchmarks: the add-on as it really behaves.

The actions run on a real collection through the PyPI `anki` package, the way the add-on
runs them inside Anki (the same duplicate checks, media renaming, search errors); the
recorded exchanges of a real Anki 26.9.3 are replayed against it in `test_contract.py`.
The wire behaves as ../shared/fixtures/ankiconnect/BEHAVIOUR.md measured it:

- one "main thread" serves every client, woken by a 25 ms timer (the add-on's QTimer):
  accept, read a whole request, run it, send, close — parallel clients wait their turn;
- the reply is `HTTP/1.1 200 OK` without `Connection: close`, and the socket is closed
  after it, so a client that keeps the connection sends its next request into a dying
  socket: the close comes at once, or (`close_lag_share` of the replies) a few
  milliseconds late, when Anki's main thread waits for the GIL after its `send` (Anki's
  other threads hold it a switch interval); measured: 16–22 % of a keep-alive client's
  back-to-back requests fail;
- receiving a request costs what the add-on's 1 KiB re-parsing loop cost on the real
  machine (`receive_cost`, interpolated from the measured sizes), freezing Anki meanwhile;
- every action the add-on brackets with `startEditing()` (`addNote`, each note of
  `addNotes` and of a `multi`, `changeDeck`, `createDeck`, `deleteDecks`)
  resets Anki's main window (`mw.requireReset()` → `mw.reset()`: every screen redrawn, the
  deck list recounted): `reset_cost` per reset, spent on the main thread (see RESET_COST);
- `storeMediaFile` takes `data`, `path` (read from this machine's disk) or `url`, and
  replaces a file of the same name (the user's own too) unless `deleteExisting` is false;
- `addNote` files new cards under the note type's last-used deck ("Default"), ignoring
  `deckName` (both measured builds; `misroute=False` for a fixed build); `addNotes` is
  all-or-nothing (`legacy_add_notes` for the 2023 build's `[id, null, …]`);
- `kill_before`/`kill_after` kill Anki at an action (the connection drops unanswered and
  the port refuses until `start()`); what ran before stays in the collection;
- `profile_loaded=False` answers "collection is not available"; `unsupported` hides
  actions (older builds); `api_key` demands a key; `sandboxed` makes `path` unreadable
  (Anki in a Flatpak or on another machine); `stop()`/`start()` close and reopen Anki.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import glob
import hashlib
import itertools
import json
import math
import os
import random
import select
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anki.lang
import jsonschema
from anki.collection import Collection
from anki.errors import NotFoundError
from anki.httpclient import HttpClient
from anki.notes import NoteFieldsCheckResult
from anki.scheduler.base import ScheduleCardsAsNew
from anki.utils import field_checksum

API_VERSION = 6
# One reset of Anki's main window, in seconds. Measured on Anki 26.9.3 with 200 notes of one
# 1000×1000 JPEG each (issue 26): the client that stores the files by path in one `multi`,
# then `addNotes` and `changeDeck` (3 requests) took 4.5 s; the same three requests on this
# stand-in without the resets take 0.74 s. The 3.76 s left are its 201 resets (200 notes
# and the `changeDeck`): 18.7 ms each. The stand-in recounts the deck tree (what the deck
# list does on a reset) and spends the rest of the measured time on the main thread,
# where the real one redraws its screens.
RESET_COST = 0.0187
_REDRAW = bytes(64 * 1024)  # hashed while a reset redraws (some 30 µs a pass)
PROFILE = "User 1"
REQUEST_SCHEMA = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "minLength": 1},
        "version": {"type": "integer"},
        "params": {"type": "object"},
    },
    "required": ["action"],
}
ACTIONS: set[str] = set()

# The checksum of a first field (the duplicate check by deck) strips HTML with the i18n backend.
anki.lang.set_lang("en_US")


def api(fn: Callable[..., Any]) -> Callable[..., Any]:
    ACTIONS.add(fn.__name__)
    return fn


class AnkiKilled(BaseException):
    """Anki was killed while running an action: no answer, no more requests."""


@dataclass
class KillSwitch:
    """Kill Anki before or after the `nth` run of `action` (counted from when it was set)."""

    action: str
    nth: int
    after: bool
    seen: int = 0


@dataclass
class AnkiState:
    """What outlives one request: the switches, the request log, the open collection."""

    path: Path
    lock: threading.RLock = field(default_factory=threading.RLock)
    misroute: bool = True
    legacy_add_notes: bool = False
    unsupported: set[str] = field(default_factory=set)
    api_key: str | None = None
    profile_loaded: bool = True
    sandboxed: bool = False
    kill: KillSwitch | None = None
    poll: float = 0.025  # the add-on's timer: every request waits for a tick
    receive_speed: float = 1.0  # 1.0: the measured cost; tests of other things may lower it
    reset_cost: float = RESET_COST  # one reset of the main window (startEditing)
    close_lag_share: float = 0.2  # replies whose socket closes late (GIL wait), and how late:
    close_lag: tuple[float, float] = (0.0005, 0.005)  # up to Python's 5 ms switch interval
    # One entry per HTTP request: the actions it carried (`multi` expanded), and its size.
    requests: list[list[str]] = field(default_factory=list)
    request_bytes: list[int] = field(default_factory=list)
    media_order: list[str] = field(default_factory=list)
    # Notes selected in an open Browser (`select_in_browser`): its editor holds the first
    # one as it was then, and writes that copy back over a change made meanwhile (the
    # add-on's README: «you must not be viewing the note that you are updating»).
    browser_selected: list[int] = field(default_factory=list)
    editor_copy: dict[int, list[str]] = field(default_factory=dict)
    col: Collection | None = None

    def actions(self) -> list[str]:
        return [action for request in self.requests for action in request]

    def kill_before(self, action: str, nth: int = 1) -> None:
        self.kill = KillSwitch(action, nth, after=False)

    def kill_after(self, action: str, nth: int = 1) -> None:
        self.kill = KillSwitch(action, nth, after=True)

    def _before(self, action: str) -> None:
        switch = self.kill
        if switch is not None and switch.action == action:
            switch.seen += 1
            if not switch.after and switch.seen >= switch.nth:
                self.kill = None
                raise AnkiKilled(f"killed before {action} #{switch.nth}")

    def _after(self, action: str) -> None:
        switch = self.kill
        if switch and switch.action == action and switch.after and switch.seen >= switch.nth:
            self.kill = None
            raise AnkiKilled(f"killed after {action} #{switch.nth}")


class AnkiConnect:
    """The actions, named as AnkiConnect names them, on a collection open for one request."""

    def __init__(self, state: AnkiState, col: Collection) -> None:
        self.state = state
        self.col = col
        self.log: list[str] = []

    # --- dispatch, as the add-on does it -----------------------------------------------

    def handler(self, request: dict[str, Any]) -> Any:
        name = request.get("action", "")
        version = request.get("version", 4)
        params = request.get("params", {})
        key = request.get("key")
        self.log.append(name)
        reply: dict[str, Any] = {"result": None, "error": None}
        self.state._before(name)
        try:
            if key != self.state.api_key:
                raise Exception("valid api key must be provided")
            if name not in ACTIONS or name in self.state.unsupported:
                raise Exception("unsupported action")
            if not self.state.profile_loaded and name not in ("version", "multi"):
                raise Exception("collection is not available")
            reply["result"] = getattr(self, name)(**params)
        except Exception as exc:
            reply["error"] = str(exc)
        self.state._after(name)
        return reply["result"] if version <= 4 else reply

    # --- miscellaneous -----------------------------------------------------------------

    @api
    def version(self) -> int:
        return API_VERSION

    @api
    def multi(self, actions: list[dict[str, Any]]) -> list[Any]:
        return [self.handler(action) for action in actions]

    # --- decks -------------------------------------------------------------------------

    @api
    def deckNames(self) -> list[str]:
        return [d.name for d in self.col.decks.all_names_and_ids()]

    def _start_editing(self) -> None:
        """The add-on's `startEditing()`: `mw.requireReset()` resets the main window, which
        recounts the deck tree and redraws every screen, on the main thread and on a core
        of this machine: the time left after the recount is spent hashing (without the
        GIL, as Qt's drawing runs without it), so a client that works meanwhile competes
        with Anki for the cores as it would on the user's machine."""
        if self.state.reset_cost <= 0:
            return
        deadline = time.perf_counter() + self.state.reset_cost
        self.col.sched.deck_due_tree()
        while time.perf_counter() < deadline:
            hashlib.sha256(_REDRAW).digest()

    @api
    def deleteDecks(self, decks: list[str], cardsToo: bool = False) -> None:
        if not cardsToo:
            raise Exception(
                "Since Anki 2.1.28 it's not possible to delete decks without deleting cards as well"
            )
        self._start_editing()
        ids = [self.col.decks.id_for_name(name) for name in decks]
        self.col.decks.remove([did for did in ids if did])

    @api
    def deckNamesAndIds(self) -> dict[str, int]:
        return {d.name: d.id for d in self.col.decks.all_names_and_ids()}

    @api
    def getDeckStats(self, decks: list[str]) -> dict[int, dict[str, Any]]:
        """The add-on's own: each named deck's node of the scheduler's deck tree (its counts
        as Anki's deck list shows them, a parent's including its children's). Naming a deck
        that does not exist creates it, as `decks.id` does in the add-on."""
        ids = [self.col.decks.id(name) for name in decks]
        nodes: dict[int, Any] = {}
        pending = [self.col.sched.deck_due_tree()]
        while pending:
            node = pending.pop()
            nodes[node.deck_id] = node
            pending.extend(node.children)
        return {
            deck_id: {
                "deck_id": node.deck_id,
                "name": node.name,
                "new_count": node.new_count,
                "learn_count": node.learn_count,
                "review_count": node.review_count,
                "total_in_deck": node.total_in_deck,
            }
            for deck_id, node in nodes.items()
            if deck_id in ids
        }

    @api
    def getDeckConfig(self, deck: str) -> dict[str, Any] | bool:
        """The add-on's own: the deck's options group as Anki stores it; False for a name
        that is no deck."""
        if deck not in self.deckNames():
            return False
        return dict(self.col.decks.config_dict_for_deck_id(self.col.decks.id(deck)))

    @api
    def saveDeckConfig(self, config: dict[str, Any]) -> bool:
        if int(config["id"]) not in [c["id"] for c in self.col.decks.all_config()]:
            return False
        self.col.decks.save(config)
        return True

    # --- statistics (the add-on's own queries on the review log) -------------------------

    @api
    def getNumCardsReviewedToday(self) -> int:
        cutoff = (self.col.sched.day_cutoff - 86400) * 1000
        return int(self.col.db.scalar("select count() from revlog where id > ?", cutoff))

    @api
    def cardReviews(self, deck: str, startID: int) -> list[list[int]]:
        """Review-log rows of the cards directly in `deck` (not its subdecks) after
        `startID`: id, cid, usn, ease, ivl, lastIvl, factor, time, type."""
        return self.col.db.all(
            "select id, cid, usn, ease, ivl, lastIvl, factor, time, type from revlog "
            "where id>? and cid in (select id from cards where did=?)",
            startID,
            self.col.decks.id(deck),
        )

    @api
    def setDueDate(self, cards: list[int], days: str) -> bool:
        self.col.sched.set_due_date(cards, days, config_key=None)
        return True

    @api
    def modelNamesAndIds(self) -> dict[str, int]:
        return {m.name: int(m.id) for m in self.col.models.all_names_and_ids()}

    @api
    def createDeck(self, deck: str) -> int:
        self._start_editing()
        return int(self.col.decks.id(deck) or 0)

    @api
    def getDecks(self, cards: list[int]) -> dict[str, list[int]]:
        decks: dict[str, list[int]] = {}
        for cid in cards:
            did = self.col.db.scalar("select did from cards where id=?", cid)
            name = self.col.decks.get(did)["name"]  # type: ignore[index]
            decks.setdefault(name, []).append(cid)
        return decks

    @api
    def changeDeck(self, cards: list[int], deck: str) -> None:
        self._start_editing()
        did = self.col.decks.id(deck)
        self.col.set_deck(cards, did)  # type: ignore[arg-type]

    # --- models ------------------------------------------------------------------------

    @api
    def modelNames(self) -> list[str]:
        return [m.name for m in self.col.models.all_names_and_ids()]

    @api
    def createModel(
        self,
        modelName: str,
        inOrderFields: list[str],
        cardTemplates: list[dict[str, str]],
        css: str | None = None,
        isCloze: bool = False,
    ) -> dict[str, Any]:
        if not inOrderFields:
            raise Exception("Must provide at least one field for inOrderFields")
        if not cardTemplates:
            raise Exception("Must provide at least one card for cardTemplates")
        if modelName in self.modelNames():
            raise Exception("Model name already exists")
        mm = self.col.models
        model = mm.new(modelName)
        if isCloze:
            model["type"] = 1
        for name in inOrderFields:
            mm.add_field(model, mm.new_field(name))
        if css is not None:
            model["css"] = css
        for number, card in enumerate(cardTemplates, start=1):
            template = mm.new_template(card.get("Name", f"Card {number}"))
            template["qfmt"] = card["Front"]
            template["afmt"] = card["Back"]
            mm.add_template(model, template)
        mm.add(model)
        return dict(model)

    def _model(self, name: str) -> dict[str, Any]:
        model = self.col.models.by_name(name)
        if model is None:
            raise Exception(f"model was not found: {name}")
        return dict(model)

    @api
    def modelFieldNames(self, modelName: str) -> list[str]:
        return [f["name"] for f in self._model(modelName)["flds"]]

    @api
    def modelTemplates(self, modelName: str) -> dict[str, dict[str, str]]:
        return {
            t["name"]: {"Front": t["qfmt"], "Back": t["afmt"]}
            for t in self._model(modelName)["tmpls"]
        }

    @api
    def modelStyling(self, modelName: str) -> dict[str, str]:
        return {"css": self._model(modelName)["css"]}

    # --- notes -------------------------------------------------------------------------

    def _create_note(self, note: dict[str, Any]) -> tuple[Any, int]:
        """The unsaved note and its deck id, or the add-on's error for it."""
        model = self.col.models.by_name(note["modelName"])
        if model is None:
            raise Exception("model was not found: {}".format(note["modelName"]))
        deck = self.col.decks.by_name(note["deckName"])
        if deck is None:
            raise Exception("deck was not found: {}".format(note["deckName"]))
        anki_note = self.col.new_note(model)
        if "tags" in note:
            anki_note.tags = note["tags"]
        for name, value in note["fields"].items():
            for anki_name in anki_note.keys():  # noqa: SIM118 (a Note is not a mapping)
                if name.lower() == anki_name.lower():
                    anki_note[anki_name] = value
                    break
        options = note.get("options", {})
        allow_duplicate = options.get("allowDuplicate", False)
        if type(allow_duplicate) is not bool:
            raise Exception('option parameter "allowDuplicate" must be boolean')
        state = self._duplicate_or_empty(anki_note, deck["id"], options.get("duplicateScope"))
        if state == 1:
            raise Exception("cannot create note because it is empty")
        if state == 2 and not allow_duplicate:
            raise Exception("cannot create note because it is a duplicate")
        if state not in (0, 2):
            raise Exception("cannot create note for unknown reason")
        return anki_note, int(deck["id"])

    def _duplicate_or_empty(self, note: Any, deck_id: int, scope: str | None) -> int:
        """1 when the first field is empty, 2 when it duplicates a note in scope, else 0."""
        if scope != "deck":
            result = note.fields_check()
            if result == NoteFieldsCheckResult.EMPTY:
                return 1
            return 2 if result == NoteFieldsCheckResult.DUPLICATE else int(result)
        if not note.fields[0].strip():
            return 1
        csum = field_checksum(note.fields[0])
        for nid in self.col.db.list(
            "select id from notes where csum=? and mid=?", csum, note.note_type()["id"]
        ):
            if deck_id in self.col.db.list("select did from cards where nid=?", nid):
                return 2
        return 0

    @api
    def addNote(self, note: dict[str, Any]) -> int:
        anki_note, deck_id = self._create_note(note)
        self._add_pictures(anki_note, note.get("picture"))
        self._start_editing()
        # The deck-routing bug: the note type's last-used deck wins over the asked deck.
        self.col.add_note(anki_note, self._last_deck(anki_note) if self.state.misroute else deck_id)  # type: ignore[arg-type]
        if not anki_note.card_ids():
            raise Exception(
                "The field values you have provided would make an empty question on all cards."
            )
        return int(anki_note.id)

    def _last_deck(self, anki_note: Any) -> int:
        """The deck Anki's "add" screen would offer for this note type (Default when new)."""
        did = (anki_note.note_type() or {}).get("did") or 1
        return int(did) if self.col.decks.get(did, default=False) else 1

    def _add_pictures(self, anki_note: Any, pictures: Any) -> None:
        """The add-on's `picture` option: store each file and show it in its fields."""
        for picture in pictures if isinstance(pictures, list) else [pictures] if pictures else []:
            stored = self.storeMediaFile(
                picture["filename"], data=picture.get("data"), url=picture.get("url")
            )
            for name in picture.get("fields", []):
                if name in anki_note:
                    anki_note[name] += f'<img src="{stored}">'

    @api
    def addNotes(self, notes: list[dict[str, Any]]) -> list[int]:
        results: list[int] = []
        errors: list[str] = []
        for note in notes:
            try:
                results.append(self.addNote(note))
            except Exception as exc:
                errors.append(str(exc))
                if self.state.legacy_add_notes:  # 2023: a null in its place, the error dropped
                    results.append(None)  # type: ignore[arg-type]
        if errors and not self.state.legacy_add_notes:
            self.deleteNotes(results)  # all or nothing, as current builds do
            raise Exception(str(errors))
        return results

    @api
    def canAddNotes(self, notes: list[dict[str, Any]]) -> list[bool]:
        return [self.canAddNoteWithErrorDetail(note)["canAdd"] for note in notes]

    @api
    def canAddNoteWithErrorDetail(self, note: dict[str, Any]) -> dict[str, Any]:
        try:
            self._create_note(note)
        except Exception as exc:
            return {"canAdd": False, "error": str(exc)}
        return {"canAdd": True}

    @api
    def canAddNotesWithErrorDetail(self, notes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [self.canAddNoteWithErrorDetail(note) for note in notes]

    @api
    def deleteNotes(self, notes: list[int]) -> None:
        self.col.remove_notes(notes)  # type: ignore[arg-type]

    @api
    def findNotes(self, query: str | None = None) -> list[int]:
        return [] if query is None else [int(n) for n in self.col.find_notes(query)]

    @api
    def findCards(self, query: str | None = None) -> list[int]:
        return [] if query is None else [int(c) for c in self.col.find_cards(query)]

    @api
    def notesInfo(
        self, notes: list[int] | None = None, query: str | None = None
    ) -> list[dict[str, Any]]:
        if notes is None:
            notes = self.findNotes(query)
        result: list[dict[str, Any]] = []
        for nid in notes:
            try:
                note = self.col.get_note(nid)  # type: ignore[arg-type]
            except NotFoundError:
                result.append({})
                continue
            model = note.note_type() or {}
            result.append(
                {
                    "noteId": note.id,
                    "profile": PROFILE,
                    "tags": note.tags,
                    "fields": {
                        f["name"]: {"value": note.fields[f["ord"]], "order": f["ord"]}
                        for f in model["flds"]
                    },
                    "modelName": model["name"],
                    "mod": note.mod,
                    "cards": self.col.db.list(
                        "select id from cards where nid = ? order by ord", note.id
                    ),
                }
            )
        return result

    @api
    def updateNoteFields(self, note: dict[str, Any]) -> None:
        """The add-on's: a field name the note lacks is skipped without a word (names are
        matched exactly); a reset of the main window first."""
        anki_note = self.col.get_note(note["id"])
        self._start_editing()
        for name, value in note["fields"].items():
            if name in anki_note:
                anki_note[name] = value
        self.col.update_note(anki_note, skip_undo_entry=True)
        stale = self.state.editor_copy.get(anki_note.id)
        if stale is not None:  # the Browser's editor saves the note as it holds it
            anki_note.fields = list(stale)
            self.col.update_note(anki_note, skip_undo_entry=True)

    @api
    def updateNote(self, note: dict[str, Any]) -> None:
        updated = False
        if "fields" in note:
            self.updateNoteFields(note)
            updated = True
        if "tags" in note:
            self.updateNoteTags(note["id"], note["tags"])
            updated = True
        if not updated:
            raise Exception('Must provide a "fields" or "tags" property.')

    @api
    def updateNoteTags(self, note: int, tags: list[str] | str) -> None:
        if isinstance(tags, str):
            tags = [tags]
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise Exception("Must provide tags as a list of strings")
        for old in self.getNoteTags(note):
            self.removeTags([note], old)
        for new in tags:
            self.addTags([note], new)

    @api
    def getNoteTags(self, note: int) -> list[str]:
        return list(self.col.get_note(note).tags)  # type: ignore[arg-type]

    @api
    def addTags(self, notes: list[int], tags: str, add: bool = True) -> None:
        self._start_editing()
        if add:
            self.col.tags.bulk_add(notes, tags)  # type: ignore[arg-type]
        else:
            self.col.tags.bulk_remove(notes, tags)  # type: ignore[arg-type]

    @api
    def removeTags(self, notes: list[int], tags: str) -> None:
        self.addTags(notes, tags, False)

    @api
    def guiSelectedNotes(self) -> list[int]:
        """The notes selected in the Browser; [] when it is closed."""
        return list(self.state.browser_selected)

    # --- cards and reviews ---------------------------------------------------------------

    @api
    def cardsInfo(self, cards: list[int]) -> list[dict[str, Any]]:
        """The add-on's: each card as Anki renders it (`question`: its front; `answer`: the
        back template, which shows the front too), its note's fields and its schedule."""
        result: list[dict[str, Any]] = []
        for cid in cards:
            try:
                card = self.col.get_card(cid)  # type: ignore[arg-type]
            except NotFoundError:
                result.append({})
                continue
            note = card.note()
            model = card.note_type()
            states = self.col._backend.get_scheduling_states(card.id)
            result.append(
                {
                    "cardId": card.id,
                    "fields": {
                        f["name"]: {"value": note.fields[f["ord"]], "order": f["ord"]}
                        for f in model["flds"]
                    },
                    "fieldOrder": card.ord,
                    "question": card.question(),
                    "answer": card.answer(),
                    "modelName": model["name"],
                    "ord": card.ord,
                    "deckName": self.col.decks.name(card.did),
                    "css": model["css"],
                    "factor": card.factor,
                    "interval": card.ivl,
                    "note": card.nid,
                    "type": card.type,
                    "queue": card.queue,
                    "due": card.due,
                    "reps": card.reps,
                    "lapses": card.lapses,
                    "left": card.left,
                    "mod": card.mod,
                    "nextReviews": list(self.col._backend.describe_next_states(states)),
                    "flags": card.flags,
                }
            )
        return result

    def _card(self, cid: int) -> Any:
        """The add-on's `getCard`: the card, or its error for an id Anki does not hold."""
        try:
            return self.col.get_card(cid)  # type: ignore[arg-type]
        except NotFoundError:
            raise Exception(f"Card was not found: {cid}") from None

    @api
    def suspend(self, cards: list[int], suspend: bool = True) -> bool:
        """The add-on's (2023 and 2025 builds): an unknown id is an error ("Card was not
        found"), unless the loop skips it; a card already so is dropped from the list the
        loop walks, so the card after it is not checked; False when none is left."""
        for card in cards:
            if self.suspended(card) == suspend:
                cards.remove(card)
        if len(cards) == 0:
            return False
        self._start_editing()
        if suspend:
            self.col.sched.suspend_cards(cards)  # type: ignore[arg-type]
        else:
            self.col.sched.unsuspend_cards(cards)  # type: ignore[arg-type]
        return True

    @api
    def unsuspend(self, cards: list[int]) -> None:
        self.suspend(cards, False)  # the add-on drops the answer: always null

    @api
    def suspended(self, card: int) -> bool:
        return bool(self._card(card).queue == -1)

    @api
    def areSuspended(self, cards: list[int]) -> list[bool | None]:
        found: list[bool | None] = []
        for card in cards:
            try:
                found.append(self.suspended(card))
            except Exception:
                found.append(None)
        return found

    @api
    def forgetCards(self, cards: list[int]) -> None:
        """The add-on's build of 2025-11: Anki's «Forget» (logged, the position restored,
        the counts kept); ids Anki does not hold are passed over without a word."""
        self._start_editing()
        request = ScheduleCardsAsNew(
            card_ids=cards, log=True, restore_position=True, reset_counts=False, context=None
        )
        self.col._backend.schedule_cards_as_new(request)

    @api
    def answerCards(self, answers: list[dict[str, int]]) -> list[bool]:
        """The add-on's: each card answered through Anki's scheduler; False for a card Anki
        does not hold."""
        success = []
        for answer in answers:
            try:
                card = self.col.get_card(answer["cardId"])  # type: ignore[arg-type]
                card.start_timer()
                self.col.sched.answerCard(card, answer["ease"])  # type: ignore[attr-defined]
                success.append(True)
            except NotFoundError:
                success.append(False)
        return success

    @api
    def getReviewsOfCards(self, cards: list[int]) -> dict[str, list[dict[str, int]]]:
        columns = ["cid", "id", "usn", "ease", "ivl", "lastIvl", "factor", "time", "type"]
        if not cards:
            return {}
        marks = ",".join("?" * len(cards))
        rows = self.col.db.all(
            f"select {', '.join(columns)} from revlog where cid in ({marks})",  # noqa: S608
            *cards,
        )
        by_card: dict[int, list[dict[str, int]]] = {}
        for row in rows:
            by_card.setdefault(row[0], []).append(dict(zip(columns[1:], row[1:], strict=True)))
        return {str(cid): by_card.get(cid, []) for cid in cards}  # JSON keys are strings

    # --- media -------------------------------------------------------------------------

    @api
    def storeMediaFile(
        self,
        filename: str,
        data: str | None = None,
        path: str | None = None,
        url: str | None = None,
        skipHash: str | None = None,
        deleteExisting: bool = True,
    ) -> str | None:
        if not (data or path or url):
            raise Exception('You must provide a "data", "path", or "url" field.')
        if data:
            content = base64.b64decode(data)
        elif path:
            if self.state.sandboxed:  # Anki cannot see this machine's files
                raise FileNotFoundError(2, "No such file or directory", path)
            content = Path(path).read_bytes()
        else:
            response = HttpClient().get(url or "")
            if response.status_code != 200:
                raise Exception(f"{url} download failed with return code {response.status_code}")
            content = response.content
        if skipHash is not None and hashlib.md5(content).hexdigest() == skipHash:  # noqa: S324
            return None
        if deleteExisting:
            self.deleteMediaFile(filename)
        # Anki 26 keeps only the last part of a path ("sub/dir.png" is stored as "dir.png").
        stored = self.col.media.write_data(os.path.basename(filename), content)
        if stored not in self.state.media_order:
            self.state.media_order.append(stored)
        return stored

    @api
    def retrieveMediaFile(self, filename: str) -> str | bool:
        path = Path(self.col.media.dir()) / os.path.basename(filename)
        return base64.b64encode(path.read_bytes()).decode("ascii") if path.exists() else False

    @api
    def getMediaFilesNames(self, pattern: str = "*") -> list[str]:
        # The add-on globs the pattern: a name without wildcards is one existence check.
        found = glob.glob(os.path.join(self.col.media.dir(), pattern))
        names = [os.path.basename(path) for path in found]
        order = {name: i for i, name in enumerate(self.state.media_order)}
        return sorted(names, key=lambda n: (order.get(n, len(order)), n))

    @api
    def deleteMediaFile(self, filename: str) -> None:
        self.col.media.trash_files([filename])


# Seconds the add-on took to receive one request of so many bytes (BEHAVIOUR.md, midpoints
# of the measured ranges): its receive loop reads 1 KiB at a time and re-parses the whole
# buffer after each chunk, so the cost grows faster than the size.
RECEIVE_MEASURED = (
    (160_000, 0.04),
    (960_000, 0.23),
    (2_100_000, 0.64),
    (4_200_000, 2.15),
    (8_300_000, 13.8),
    (11_700_000, 218.0),  # measured again on 2026-11-25: past 8 MB the loop all but stalls
)


def receive_cost(size: int) -> float:
    """Seconds receiving `size` bytes holds Anki's main thread, as measured.

    Linear below the smallest measured size; between two measurements a power law through
    both (log-log interpolation); beyond the largest, the last segment's power law.
    """
    first_size, first_cost = RECEIVE_MEASURED[0]
    if size <= first_size:
        return first_cost * size / first_size
    segments = list(itertools.pairwise(RECEIVE_MEASURED))
    for (s1, t1), (s2, t2) in segments:
        if size <= s2 or (s2, t2) == RECEIVE_MEASURED[-1]:
            exponent = math.log(t2 / t1) / math.log(s2 / s1)
            return t1 * (size / s1) ** exponent
    raise AssertionError("unreachable")


def respond(state: AnkiState, body: bytes) -> Any:
    """The reply to one HTTP body, as the add-on's web layer gives it (AnkiKilled: none)."""
    if not body:
        return {"apiVersion": f"AnkiConnect v.{API_VERSION}"}
    try:
        request = json.loads(body.decode("utf-8"))
        jsonschema.validate(request, REQUEST_SCHEMA)
    except (ValueError, jsonschema.ValidationError) as exc:
        return {"result": None, "error": str(exc)}
    assert state.col is not None
    connect = AnkiConnect(state, state.col)
    try:
        return connect.handler(request)
    finally:
        state.requests.append(connect.log)


def parse_request(data: bytes) -> tuple[bytes, int] | None:
    """The body of the first whole request in `data` and the bytes it took, or None."""
    head_end = data.find(b"\r\n\r\n")
    if head_end < 0:
        return None
    length = 0
    for line in data[:head_end].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip() or 0)
    start = head_end + 4
    if len(data) < start + length:
        return None
    return data[start : start + length], start + length


def http_reply(payload: Any) -> bytes:
    """HTTP/1.1 200 with the add-on's headers: no `Connection: close`, though it will close."""
    body = json.dumps(payload).encode("utf-8")
    head = (
        "HTTP/1.1 200 OK\r\n"
        "Content-Type: text/json\r\n"
        "Access-Control-Allow-Origin: http://localhost\r\n"
        "Access-Control-Allow-Headers: *\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


class Client:
    """One connection, advanced by the main thread on each tick (the add-on's WebClient)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.read = b""
        self.write = b""

    def advance(self, state: AnkiState) -> bool:
        """Read and run a whole request, send what is due; False once the socket is closed."""
        readable, writable, _ = select.select([self.sock], [self.sock], [], 0)
        if readable:
            self.sock.settimeout(5.0)  # a client that stops sending freezes Anki this long
            started = time.monotonic()
            while (parsed := parse_request(self.read)) is None:
                try:
                    chunk = self.sock.recv(65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    return self.close()
                self.read += chunk
            body, length = parsed
            self.read = self.read[length:]
            state.request_bytes.append(length)
            cost = receive_cost(length) * state.receive_speed
            time.sleep(max(0.0, cost - (time.monotonic() - started)))
            self.write += http_reply(respond(state, body))
        if writable and self.write:
            try:
                sent = self.sock.send(self.write)
            except OSError:
                return self.close()
            self.write = self.write[sent:]
            if not self.write:  # right after the answer, or a GIL wait later: no keep-alive
                if random.random() < state.close_lag_share:
                    threading.Timer(random.uniform(*state.close_lag), self.close).start()
                    return False
                return self.close()
        return True

    def close(self) -> bool:
        with contextlib.suppress(OSError):
            self.sock.close()
        return False


@functools.cache
def _empty_collection() -> Path:
    """A new, empty collection made once per process (creating one takes a while)."""
    path = Path(tempfile.mkdtemp(prefix="anki-empty-")) / "collection.anki2"
    Collection(str(path)).close()
    return path


class FakeAnki:
    """The server: `url`, `state`, `stop()`/`start()`, and `collection()` for assertions."""

    def __init__(self, directory: Path, port: int = 0) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.state = AnkiState(path=directory / "collection.anki2")
        shutil.copyfile(_empty_collection(), self.state.path)  # as a new profile has
        self.port = port
        self.killed = threading.Event()
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._quit = threading.Event()
        self.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Open Anki (again, on the same port): the collection, the socket, the timer."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        listener.setblocking(False)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self.state.col = Collection(str(self.state.path))
        self.killed.clear()
        self._quit = threading.Event()
        self._thread = threading.Thread(
            target=self._main, args=(self._quit, listener, self.state.col), daemon=True
        )
        self._thread.start()

    def _main(self, quit: threading.Event, listener: socket.socket, col: Collection) -> None:
        """Anki's main thread: every `poll` seconds, accept and advance every client."""
        clients: list[Client] = []
        tick = time.monotonic()
        while not quit.is_set():
            tick += self.state.poll
            delay = tick - time.monotonic()
            if delay < 0:  # a long tick: the timer fires again at once, without catching up
                tick, delay = time.monotonic(), 0
            if quit.wait(delay):
                break
            with self.state.lock:
                try:
                    self._accept(listener, clients)
                    clients[:] = [c for c in clients if c.advance(self.state)]
                except AnkiKilled:
                    self.killed.set()
                    break
        for client in clients:
            client.close()
        self._close(listener, col)  # its own: Anki may be open again by now

    def _accept(self, listener: socket.socket, clients: list[Client]) -> None:
        while True:
            try:
                sock, _ = listener.accept()
            except (BlockingIOError, OSError):
                return
            sock.setblocking(True)
            clients.append(Client(sock))

    def _close(self, listener: socket.socket | None, col: Collection | None) -> None:
        """Close a listener and collection of Anki's; forget them if they are the current
        ones (a run that ended late must not close the next run's)."""
        with self.state.lock:
            if listener is not None:
                listener.close()
                if self._listener is listener:
                    self._listener = None
            if col is not None:
                col.close()
                if self.state.col is col:
                    self.state.col = None

    def stop(self) -> None:
        """Anki is closed: the port refuses connections until `start()`."""
        self._quit.set()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        self._close(self._listener, self.state.col)

    def wait_killed(self, timeout: float = 10) -> None:
        """Wait until a kill switch has fired and Anki is gone."""
        assert self.killed.wait(timeout), "Anki was not killed"
        if self._thread is not None:
            self._thread.join(timeout)
            assert not self._thread.is_alive(), "Anki was killed but did not close"
            self._thread = None

    @contextlib.contextmanager
    def collection(self) -> Iterator[Collection]:
        """The collection, between two requests (opened for the look when Anki is closed)."""
        with self.state.lock:
            if self.state.col is not None:
                yield self.state.col
                return
            col = Collection(str(self.state.path))
            try:
                yield col
            finally:
                col.close()

    def select_in_browser(self, note_ids: list[int]) -> None:
        """The user opens the Browser on `note_ids` (the editor shows the first of them, as
        it is now); [] closes it."""
        with self.collection() as col:
            self.state.browser_selected = list(note_ids)
            self.state.editor_copy = (
                {note_ids[0]: list(col.get_note(note_ids[0]).fields)}  # type: ignore[arg-type]
                if note_ids
                else {}
            )

    def notes(self, query: str = "") -> list[dict[str, Any]]:
        """Every note matching `query`: id, deck names of its cards, model, fields, tags."""
        with self.collection() as col:
            found = []
            for nid in col.find_notes(query):
                note = col.get_note(nid)
                decks = sorted({col.decks.name(card.did) for card in note.cards()})
                found.append(
                    {
                        "id": int(nid),
                        "decks": decks,
                        "model": (note.note_type() or {}).get("name"),
                        "fields": dict(note.items()),
                        "tags": list(note.tags),
                    }
                )
            return found

    def media_files(self) -> dict[str, bytes]:
        with self.collection() as col:
            folder = Path(col.media.dir())
            return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
