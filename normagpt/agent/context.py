"""What a node's exec gets besides its input: the model (within the run's budget) and search.

`NodeContext.ask` sends a YAML prompt, parses the reply tolerantly and validates it with
the node's schema; an invalid reply is sent back once with the validation error, and a
second invalid reply raises NodeOutputInvalid (the run then fails). All of a node's model
attempts share one NodeBudget (NORMAGPT_NODE_BUDGET), from its first call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from normagpt.client import CallRecord, LlmClient, Message, NodeBudget
from normagpt.parsing import JsonParseError, parse_json
from normagpt.prompts import prompt_load

T = TypeVar("T", bound=BaseModel)


class CapReached(Exception):
    """A cap of the run (LLM calls, tokens, time) stops it; `reason` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NodeOutputInvalid(Exception):
    """The model's output failed validation twice (after the corrective retry)."""

    def __init__(self, node: str, error: str) -> None:
        super().__init__(f"the {node}'s output was invalid twice: {error}")
        self.node, self.error = node, error


@dataclass
class Budget:
    """The run's LLM budget; counters start from what the run already spent."""

    max_calls: int
    max_tokens: int
    calls: int = 0
    tokens: int = 0

    def check(self) -> None:
        if self.calls >= self.max_calls:
            raise CapReached(f"the cap of {self.max_calls} LLM calls was reached")
        if self.tokens >= self.max_tokens:
            raise CapReached(f"the cap of {self.max_tokens} tokens was reached")


@dataclass
class NodeContext:
    llm: LlmClient
    budget: Budget
    record: Callable[[CallRecord], None]
    vision: bool
    pages_per_step: int
    headers: dict[str, str] = field(default_factory=dict)
    node_tokens: list[int] = field(default_factory=lambda: [0, 0])
    node_budget: NodeBudget | None = None  # started by the node's first call

    def chat(self, messages: list[Message], *, node: str) -> str:
        self.budget.check()
        if self.node_budget is None:
            self.node_budget = self.llm.budget_start()

        def on_call(call: CallRecord) -> None:
            self.budget.calls += 1
            self.budget.tokens += call.prompt_tokens + call.completion_tokens
            self.node_tokens[0] += call.prompt_tokens
            self.node_tokens[1] += call.completion_tokens
            self.record(call)

        def may_retry() -> bool:  # a retry is a call: counted against the caps first
            return self.budget.calls < self.budget.max_calls and (
                self.budget.tokens < self.budget.max_tokens
            )

        reply = self.llm.chat(
            messages,
            node=node,
            headers=self.headers,
            on_call=on_call,
            may_retry=may_retry,
            budget=self.node_budget,
        )
        return reply.text

    def ask(
        self,
        *,
        node: str,
        schema: type[T],
        values: dict[str, Any],
        attachments: list[dict[str, Any]] | None = None,
    ) -> T:
        """The node's validated output; one corrective retry, then NodeOutputInvalid."""
        prompt = prompt_load(node)
        text = prompt.user(**values)
        user: Message = {"role": "user", "content": text}
        if attachments:
            user = {"role": "user", "content": [{"type": "text", "text": text}, *attachments]}
        messages: list[Message] = [{"role": "system", "content": prompt.system}, user]
        error = ""
        for attempt in range(2):
            reply = self.chat(messages, node=node)
            try:
                return schema.model_validate(parse_json(reply))
            except (JsonParseError, ValidationError) as exc:
                error = validation_message(exc)
            if attempt == 0:
                messages += [
                    {"role": "assistant", "content": reply[:4000]},
                    {
                        "role": "user",
                        "content": (
                            f"Ответ не прошёл проверку: {error}. Верни только исправленный "
                            "JSON-объект по схеме из инструкции, без пояснений."
                        ),
                    },
                ]
        raise NodeOutputInvalid(node, error)


def validation_message(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        parts = [
            f"{'.'.join(str(p) for p in e['loc']) or 'object'}: {e['msg']}"
            for e in exc.errors(include_url=False)[:5]
        ]
        return "; ".join(parts)
    return str(exc)
