"""The only module that talks to Anki: AnkiConnect, protocol version 6, on core.http.

Each AnkiConnect action the bridge uses is a function here: a method of AnkiClient for a
request of its own, or a builder of the action for a `multi` batch. No other module names
an action.

Every request carries `"version": 6`, so every answer is the envelope
`{"result": …, "error": …}` (HTTP 200 even for errors); `multi` runs several actions in one
request and answers one envelope per action, which is how this bridge saves round trips
(AnkiConnect runs one request at a time on Anki's main thread). Anki's error texts lose
the invisible U+2068/U+2069 isolation marks its translations wrap values in.
"""

from __future__ import annotations

import glob
import json
import logging
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import httpx
from django.conf import settings

from anki_bridge.exceptions import ANKI, AnkiError, AnkiUnavailable
from anki_bridge.notemodel import NoteModel
from core.exceptions import InvalidInput
from core.http import Failure, FailureKind, Upstream, UpstreamClient
from core.http_shared import shared_client

logger = logging.getLogger(__name__)

PROTOCOL = 6
ANSWER_MAX_BYTES = 16 * 1024 * 1024  # notesInfo of 500 long notes stays far below
_ISOLATION_MARKS = str.maketrans("", "", "\u2068\u2069")


def clean_error(text: Any) -> str:
    """Anki's text (an error, a review interval) without the invisible isolation marks
    (U+2068/U+2069) its translations wrap values in."""
    return str(text).translate(_ISOLATION_MARKS).strip()


Action = dict[str, Any]


def _action(name: str, **params: Any) -> Action:
    return {"action": name, "params": params, "version": PROTOCOL}


@dataclass(frozen=True)
class NewNote:
    """A note to add (or to check whether it can be added)."""

    deck: str
    model: str
    fields: dict[str, str]
    tags: list[str]

    def params(self) -> dict[str, object]:
        return {
            "deckName": self.deck,
            "modelName": self.model,
            "fields": self.fields,
            "tags": self.tags,
        }


# The actions the bridge batches into `multi` requests (AnkiClient.multi runs them).


def create_deck(deck: str) -> Action:
    return _action("createDeck", deck=deck)


def create_model(model: NoteModel) -> Action:
    """Make `model` in Anki (its fields, card templates and styling)."""
    return _action(
        "createModel",
        modelName=model.name,
        inOrderFields=list(model.fields),
        css=model.styling,
        cardTemplates=[
            {"Name": name, "Front": sides["Front"], "Back": sides["Back"]}
            for name, sides in model.templates.items()
        ],
    )


def model_field_names(model: str) -> Action:
    return _action("modelFieldNames", modelName=model)


def model_templates(model: str) -> Action:
    return _action("modelTemplates", modelName=model)


def model_styling(model: str) -> Action:
    return _action("modelStyling", modelName=model)


def can_add_notes_with_error_detail(notes: Sequence[NewNote]) -> Action:
    """Per note `{"canAdd": bool, "error"?: str}` (builds before 2023 lack this action)."""
    return _action("canAddNotesWithErrorDetail", notes=[n.params() for n in notes])


def add_note(note: NewNote) -> Action:
    """The new note's id (addNotes is all-or-nothing on current builds: one per note)."""
    return _action("addNote", note=note.params())


def store_media_file(
    filename: str, *, data_base64: str | None = None, path: str | None = None
) -> Action:
    """The name Anki stored the file under (it may differ from `filename`).

    The bytes travel in the request (`data_base64`), or Anki reads them from `path` on its
    own machine (no upload: only when Anki shares this machine's filesystem).
    """
    if (data_base64 is None) == (path is None):
        raise ValueError("store_media_file takes exactly one of data_base64 and path")
    if path is not None:
        return _action("storeMediaFile", filename=filename, path=path)
    return _action("storeMediaFile", filename=filename, data=data_base64)


def retrieve_media_file(filename: str) -> Action:
    """The file of Anki's media folder, base64; `false` when Anki holds no such file."""
    return _action("retrieveMediaFile", filename=filename)


def media_named(filename: str) -> Action:
    """`[filename]` when Anki's media folder holds it, else `[]` (the add-on globs the
    pattern: a name without wildcards is one existence check)."""
    return _action("getMediaFilesNames", pattern=glob.escape(filename))


def deck_names_and_ids() -> Action:
    return _action("deckNamesAndIds")


def model_names_and_ids() -> Action:
    return _action("modelNamesAndIds")


def find_notes(query: str) -> Action:
    return _action("findNotes", query=query)


def dupe_query(model_id: int, first_field: str) -> str:
    """The Anki search for notes of the model whose first field matches (Anki's dupe check)."""
    escaped = first_field.replace("\\", "\\\\").replace('"', '\\"')
    return f'"dupe:{model_id},{escaped}"'


