"""The only module that talks to Anki: AnkiConnect, protocol version 6, over httpx.

Every request carries `"version": 6`, so every answer is the envelope
`{"result": …, "error": …}` (HTTP 200 even for errors); `multi` runs several actions in one
request and answers one envelope per action, which is how this bridge saves round trips
(AnkiConnect runs one request at a time on Anki's main thread). Anki's error texts lose
the invisible U+2068/U+2069 isolation marks its translations wrap values in.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import httpx
from django.conf import settings

from anki_bridge.exceptions import AnkiError, AnkiUnavailable

logger = logging.getLogger(__name__)

PROTOCOL = 6
CONNECT_TIMEOUT = 3.0
_ISOLATION_MARKS = str.maketrans("", "", "\u2068\u2069")


def clean_error(text: Any) -> str:
    """Anki's error text without the invisible isolation marks (U+2068/U+2069)."""
    return str(text).translate(_ISOLATION_MARKS).strip()


def action(name: str, **params: Any) -> dict[str, Any]:
    """One action of a `multi` request."""
    return {"action": name, "params": params, "version": PROTOCOL}


@dataclass(frozen=True)
class Outcome:
    """The answer to one action: its result, or Anki's (cleaned) error text."""

    result: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class AnkiClient:
    """A connection to AnkiConnect; use as a context manager (`with AnkiClient() as anki`)."""

    def __init__(
        self,
        *,
        url: str | None = None,
        key: str | None = None,
        timeout: float | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = (url or settings.ANKI_CONNECT_URL).rstrip("/")
        self.key = settings.ANKI_CONNECT_KEY if key is None else key
        self.timeout = float(timeout or settings.ANKI_CONNECT_TIMEOUT)
        self.requests_made = 0
        self._http = httpx.Client(
            timeout=httpx.Timeout(self.timeout, connect=min(CONNECT_TIMEOUT, self.timeout)),
            transport=transport,
            headers={"Content-Type": "application/json"},
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
        self._http.close()

    def invoke(self, name: str, **params: Any) -> Any:
        """The result of one action; AnkiError with Anki's text when Anki refuses it."""
        outcome = self._outcome(name, self._post(action(name, **params)))
        if not outcome.ok:
            raise AnkiError(f"Anki refused {name}: {outcome.error}", extra={"action": name})
        return outcome.result

    def multi(self, actions: Sequence[dict[str, Any]]) -> list[Outcome]:
        """Run `actions` in one request; one Outcome per action, in order."""
        if not actions:
            return []
        # AnkiConnect checks the key of every action inside `multi` too.
        keyed = [{**a, "key": self.key} for a in actions] if self.key else list(actions)
        results = self.invoke("multi", actions=keyed)
        if not isinstance(results, list) or len(results) != len(actions):
            raise AnkiError(
                f"Anki answered {len(results) if isinstance(results, list) else 'no'} results "
                f"to a multi request of {len(actions)} actions"
            )
        return [self._outcome(a["action"], r) for a, r in zip(actions, results, strict=True)]

    def _post(self, body: dict[str, Any]) -> Any:
        if self.key:
            body = {**body, "key": self.key}
        self.requests_made += 1
        try:
            response = self._http.post(self.url, content=json.dumps(body).encode("utf-8"))
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise AnkiUnavailable(
                f"Anki is not reachable at {self.url}: is Anki open with AnkiConnect installed?"
            ) from exc
        except httpx.TimeoutException as exc:
            raise AnkiUnavailable(
                f"Anki did not answer within {self.timeout:g} s at {self.url}: "
                "is a dialog open in Anki, or is it busy syncing?"
            ) from exc
        except httpx.TransportError as exc:
            raise AnkiUnavailable(
                f"Anki dropped the connection at {self.url} ({type(exc).__name__}): "
                "is Anki open with AnkiConnect installed?"
            ) from exc
        if response.status_code != 200:
            raise AnkiError(
                f"Anki answered HTTP {response.status_code} at {self.url}: "
                "is ANKI_CONNECT_URL the address of AnkiConnect?"
            )
        try:
            return response.json()
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
        if "api key" in error.lower():
            raise AnkiError(
                f"Anki refused the request: {error} "
                "(set ANKI_CONNECT_KEY to the key AnkiConnect is configured with)",
                extra={"action": name},
            )
        return Outcome(error=error)
