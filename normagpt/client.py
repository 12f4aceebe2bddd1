"""The one module that talks to the language model: any OpenAI-compatible chat server.

OpenAI, vLLM, Ollama…: `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `NORMAGPT_MODEL`. The openai
SDK sends through core.http (`UpstreamTransport`): each request has a total deadline of
NORMAGPT_LLM_TIMEOUT seconds, a capped answer, the shared SSL context and a kept-alive
connection. Retries happen here, once: the SDK's and core's are off. 429, 5xx, timeouts
and dropped connections are retried a bounded number of times with exponential backoff (a
Retry-After header is honoured, capped); every attempt, failed or not, is reported to
`on_call` with its tokens so the caller can record it. The SDK is imported on first use,
off the MCP server's start-up.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx
from django.conf import settings

from core.http import Failure, FailureKind, Upstream, UpstreamTransport, retry_after, shared_client
from normagpt.exceptions import LLM_SERVICE, LlmNotConfigured, LlmUnavailable

if TYPE_CHECKING:
    import openai

logger = logging.getLogger(__name__)

ANSWER_MAX_BYTES = 8 * 1024 * 1024  # a chat completion is text: far below
RETRY_AFTER_MAX = 30.0
RETRIED_FAILURES = (FailureKind.TIMEOUT, FailureKind.CONNECT, FailureKind.DROPPED)
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


class TransportFailed(Exception):
    """core.http's failure of one request, carried through the SDK (as `__cause__`)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def upstream(*, timeout: float) -> Upstream:
    """The model server's policy: one deadline per request, a cap, no retries (done here)."""
    return Upstream(
        service=LLM_SERVICE,
        deadline=timeout,
        max_body_bytes=ANSWER_MAX_BYTES,
        max_redirects=3,
        retries=0,
        error=TransportFailed,
    )


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
        import openai  # heavy: kept off the server's start-up

        self.model = model
        self.retries = retries
        self.backoff = backoff
        self.json_mode = json_mode
        transport = UpstreamTransport(shared_client(upstream(timeout=timeout)))
        self._client = openai.OpenAI(
            base_url=base_url or None,
            api_key=api_key or "unused",  # local servers accept any key
            timeout=timeout,
            max_retries=0,  # retried here, where every attempt is counted
            http_client=httpx.Client(transport=transport, trust_env=False),
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
        may_retry: Callable[[], bool] | None = None,
    ) -> LlmReply:
        """The model's reply to `messages`; LlmUnavailable once the retries are spent, or
        when `may_retry` (the caller's budget, asked before each retry) says no more."""
        import openai

        attempt = 0
        while True:
            started = time.monotonic()
            try:
                reply = self._once(messages, node=node, headers=headers or {})
            except openai.APIError as exc:
                record = CallRecord(node, self.model, ok=False, error=describe(exc)[:500])
                if on_call is not None:
                    on_call(_timed(record, started))
                spent = may_retry is not None and not may_retry()
                if not retryable(exc) or attempt >= self.retries or spent:
                    after = f"after {attempt + 1} attempts" if attempt else ""
                    if spent and retryable(exc) and attempt < self.retries:
                        after = ", ".join(filter(None, [after, "the run's LLM budget is spent"]))
                    raise LlmUnavailable(
                        f"the model server failed for the {node}: {describe(exc)}"
                        + (f" ({after})" if after else "")
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
        asked = retry_after(response.headers) if response is not None else None
        if asked is not None:
            delay = max(delay, min(asked, RETRY_AFTER_MAX))
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


def _transport_failure(exc: BaseException) -> Failure | None:
    cause = exc.__cause__
    return cause.failure if isinstance(cause, TransportFailed) else None


def retryable(exc: openai.APIError) -> bool:
    """429, 5xx, timeouts and connection failures are worth another attempt."""
    import openai

    failure = _transport_failure(exc)
    if failure is not None:
        return failure.kind in RETRIED_FAILURES
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return False


def describe(exc: openai.APIError) -> str:
    import openai

    failure = _transport_failure(exc)
    if failure is not None:
        return _failure_text(failure)
    if isinstance(exc, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(exc, openai.APIConnectionError):
        return "could not connect to the model server"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {str(exc.message)[:200]}"
    return str(exc)[:200]


def _failure_text(failure: Failure) -> str:
    if failure.kind is FailureKind.TIMEOUT:
        return f"the request timed out after {failure.upstream.deadline:g} s"
    if failure.kind is FailureKind.CONNECT:
        return f"could not connect to the model server ({failure.detail[:200]})"
    if failure.kind is FailureKind.DROPPED:
        return f"the model server dropped the connection ({failure.detail[:200]})"
    return failure.message