def find_cards(query: str) -> Action:
    return _action("findCards", query=query)


def deck_config(deck: str) -> Action:
    """The options group of `deck` as Anki stores it: `new.perDay`, `rev.perDay`, `newMix`
    (0 new cards mixed among reviews, 1 after them, 2 before them); `false` for no deck."""
    return _action("getDeckConfig", deck=deck)


def deck_stats(decks: Sequence[str]) -> Action:
    """Each deck's counts as Anki's deck list shows them, by deck id: new, learning and
    review cards left today, its limits and today's answers applied. Name only decks that
    exist: AnkiConnect creates a deck it is asked about."""
    return _action("getDeckStats", decks=list(decks))


def card_reviews(deck: str, since_ms: int) -> Action:
    """The review-log rows of the cards directly in `deck` (not its subdecks) after
    `since_ms`: id, cid, usn, ease, ivl, lastIvl, factor, time, type."""
    return _action("cardReviews", deck=deck, startID=since_ms)


def deck_query(deck: str) -> str:
    """The Anki search for the cards of `deck` and its subdecks, its name taken literally
    (`*` and `_` are wildcards in a search, quotes and backslashes escapes)."""
    escaped = deck.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("*", "\\*").replace("_", "\\_")
    return f'"deck:{escaped}"'


NAME_MAX_CHARS = 255  # a deck's or a model's name


def deck_name_check(name: str, field: str = "deck") -> str:
    """`name` as Anki keeps a deck by it (the spaces around `::` dropped, as Anki drops
    them); InvalidInput naming the rule for what Anki would rename: an empty part between
    `::` becomes «blank» («Trail::» is «Trail::blank»), a control character is dropped
    («x\ny» is «xy»), and the deck asked for by that name is then not found."""
    if len(name) > NAME_MAX_CHARS:
        raise InvalidInput(f"{field} must be at most {NAME_MAX_CHARS} characters", field=field)
    if any(not part.strip() for part in name.split("::")):
        raise InvalidInput(
            f"{field}: {name!r} has an empty part between «::» (Anki would name it «blank»)",
            field=field,
        )
    if any(unicodedata.category(ch) == "Cc" for ch in name):
        raise InvalidInput(
            f"{field}: {name!r} holds a control character (a line break, a tab), which Anki "
            "drops from a deck's name",
            field=field,
        )
    return "::".join(part.strip() for part in name.split("::"))  # «A :: B» is Anki's «A::B»


def deck_spelled(names: Iterable[str], deck: str) -> str | None:
    """Anki's spelling of `deck` among `names`, matched as Anki matches deck names
    (ignoring case, NFC); None when Anki has no such deck."""
    wanted = unicodedata.normalize("NFC", deck).casefold()
    return next((n for n in names if unicodedata.normalize("NFC", n).casefold() == wanted), None)


def set_due_date(cards: Sequence[int], days: int) -> Action:
    """Anki's «Set due date»: the cards (new ones become review cards) due in `days` days."""
    return _action("setDueDate", cards=list(cards), days=str(days))


def suspend(cards: Sequence[int]) -> Action:
    """Anki's «Suspend». Name only cards Anki holds and that are not suspended: an unknown
    id is an error, and the add-on's loop may leave one it should have dropped."""
    return _action("suspend", cards=list(cards))


def unsuspend(cards: Sequence[int]) -> Action:
    """Anki's «Unsuspend» (the answer is always null; read the cards back)."""
    return _action("unsuspend", cards=list(cards))


def forget_cards(cards: Sequence[int]) -> Action:
    """Anki's «Forget» (current builds: back to new, at their old position, logged; the
    2023 build rewrote the rows, every card at position 0). Unknown ids pass unnoticed."""
    return _action("forgetCards", cards=list(cards))


def cards_info(cards: Sequence[int]) -> Action:
    """Each card rendered, with its schedule (`type`, `queue`, `due`, `interval`,
    `factor`, `reps`, `lapses`); `{}` for a card Anki does not hold."""
    return _action("cardsInfo", cards=list(cards))


def new_elsewhere_query(deck_id: int) -> str:
    """The Anki search for cards added today that are not in the deck `deck_id` itself.

    Run just before and just after a batch of addNote in one `multi` (which Anki runs
    without serving anything else in between), the difference is the batch's cards that
    Anki filed elsewhere.
    """
    return f"added:1 -did:{deck_id}"


def misplaced_query(note_ids: Sequence[int], deck_id: int) -> str:
    """The Anki search for the cards of `note_ids` that are not in the deck `deck_id` itself."""
    return f"nid:{','.join(str(n) for n in note_ids)} -did:{deck_id}"


