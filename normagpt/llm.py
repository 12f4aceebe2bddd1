"""The one module that talks to the language model: any OpenAI-compatible chat server.

OpenAI, vLLM, Ollama…: `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `NORMAGPT_MODEL`. Each request
has a timeout; 429, 5xx, timeouts and dropped connections are retried a bounded number of
times with exponential backoff (a Retry-After header is honoured, capped); every attempt,
failed or not, is reported to `on_call` with its tokens so the caller can record it.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import openai
from django.conf import settings

from normagpt.exceptions import LlmNotConfigured, LlmUnavailable

logger = logging.getLogger(__name__)

RETRY_AFTER_MAX = 30.0
Message = dict[str, Any]


@dataclass(frozen=True)
class CallRecord:
    """One attempt: what the caller records (tokens are 0 for a failed attempt)."""

    node: str
    model: str
    ok: bool
    prompt_tokens: int = 0
    completion_tokens: int = 0
    duration: float = 0.0
    error: str = ""


@dataclass(frozen=True)
class LlmReply:
    text: str
    prompt_tokens: int
    completion_tokens: int


class LlmClient:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        timeout: float,
        retries: int,
        backoff: float,
        json_mode: bool,
    ) -> None:
        if not base_url and not api_key:
            raise LlmNotConfigured(
                "the language model is not configured: set OPENAI_BASE_URL (vLLM, Ollama, …) "
                "or OPENAI_API_KEY (the OpenAI API)"
            )
        self.model = model
        self.retries = retries
        self.backoff = backoff
        self.json_mode = json_mode
        self._client = openai.OpenAI(
            base_url=base_url or None,
            api_key=api_key or "unused",  # local servers accept any key
            timeout=timeout,
            max_retries=0,  # retried here, where every attempt is counted
        )

    @classmethod
    def from_settings(cls) -> LlmClient:
        return cls(
            base_url=settings.OPENAI_BASE_URL,
            api_key=settings.OPENAI_API_KEY,
            model=settings.NORMAGPT_MODEL,
            timeout=settings.NORMAGPT_LLM_TIMEOUT,
            retries=settings.NORMAGPT_LLM_RETRIES,
            backoff=settings.NORMAGPT_LLM_BACKOFF,
            json_mode=settings.NORMAGPT_LLM_JSON_MODE,
        )

    def chat(
        self,
        messages: list[Message],
        *,
        node: str,
        headers: dict[str, str] | None = None,
        on_call: Callable[[CallRecord], None] | None = None,
    ) -> LlmReply:
        """The model's reply to `messages`; LlmUnavailable once the retries are spent."""
        attempt = 0
        while True:
            started = time.monotonic()
            try:
                reply = self._once(messages, node=node, headers=headers or {})
            except openai.APIError as exc:
                record = CallRecord(node, self.model, ok=False, error=describe(exc)[:500])
                if on_call is not None:
                    on_call(_timed(record, started))
                if not retryable(exc) or attempt >= self.retries:
                    raise LlmUnavailable(
                        f"the model server failed for the {node}: {describe(exc)}"
                        + (f" (after {attempt + 1} attempts)" if attempt else "")
                    ) from exc
                delay = self._delay(exc, attempt)
                logger.warning("LLM %s: %s; retrying in %.1f s", node, describe(exc), delay)
                time.sleep(delay)
                attempt += 1
                continue
            if on_call is not None:
                record = CallRecord(
                    node, self.model, True, reply.prompt_tokens, reply.completion_tokens
                )
                on_call(_timed(record, started))
            return reply

    def _once(self, messages: list[Message], *, node: str, headers: dict[str, str]) -> LlmReply:
        extra: dict[str, Any] = {}
        if self.json_mode:
            extra["response_format"] = {"type": "json_object"}
        completion = self._client.chat.completions.create(
            model=self.model,
            messages=messages,  # type: ignore[arg-type]
            temperature=0,
            extra_headers={"X-Normagpt-Node": node, **headers},
            **extra,
        )
        usage = completion.usage
        text = completion.choices[0].message.content if completion.choices else None
        return LlmReply(
            text=text or "",
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
        )

    def _delay(self, exc: openai.APIError, attempt: int) -> float:
        delay = self.backoff * (2**attempt)
        response = getattr(exc, "response", None)
        header = response.headers.get("retry-after") if response is not None else None
        if header:
            with contextlib.suppress(ValueError):
                delay = max(delay, min(float(header), RETRY_AFTER_MAX))
        return delay


def _timed(record: CallRecord, started: float) -> CallRecord:
    return CallRecord(
        record.node,
        record.model,
        record.ok,
        record.prompt_tokens,
        record.completion_tokens,
        time.monotonic() - started,
        record.error,
    )


def retryable(exc: openai.APIError) -> bool:
    """429, 5xx, timeouts and connection failures are worth another attempt."""
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return False


def describe(exc: openai.APIError) -> str:
    if isinstance(exc, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(exc, openai.APIConnectionError):
        return "could not connect to the model server"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {str(exc.message)[:200]}"
    return str(exc)[:200]
