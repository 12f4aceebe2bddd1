"""Storing note media in Anki the fast way, chosen from what AnkiConnect's requests cost.

AnkiConnect receives a request 1 KiB at a time and re-parses the whole buffer after each
chunk (BEHAVIOUR.md): up to about 1 MB the cost per byte is flat (0.16 MB: 0.04 s, 0.96 MB:
0.23 s), beyond it grows fast (2.1 MB: 0.64 s, 4.2 MB: 2.2 s, 8.3 MB: 14 s), and every
request also waits for the add-on's 25 ms timer. So:

- **path**: when Anki runs on this machine (a loopback ANKI_CONNECT_URL) and the shared
  folder (ANKI_MEDIA_SHARED_DIR) can be written, each file is written there and Anki reads
  it from disk (`storeMediaFile` with `path`): the requests stay tiny. A file Anki cannot
  read (Anki in a sandbox, another user's private temp) goes the data way, and the path
  way is not tried again for a while.
- **data**: the bytes travel base64-encoded in `multi` requests of at most
  REQUEST_BYTES (where the cost per byte is still flat); a larger file goes alone.

The files written for Anki are removed once it has answered. A file whose name Anki
already holds is not sent (one existence check per file, in one request): names are
made from the content, so it is the same picture.

`MediaAhead` sends a call's images while the rest are still being prepared: resizing on
every core overlaps with Anki storing what is ready (and adding the notes that are).
"""

from __future__ import annotations

import base64
import ipaddress
import logging
import os
import queue
import shutil
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.core.cache import cache

from anki_bridge import client as ankiconnect
from anki_bridge.client import AnkiClient
from anki_bridge.exceptions import AnkiError, AnkiUnavailable
from anki_bridge.images import MediaFile

logger = logging.getLogger(__name__)

REQUEST_BYTES = 900_000  # the largest request whose receive cost per byte is still flat
PATH_ACTIONS_PER_REQUEST = 500
PATH_FAILED_KEY = "anki:media-path-failed"
PATH_FAILED_SECONDS = 3600
AHEAD_FILES = 20  # files per request while images are still being prepared


def strategy() -> str:
    """ "path" or "data": how this process sends media to the configured Anki now."""
    wanted = settings.ANKI_MEDIA_UPLOAD
    if wanted == "data":
        return "data"
    if wanted == "auto" and (
        not _is_loopback(settings.ANKI_CONNECT_URL) or cache.get(PATH_FAILED_KEY)
    ):
        return "data"
    return "path" if _shared_dir() is not None else "data"


def media_send(client: AnkiClient, files: Mapping[str, bytes]) -> dict[str, str]:
    """Store `files` (name → bytes) in Anki; name → the name Anki stored it under ("" if not).

    A name Anki already holds is not sent: names are made from the content
    (`images.content_name`), so that file is this one. AnkiUnavailable propagates (what
    Anki already stored stays stored).
    """
    if not files:
        return {}
    stored = {name: name for name in media_held(client, list(files))}
    rest = {name: data for name, data in files.items() if name not in stored}
    if rest and strategy() == "path":
        stored.update(_send_paths(client, rest))
        rest = {name: data for name, data in rest.items() if name not in stored}
        if rest and settings.ANKI_MEDIA_UPLOAD == "auto":
            cache.set(PATH_FAILED_KEY, 1, PATH_FAILED_SECONDS)
            logger.warning(
                "Anki could not read %d media file(s) from %s: sending media as data for "
                "the next %d s (set ANKI_MEDIA_SHARED_DIR to a folder Anki can read)",
                len(rest), _shared_dir(), PATH_FAILED_SECONDS,
            )  # fmt: skip
    stored.update(_send_data(client, rest))
    return stored