@dataclass(frozen=True)
class Outcome:
    """The answer to one action: its result, or Anki's (cleaned) error text."""

    result: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _failure(failure: Failure) -> Exception:
    """AnkiUnavailable (retryable) or AnkiError for a failed call, naming Anki's URL."""
    url, kind = failure.upstream.base_url, failure.kind
    if kind is FailureKind.CONNECT:
        return AnkiUnavailable(  # nothing reached Anki: the request was not carried out
            f"Anki is not reachable at {url}: is Anki open with AnkiConnect installed?",
            extra={"kind": str(kind)},
        )
    if kind is FailureKind.TIMEOUT:
        return AnkiUnavailable(  # Anki may carry it out later (its queue waits on a dialog)
            f"Anki did not answer within {failure.upstream.deadline:g} s at {url}: "
            "is a dialog open in Anki, or is it busy syncing?",
            extra={"kind": str(kind)},
        )
    if kind is FailureKind.DROPPED:
        cause = type(failure.exception).__name__ if failure.exception else "no details"
        return AnkiUnavailable(
            f"Anki dropped the connection at {url} ({cause}): "
            "is Anki open with AnkiConnect installed?",
            extra={"kind": str(kind)},
        )
    if kind is FailureKind.TOO_LARGE:
        return AnkiError(
            f"Anki answered more than {failure.upstream.max_body_bytes:,} bytes at {url}: "
            "is ANKI_CONNECT_URL the address of AnkiConnect?"
        )
    return AnkiError(f"Anki answered HTTP {failure.reply.status if failure.reply else 0} at {url}")


def upstream(*, url: str | None = None, timeout: float | None = None) -> Upstream:
    """AnkiConnect's policy: one deadline per request, no redirects, no retries, no keep-alive.

    AnkiConnect answers HTTP/1.1 without `Connection: close` and then closes the socket, so
    a kept-alive connection is dead on the next request: every request opens its own. A
    request is not retried (addNote is not idempotent; the journal queues what fails).
    """
    return Upstream(
        service=ANKI,
        base_url=(url or settings.ANKI_CONNECT_URL).rstrip("/"),
        deadline=float(timeout or settings.ANKI_CONNECT_TIMEOUT),
        max_body_bytes=ANSWER_MAX_BYTES,
        max_redirects=0,
        keep_alive=False,
        # AnkiConnect answers one request at a time: the others would wait in its queue
        # with their deadlines running; across processes too when Redis is configured.
        max_concurrency_per_host=1,
        headers={"Content-Type": "application/json"},
        error=_failure,
    )


