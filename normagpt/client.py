"""The one module that talks to the language model: any OpenAI-compatible chat server.

OpenAI, vLLM, Ollama…: `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `NORMAGPT_MODEL`. The openai
SDK sends through core.http_shared (`UpstreamTransport`): each request has a total deadline (the
body included: a trickling server is cut), a capped answer, the shared SSL context and a
kept-alive connection. Retries happen here, once: the SDK's and core's are off. 429, 5xx,
timeouts and dropped connections are retried a bounded number of times with exponential
backoff (a Retry-After header is honoured, capped); every attempt, failed or not, is
reported to `on_call` with its tokens so the caller can record it.

All the attempts of one node share one `NodeBudget` (NORMAGPT_NODE_BUDGET seconds): each
attempt's deadline is NORMAGPT_LLM_TIMEOUT or what is left of the budget, whichever is
less, and no retry starts, nor a backoff sleeps, past it. The SDK is imported on first
use, off the MCP server's start-up.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx
from django.conf import settings

from core.http import Failure, FailureKind, Upstream, retry_after
from core.http_shared import UpstreamTransport, shared_client
from normagpt.exceptions import LLM_SERVICE, LlmNotConfigured, LlmUnavailable

if TYPE_CHECKING:
    import openai

logger = logging.getLogger(__name__)

ANSWER_MAX_BYTES = 8 * 1024 * 1024  # a chat completion is text: far below
RETRY_AFTER_MAX = 30.0
MIN_ATTEMPT = 0.1  # seconds: an attempt given less would only time out
RETRIED_FAILURES = (FailureKind.TIMEOUT, FailureKind.CONNECT, FailureKind.DROPPED)
Message = dict[str, Any]


NOT_CONFIGURED = (
    "the language model is not configured: set OPENAI_BASE_URL (vLLM, Ollama, …) "
    "or OPENAI_API_KEY (the OpenAI API)"
)


def llm_configured() -> bool:
    """Whether a language model is set (a run could not work without one)."""
    return bool(settings.OPENAI_BASE_URL or settings.OPENAI_API_KEY)


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


@dataclass(frozen=True)
class NodeBudget:
    """The time one node's model attempts share: `seconds`, ending at `ends` (monotonic)."""

    seconds: float
    ends: float

    @classmethod
    def start(cls, seconds: float) -> NodeBudget:
        return cls(seconds, time.monotonic() + seconds)

    def left(self) -> float:
        return self.ends - time.monotonic()

    @property
    def spent_message(self) -> str:
        return f"the node's budget of {seconds_text(self.seconds)} s was spent"


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
        node_budget: float = math.inf,  # seconds for all of one node's attempts
    ) -> None:
        if not base_url and not api_key:
            raise LlmNotConfigured(NOT_CONFIGURED)
        import openai  # heavy: kept off the server's start-up

        self.model = model
        self.timeout = timeout
        self.node_budget = node_budget
        self.retries = retries
        self.backoff = backoff
        self.json_mode = json_mode
        client = shared_client(upstream(timeout=timeout))
        transport = UpstreamTransport(client, timeout_is_deadline=True)
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
            node_budget=settings.NORMAGPT_NODE_BUDGET,
        )

    def budget_start(self) -> NodeBudget:
        """A node's budget for all its attempts, from now."""
        return NodeBudget.start(self.node_budget)

    def chat(
        self,
        messages: list[Message],
        *,
        node: str,
        headers: dict[str, str] | None = None,
        on_call: Callable[[CallRecord], None] | None = None,
        may_retry: Callable[[], bool] | None = None,
        budget: NodeBudget | None = None,
    ) -> LlmReply:
        """The model's reply to `messages`; LlmUnavailable once the retries are spent, when
        `may_retry` (the run's caps, asked before each retry) says no more, or when the
        node's `budget` (shared by the node's calls; a fresh one if None) is spent."""
        import openai

        budget = budget or self.budget_start()
        attempt = 0
        while True:
            limit = min(self.timeout, budget.left())
            if limit < MIN_ATTEMPT:  # the node's earlier call spent it
                raise LlmUnavailable(
                    f"the model server was not asked for the {node}: {budget.spent_message}"
                )
            started = time.monotonic()
            try:
                reply = self._once(messages, node=node, headers=headers or {}, timeout=limit)
            except openai.APIError as exc:
                record = CallRecord(node, self.model, ok=False, error=describe(exc)[:500])
                if on_call is not None:
                    on_call(_timed(record, started))
                delay = self._retry_delay(
                    exc, attempt, node=node, budget=budget, may_retry=may_retry
                )
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

    def _retry_delay(
        self,
        exc: openai.APIError,
        attempt: int,
        *,
        node: str,
        budget: NodeBudget,
        may_retry: Callable[[], bool] | None,
    ) -> float:
        """Seconds to wait before the next attempt; LlmUnavailable when there is none."""
        delay = self._delay(exc, attempt)
        stop = ""
        if retryable(exc) and attempt < self.retries:
            if may_retry is not None and not may_retry():
                stop = "the run's LLM budget is spent"
            elif budget.left() - delay < MIN_ATTEMPT:
                stop = budget.spent_message
            else:
                return delay
        after = f"after {attempt + 1} attempts" if attempt else ""
        note = ", ".join(filter(None, [after, stop]))
        raise LlmUnavailable(
            f"the model server failed for the {node}: {describe(exc)}"
            + (f" ({note})" if note else "")
        ) from exc

    def _once(
        self, messages: list[Message], *, node: str, headers: dict[str, str], timeout: float
    ) -> LlmReply:
        """One attempt; `timeout` is its total deadline (core.http cuts a trickling body)."""
        extra: dict[str, Any] = {}
        if self.json_mode:
            extra["response_format"] = {"type": "json_object"}
        try:
            completion = self._client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                temperature=0,
                extra_headers={"X-Normagpt-Node": node, **headers},
                timeout=timeout,
                **extra,
            )
            usage = completion.usage
            text = completion.choices[0].message.content if completion.choices else None
            return LlmReply(
                text=text or "",
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
            )
        # A body that is no chat completion: bytes no codec reads, not JSON, the wrong shape.
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            raise LlmUnavailable(
                f"the model server answered the {node} with something that is not a chat "
                f"completion ({type(exc).__name__}: {str(exc)[:200]})"
            ) from None

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
        return f"the request timed out after {seconds_text(failure.upstream.deadline)} s"
    if failure.kind is FailureKind.CONNECT:
        return f"could not connect to the model server ({failure.detail[:200]})"
    if failure.kind is FailureKind.DROPPED:
        return f"the model server dropped the connection ({failure.detail[:200]})"
    return failure.message


def seconds_text(seconds: float) -> str:
    """Seconds for a message: `150`, `2.5` (a deadline cut by a budget is not 2.99871)."""
    return f"{round(seconds, 1):g}"
