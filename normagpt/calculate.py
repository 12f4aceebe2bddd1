"""The executor's calculate steps: arithmetic on values the search steps found.

A plan step may carry `calculate` instead of keywords («20 + 5», «max(20, 1.5 * 12)»).
It is evaluated by simpleeval — numbers, + − × ÷ // % **, comparisons and a few
functions (min, max, abs, round, sqrt) only; no names, attributes, calls of anything else
or huge powers, never Python's eval — and the result is shown in the steps like a search's
summary. An expression it refuses is a step result saying why, not a failed run.

Russian decimal commas are read (`commas_read`): outside a call (or in brackets that only
group) `1,5` is 1.5. In a call, a comma with a space beside it, or a `;`, separates the
arguments, and `1,5` (a comma between two digits, no space) is a decimal comma when the
arguments are so separated: `max(20, 1,5 * 12)` is max(20, 18). A call whose arguments
could be either is refused, never guessed: `max(20,15)`, `round(2,5)`; in a call of one
argument (sqrt, abs) `sqrt(2,25)` is sqrt(2.25).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from simpleeval import DEFAULT_OPERATORS, SimpleEval

FUNCTIONS = {"min": min, "max": max, "abs": abs, "round": round, "sqrt": math.sqrt}
ONE_ARGUMENT = frozenset({"abs", "sqrt"})
DIGITS = "0123456789"


@dataclass(frozen=True)
class Calculation:
    expression: str
    result: float | None
    error: str = ""

    @property
    def summary(self) -> str:
        if self.error:
            return f"Расчёт не выполнен: «{self.expression}»: {self.error}"
        return f"Расчёт: {self.expression} = {self.result:g}"


class AmbiguousComma(ValueError):
    """A call's commas could be decimal commas or argument separators alike."""

    def __init__(self, call: str) -> None:
        super().__init__(
            f"the commas in «{call}» could be decimal commas or argument separators: "
            "separate arguments with ', ' or ';', or write decimals with a point"
        )


def expression_evaluate(expression: str) -> Calculation:
    """The value of an arithmetic `expression` (decimal commas read as `commas_read` says)."""
    text = expression.strip().replace("×", "*").replace("÷", "/").replace("−", "-")
    evaluator = SimpleEval(operators=DEFAULT_OPERATORS, functions=FUNCTIONS, names={})
    try:
        value = evaluator.eval(commas_read(text))
    except AmbiguousComma as exc:
        return Calculation(expression, None, str(exc)[:300])
    except Exception as exc:  # simpleeval's refusals and arithmetic errors alike
        return Calculation(expression, None, f"{type(exc).__name__}: {exc}"[:300])
    if isinstance(value, bool) or not isinstance(value, int | float):
        return Calculation(expression, None, "the expression gives no number")
    if isinstance(value, float) and not math.isfinite(value):
        return Calculation(expression, None, "the result is not a finite number")
    return Calculation(expression, round(float(value), 10))


@dataclass
class _Brackets:
    """One open bracket: the function it calls ('' when it only groups) and its commas."""

    name: str
    starts: int  # where the call (its function's name) or the group begins
    commas: list[int] = field(default_factory=list)  # `,` and `;` directly inside


def commas_read(text: str) -> str:
    """`text` with every comma read: a decimal comma becomes `.`, an argument separator
    (and a `;` in a call) becomes `,`. Raises AmbiguousComma where a call's cannot be told.
    """
    chars = list(text)
    stack = [_Brackets("", 0)]  # the expression itself reads like a group
    for i, char in enumerate(text):
        if char == "(":
            name = _called(text, i)
            stack.append(_Brackets(name, i - len(name) if name else i))
        elif char == ")" and len(stack) > 1:
            _settle(stack.pop(), text, chars, ends=i + 1)
        elif char in ",;":
            stack[-1].commas.append(i)
    while stack:  # unclosed brackets: read them anyway, simpleeval refuses the syntax
        _settle(stack.pop(), text, chars, ends=len(text))
    return "".join(chars)


def _settle(brackets: _Brackets, text: str, chars: list[str], *, ends: int) -> None:
    decimal = [i for i in brackets.commas if _between_digits(text, i)]
    if not brackets.name:  # grouping: a tuple means nothing here, so 1,5 is 1.5
        for i in decimal:
            chars[i] = "."
        return
    separators = [i for i in brackets.commas if i not in decimal]
    spaced = [i for i in separators if text[i] == ";" or _spaced(text, i)]
    if decimal and (
        len(spaced) < len(separators) or (not spaced and brackets.name not in ONE_ARGUMENT)
    ):
        raise AmbiguousComma(text[brackets.starts : ends])
    for i in decimal:
        chars[i] = "."
    for i in separators:
        chars[i] = ","


def _called(text: str, bracket: int) -> str:
    """The name of the function whose call opens at `bracket`, or '' (a group)."""
    end = bracket
    while end > 0 and text[end - 1].isspace():
        end -= 1
    start = end
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    name = text[start:end]
    return name if name and not name[0].isdigit() else ""


def _between_digits(text: str, i: int) -> bool:
    return (
        text[i] == "," and 0 < i < len(text) - 1 and text[i - 1] in DIGITS and text[i + 1] in DIGITS
    )


def _spaced(text: str, i: int) -> bool:
    return (i + 1 < len(text) and text[i + 1].isspace()) or (i > 0 and text[i - 1].isspace())
