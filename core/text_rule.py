"""The one rule for text that reaches the database: no NUL, no lone surrogate.

PostgreSQL refuses a NUL (U+0000) in any text column or comparison (`DataError`, a 500 in
whatever filters on it), and a lone surrogate (U+D800–U+DFFF) cannot be encoded at all.
Every entry point checks its input here before any query: the REST body parser
(`core.parsers`), MCP tool, prompt, completion and resource arguments
(`core.mcp_arguments`, `core.mcp_errors`, `core.mcp_content`), the NormaGPT pages'
forms. Django's text form fields refuse a NUL themselves (the admin), and a form body
cannot carry a lone surrogate (invalid UTF-8 is decoded as U+FFFD); a JSON field decodes
the escapes `\\u0000` and `\\ud800`, so the admin's JSON fields check here
(`core.admin.TextRuleJSONField`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.exceptions import InvalidInput

NUL_TEXT = "text contains a NUL character (\\u0000)"
SURROGATE_TEXT = "text contains a lone surrogate (\\ud800–\\udfff)"


@dataclass(frozen=True)
class TextFault:
    """Where a string breaks the rule (keys and list positions from the top), which rule
    (`text_nul`, `text_surrogate`) and the sentence that says so."""

    where: tuple[Any, ...]
    rule: str
    message: str

    @property
    def loc(self) -> tuple[str | int, ...]:
        """`where` safe to print: a key that breaks the rule is written with escapes."""
        return tuple(printable(part) if isinstance(part, str) else part for part in self.where)

    @property
    def field(self) -> str:
        return ".".join(str(part) for part in self.loc) or "text"


def text_fault(data: Any) -> TextFault | None:
    """The first key or string value in `data` (JSON: dicts, lists, strings) that holds a
    NUL or a lone surrogate, breadth first; None when all text is fine."""
    pending: list[tuple[tuple[Any, ...], Any]] = [((), data)]
    while pending:
        where, item = pending.pop(0)
        if isinstance(item, dict):
            for key, value in item.items():
                pending += [((*where, key), key), ((*where, key), value)]
        elif isinstance(item, list | tuple):
            pending.extend(((*where, index), value) for index, value in enumerate(item))
        elif isinstance(item, str):
            rule = text_rule_broken(item)
            if rule is not None:
                return TextFault(where, rule, NUL_TEXT if rule == "text_nul" else SURROGATE_TEXT)
    return None


def text_rule_broken(text: str) -> str | None:
    """`text_nul` or `text_surrogate` when `text` breaks the rule, else None."""
    if "\x00" in text:
        return "text_nul"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "text_surrogate"
    return None


def printable(text: str) -> str:
    """`text` as it is, or with JSON escapes when it breaks the rule (a NUL garbles a
    message; a lone surrogate cannot even be sent)."""
    return json.dumps(text)[1:-1] if text_rule_broken(text) else text


def text_check(data: Any) -> None:
    """Raise `InvalidInput` naming the field (`extra`: field, rule) when `data` breaks the
    rule; for a form's fields (a mapping of names to texts or lists of texts)."""
    fault = text_fault(data)
    if fault is not None:
        name = str(fault.loc[0]) if fault.where else "text"
        raise InvalidInput(f"{name}: {fault.message}", field=name, extra={"rule": fault.rule})