class MediaAhead:
    """Stores a call's files in Anki as they become ready, on a thread of its own.

    `add` takes each file as it is ready (it may be called from any thread); `settle`
    waits until every file added so far went to Anki and gives name → the name Anki
    stored it under; `finish` settles and ends the thread. Files go in batches of
    AHEAD_FILES (fewer when settled or at the end), one request at a time, as Anki serves
    them anyway. When Anki fails or goes away the rest is left for the call's own
    delivery, which sends what is not stored (nothing is journaled here: the call
    journals every note and its files before it adds a note).
    """

    _END = None

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[MediaFile | threading.Event | None] = queue.SimpleQueue()
        self._stored: dict[str, str] = {}
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def add(self, file: MediaFile) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="anki-media", daemon=True)
                self._thread.start()
        self._queue.put(file)

    def settle(self) -> dict[str, str]:
        with self._lock:
            thread = self._thread
        if thread is not None:
            settled = threading.Event()
            self._queue.put(settled)
            while not settled.wait(0.5) and thread.is_alive():
                pass
        with self._lock:
            return dict(self._stored)

    def finish(self) -> dict[str, str]:
        with self._lock:
            thread = self._thread
        if thread is not None:
            self._queue.put(self._END)
            thread.join()
        with self._lock:
            return dict(self._stored)

    def _run(self) -> None:
        from django.db import connections

        failed = False
        batch: dict[str, bytes] = {}
        try:
            with AnkiClient() as client:

                def send() -> None:
                    nonlocal failed
                    if batch and not failed:
                        try:
                            stored = {n: s for n, s in media_send(client, batch).items() if s}
                        except (AnkiError, AnkiUnavailable) as exc:  # the call's delivery decides
                            logger.info("media ahead stopped: %s", exc)
                            failed = True
                        else:
                            with self._lock:
                                self._stored.update(stored)
                    batch.clear()

                waiting: list[MediaFile | threading.Event | None] = []
                while True:
                    item = waiting.pop() if waiting else self._queue.get()
                    if item is self._END:
                        send()
                        return
                    if isinstance(item, threading.Event):
                        send()
                        item.set()
                        continue
                    batch[item.filename] = item.data
                    if len(batch) < AHEAD_FILES:
                        continue
                    # Enough for a request: with it go the files that came while Anki was busy.
                    while len(batch) < PATH_ACTIONS_PER_REQUEST:
                        try:
                            more = self._queue.get_nowait()
                        except queue.Empty:
                            break
                        if not isinstance(more, MediaFile):
                            waiting.append(more)  # a settle or the end: after this request
                            break
                        batch[more.filename] = more.data
                    send()
        finally:
            connections.close_all()  # this thread's own connections, if the cache made any


def media_held(client: AnkiClient, names: Sequence[str]) -> set[str]:
    """The `names` Anki's media folder holds, in one request per PATH_ACTIONS_PER_REQUEST
    (each an existence check in the add-on); a check Anki refuses counts as absent."""
    held: set[str] = set()
    for start in range(0, len(names), PATH_ACTIONS_PER_REQUEST):
        chunk = names[start : start + PATH_ACTIONS_PER_REQUEST]
        outcomes = client.multi([ankiconnect.media_named(name) for name in chunk])
        held.update(
            n for n, o in zip(chunk, outcomes, strict=True) if o.ok and n in (o.result or [])
        )
    return held


def _send_paths(client: AnkiClient, files: Mapping[str, bytes]) -> dict[str, str]:
    """The files Anki stored from the shared folder; the others are left out."""
    shared = _shared_dir()
    if shared is None:
        return {}
    folder = Path(tempfile.mkdtemp(prefix="send-", dir=shared))
    try:
        folder.chmod(0o755)  # Anki may run as another user of this machine
        paths = {}
        for i, (name, data) in enumerate(files.items()):
            path = folder / f"{i}{Path(name).suffix}"
            path.write_bytes(data)
            path.chmod(0o644)
            paths[name] = str(path)
        stored: dict[str, str] = {}
        names = list(paths)
        for start in range(0, len(names), PATH_ACTIONS_PER_REQUEST):
            chunk = names[start : start + PATH_ACTIONS_PER_REQUEST]
            actions = [ankiconnect.store_media_file(n, path=paths[n]) for n in chunk]
            for name, outcome in zip(chunk, client.multi(actions), strict=True):
                if outcome.ok and outcome.result:
                    stored[name] = str(outcome.result)
                else:
                    logger.info("Anki did not read %s from %s: %s", name, folder, outcome.error)
        return stored
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _send_data(client: AnkiClient, files: Mapping[str, bytes]) -> dict[str, str]:
    stored: dict[str, str] = {}
    batch: list[tuple[str, ankiconnect.Action]] = []
    size = 0

    def send() -> None:
        outcomes = client.multi([action for _, action in batch])
        for (name, _), outcome in zip(batch, outcomes, strict=True):
            stored[name] = str(outcome.result) if outcome.ok and outcome.result else ""
            if not outcome.ok:
                logger.warning("Anki refused media %s: %s", name, outcome.error)

    for name, data in files.items():
        encoded = base64.b64encode(data).decode("ascii")
        if batch and size + len(encoded) > REQUEST_BYTES:
            send()
            batch, size = [], 0
        batch.append((name, ankiconnect.store_media_file(name, data_base64=encoded)))
        size += len(encoded) + len(name) + 100
    if batch:
        send()
    return stored


def _shared_dir() -> Path | None:
    """The folder media are written to for Anki to read, when it can be made and written."""
    folder = Path(settings.ANKI_MEDIA_SHARED_DIR or Path(tempfile.gettempdir()) / "anki-bridge")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK | os.X_OK):
            return None
    except OSError:
        return None
    return folder.resolve()


def _is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
