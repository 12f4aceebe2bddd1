"""A local AnkiConnect for the tests and the benchmark, backed by a real Anki collection.

It speaks AnkiConnect's protocol (versions 4 and 6, `multi`, the API key, the error
envelope) and runs each action on a real collection through the PyPI `anki` package, the
way the add-on runs it inside Anki: the same duplicate checks, the same media renaming,
the same search errors. The collection is opened per HTTP request behind one lock (Anki
handles one request at a time too), so a test can open it between requests to look at
what landed. The recorded exchanges of a real Anki 26.9.3 are replayed against it in
`test_contract.py`.

Switches for the failure tests: `misroute` files every new card under "Default" (the
deck-routing bug of some builds), `unsupported` hides actions (older builds), `api_key`
demands a key, and `stop()`/`start()` take Anki away and bring it back on the same port.
"""

from __future__ import annotations

import base64
import contextlib
import fnmatch
import functools
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anki.lang
import jsonschema
from anki.collection import Collection
from anki.errors import NotFoundError
from anki.httpclient import HttpClient
from anki.notes import NoteFieldsCheckResult
from anki.utils import field_checksum

API_VERSION = 6
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


@dataclass
class AnkiState:
    """What outlives one request: the collection's path, the switches, the request log."""

    path: Path
    lock: threading.Lock = field(default_factory=threading.Lock)
    misroute: bool = False
    unsupported: set[str] = field(default_factory=set)
    api_key: str | None = None
    latency: float = 0.0  # seconds each request holds Anki's main thread (real: ~0.025)
    # One entry per HTTP request: the actions it carried (`multi` expanded).
    requests: list[list[str]] = field(default_factory=list)
    media_order: list[str] = field(default_factory=list)

    def actions(self) -> list[str]:
        return [action for request in self.requests for action in request]


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
        try:
            if key != self.state.api_key:
                raise Exception("valid api key must be provided")
            if name not in ACTIONS or name in self.state.unsupported:
                raise Exception("unsupported action")
            reply["result"] = getattr(self, name)(**params)
        except Exception as exc:
            reply["error"] = str(exc)
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

    @api
    def deckNamesAndIds(self) -> dict[str, int]:
        return {d.name: d.id for d in self.col.decks.all_names_and_ids()}

    @api
    def createDeck(self, deck: str) -> int:
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
        # The deck-routing bug: the note type's last deck wins over the asked deck.
        self.col.add_note(anki_note, 1 if self.state.misroute else deck_id)  # type: ignore[arg-type]
        if not anki_note.card_ids():
            raise Exception(
                "The field values you have provided would make an empty question on all cards."
            )
        return int(anki_note.id)

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
        if errors:
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
        names = [n for n in os.listdir(self.col.media.dir()) if fnmatch.fnmatch(n, pattern)]
        order = {name: i for i, name in enumerate(self.state.media_order)}
        return sorted(names, key=lambda n: (order.get(n, len(order)), n))

    @api
    def deleteMediaFile(self, filename: str) -> None:
        self.col.media.trash_files([filename])


def respond(state: AnkiState, body: bytes) -> tuple[dict[str, Any] | Any, list[str]]:
    """The reply to one HTTP body and the actions it ran, as the add-on's web layer does."""
    if not body:
        return {"apiVersion": f"AnkiConnect v.{API_VERSION}"}, []
    try:
        request = json.loads(body.decode("utf-8"))
        jsonschema.validate(request, REQUEST_SCHEMA)
    except (ValueError, jsonschema.ValidationError) as exc:
        return {"result": None, "error": str(exc)}, []
    with state.lock:
        if state.latency:
            time.sleep(state.latency)
        col = Collection(str(state.path))
        try:
            connect = AnkiConnect(state, col)
            reply = connect.handler(request)
        finally:
            col.close()
        state.requests.append(connect.log)
    return reply, connect.log


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
        self._server: ThreadingHTTPServer | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        state = self.state

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                reply, _ = respond(state, self.rfile.read(length))
                payload = json.dumps(reply).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        # A short poll interval: stop() (shutdown) waits for the loop to notice.
        threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()

    def stop(self) -> None:
        """Anki is closed: the port refuses connections until `start()`."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @contextlib.contextmanager
    def collection(self) -> Iterator[Collection]:
        """The collection, opened between requests (for assertions)."""
        with self.state.lock:
            col = Collection(str(self.state.path))
            try:
                yield col
            finally:
                col.close()

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