class AnkiClient:
    """AnkiConnect, spoken in its actions; use as a context manager (`with AnkiClient() as anki`).

    Calls run on the process's shared client for the configured upstream (a `transport`,
    for tests, gets a client of its own).
    """

    def __init__(
        self,
        *,
        url: str | None = None,
        key: str | None = None,
        timeout: float | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.upstream = upstream(url=url, timeout=timeout)
        self.url = self.upstream.base_url
        self.key = settings.ANKI_CONNECT_KEY if key is None else key
        self._owned = transport is not None
        self._http = (
            UpstreamClient(self.upstream, transport=transport)
            if transport is not None
            else shared_client(self.upstream)
        )

    def __enter__(self) -> AnkiClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._owned:
            self._http.close()

    def version(self) -> int:
        """AnkiConnect's protocol version."""
        return int(self._invoke("version"))

    def model_names(self) -> list[str]:
        return list(self._invoke("modelNames"))

    def deck_names(self) -> list[str]:
        return list(self._invoke("deckNames"))

    def deck_names_and_ids(self) -> dict[str, int]:
        return {str(name): int(did) for name, did in self._invoke("deckNamesAndIds").items()}

    def deck_stats(self, decks: Sequence[str]) -> dict[int, dict[str, Any]]:
        """Each deck's counts as Anki's deck list shows them (new, learning, review due
        today, cards in it), by deck id. Name only decks that exist: AnkiConnect creates a
        deck it is asked about."""
        stats = self._invoke("getDeckStats", decks=list(decks))
        return {int(deck_id): dict(counts) for deck_id, counts in stats.items()}

    def notes_info(self, note_ids: Sequence[int]) -> list[dict[str, Any]]:
        """One NoteInfo per id, in order (`{}` for an id Anki does not hold)."""
        return list(self._invoke("notesInfo", notes=list(note_ids)))

    def delete_notes(self, note_ids: Sequence[int]) -> None:
        self._invoke("deleteNotes", notes=list(note_ids))

    def find_notes(self, query: str) -> list[int]:
        """The ids of the notes an Anki search finds (AnkiError for an invalid search)."""
        return list(self._invoke("findNotes", query=query))

    def find_cards(self, query: str) -> list[int]:
        """The ids of the cards an Anki search finds (AnkiError for an invalid search)."""
        return list(self._invoke("findCards", query=query))

    def get_decks(self, cards: Sequence[int]) -> dict[str, list[int]]:
        """`cards` grouped by the name of the deck each is in."""
        return dict(self._invoke("getDecks", cards=list(cards)))

    def change_deck(self, cards: Sequence[int], deck: str) -> None:
        self._invoke("changeDeck", cards=list(cards), deck=deck)

    def cards_info(self, cards: Sequence[int]) -> list[dict[str, Any]]:
        """Each card as Anki renders it (`question`, `answer`), with its schedule and its
        note's fields; `{}` for a card Anki does not hold."""
        return list(self._invoke("cardsInfo", cards=list(cards)))

    def answer_cards(self, answers: Sequence[tuple[int, int]]) -> list[bool]:
        """Answer each (card, ease) through Anki's scheduler; False for a card Anki does
        not hold."""
        given = [{"cardId": card, "ease": ease} for card, ease in answers]
        return [bool(done) for done in self._invoke("answerCards", answers=given)]

    def reviews_of_cards(self, cards: Sequence[int]) -> dict[int, list[dict[str, int]]]:
        """The review-log entries of each card (id: the answer's time in ms, ease, ...)."""
        found = self._invoke("getReviewsOfCards", cards=list(cards))
        return {int(card): list(entries) for card, entries in found.items()}

    def selected_notes(self) -> list[int]:
        """The notes selected in Anki's Browser (its editor shows one); [] when it is
        closed."""
        return [int(note) for note in self._invoke("guiSelectedNotes")]

    def update_note(
        self, note_id: int, *, fields: Mapping[str, str] | None, tags: Sequence[str] | None
    ) -> None:
        """AnkiConnect's `updateNote`: the fields it names (a name the note lacks is skipped
        without a word: check them first) and, when given, all of its tags."""
        note: dict[str, Any] = {"id": note_id}
        if fields is not None:
            note["fields"] = dict(fields)
        if tags is not None:
            note["tags"] = list(tags)
        self._invoke("updateNote", note=note)

    def multi(self, actions: Sequence[Action]) -> list[Outcome]:
        """Run `actions` in one request; one Outcome per action, in order."""
        if not actions:
            return []
        # AnkiConnect checks the key of every action inside `multi` too.
        keyed = [{**a, "key": self.key} for a in actions] if self.key else list(actions)
        results = self._invoke("multi", actions=keyed)
        if not isinstance(results, list) or len(results) != len(actions):
            raise AnkiError(
                f"Anki answered {len(results) if isinstance(results, list) else 'no'} results "
                f"to a multi request of {len(actions)} actions"
            )
        return [self._outcome(a["action"], r) for a, r in zip(actions, results, strict=True)]

    def _invoke(self, name: str, **params: Any) -> Any:
        """The result of one action; AnkiError with Anki's text when Anki refuses it."""
        outcome = self._outcome(name, self._post(_action(name, **params)))
        if not outcome.ok:
            raise AnkiError(f"Anki refused {name}: {outcome.error}", extra={"action": name})
        return outcome.result

    def _post(self, body: dict[str, Any]) -> Any:
        if self.key:
            body = {**body, "key": self.key}
        reply = self._http.post("", content=json.dumps(body).encode("utf-8"))
        if reply.status != 200:
            raise AnkiError(
                f"Anki answered HTTP {reply.status} at {self.url}: "
                "is ANKI_CONNECT_URL the address of AnkiConnect?"
            )
        try:
            return reply.json()
        except ValueError as exc:
            raise AnkiError(
                f"the answer at {self.url} is not JSON: is ANKI_CONNECT_URL AnkiConnect?"
            ) from exc

    def _outcome(self, name: str, reply: Any) -> Outcome:
        if not isinstance(reply, dict) or "result" not in reply or "error" not in reply:
            raise AnkiError(
                f"Anki answered {name} without the version-6 envelope: "
                "is AnkiConnect too old (protocol 6 is needed)?"
            )
        if reply["error"] is None:
            return Outcome(result=reply["result"])
        error = clean_error(reply["error"])
        if "collection is not available" in error.lower():  # Anki open, no profile loaded
            raise AnkiUnavailable(
                f"Anki at {self.url} has no profile open (collection is not available): "
                "open a profile in Anki",
                extra={"action": name, "kind": "no_profile"},
            )
        if "api key" in error.lower():
            raise AnkiError(
                f"Anki refused the request: {error} "
                "(set ANKI_CONNECT_KEY to the key AnkiConnect is configured with)",
                extra={"action": name},
            )
        return Outcome(error=error)
