"""A checked claim of an answer (`ClaimResult`, what `ClaimCheck` stores) and the answer as
a reader gets it: its unconfirmed claims marked in place, a lead line saying how many.

`normagpt.verification` makes the results; the agent's store and the pages show them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

CONFIRMED, UNCONFIRMED = "confirmed", "unconfirmed"


@dataclass
class ClaimResult:
    """One checked claim (what `ClaimCheck` stores)."""

    index: int
    origin: str
    claim: str
    verdict: str
    reason: str = ""
    reference: str = ""
    document_code: str = ""
    clause_number: str = ""
    page_number: int | None = None
    clause_id: int | None = None
    page_id: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def confirmed(self) -> bool:
        return self.verdict == CONFIRMED

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "origin": self.origin,
            "claim": self.claim,
            "verdict": self.verdict,
            "reason": self.reason,
            "reference": self.reference,
            "document": self.document_code,
            "clause": self.clause_number,
            "page": self.page_number,
            "clause_id": self.clause_id,
            "page_id": self.page_id,
            "details": self.details,
        }


def results_summary(results: list[ClaimResult]) -> str:
    """One line for the run: how many claims the norms do not confirm ('' when all hold)."""
    wrong = [r for r in results if not r.confirmed]
    if not wrong:
        return ""
    return f"{len(wrong)} из {len(results)} утверждений ответа не подтверждаются текстом пунктов"


MARK = " *[не подтверждено: {reason}]*"


def answer_marked(text: str, results: list[ClaimResult], *, lead: bool = True) -> str:
    """`text` with every unconfirmed claim marked after it and (with `lead`) `answer_lead`
    first. The claims are found in their order (each after the one before: two sentences
    citing the same clause end alike, and the same sentence may be said twice); a claim not
    found in `text` (an executor's quote) is listed after it."""
    cursor = 0
    for result in results:
        mark = "" if result.confirmed else MARK.format(reason=result.reason)
        end = _claim_end(text, result.claim, cursor)
        if end is None:
            text = f"{text}\n\n- {result.claim}{mark}" if mark else text
            continue
        text = text[:end] + mark + text[end:]
        # found before the cursor (out of order): the text the cursor points into moved
        cursor = end + len(mark) if end >= cursor else cursor + len(mark)
    first = answer_lead(results) if lead else ""
    return f"{first}\n\n{text}" if first else text


def answer_lead(results: list[ClaimResult]) -> str:
    """The answer's first line when a claim is unconfirmed: how many, or that none holds."""
    if all(r.confirmed for r in results):
        return ""
    if not any(r.confirmed for r in results):
        return (
            "**Подтверждённого ответа в нормах корпуса нет:** ни одно утверждение ответа "
            "не подтверждается текстом пунктов, на которые он ссылается (отмечены ниже)."
        )
    return f"**Не всё подтверждено нормами:** {results_summary(results)} (отмечены ниже)."


def _claim_end(text: str, claim: str, cursor: int) -> int | None:
    """Where `claim` ends in `text` (markup and spacing may differ): its first whole
    occurrence from `cursor`, else from the start; else the first of its last eight words
    and signs (a claim read from a longer line), alike; None when neither is there."""
    tokens = re.findall(r"\w+|[^\w\s]", claim)
    for part in (tokens, tokens[-8:]) if tokens else ():
        pattern = re.compile(r"[\s*_`>]*".join(re.escape(t) for t in part) + r"[*_`]*")
        found = pattern.search(text, cursor) or pattern.search(text)
        if found:
            return found.end()
    return None
