"""The executor's calculate steps: arithmetic on values the search steps found.

A plan step may carry `calculate` instead of keywords («20 + 5», «max(20, 1.5 * 12)»).
It is evaluated by simpleeval — numbers, + − × ÷ // % **, comparisons and a few
functions (min, max, abs, round, sqrt) only; no names, attributes, calls of anything else
or huge powers, never Python's eval — and the result is shown in the steps like a search's
summary. An expression it refuses is a step result saying why, not a failed run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simpleeval import DEFAULT_OPERATORS, SimpleEval

FUNCTIONS = {"min": min, "max": max, "abs": abs, "round": round, "sqrt": math.sqrt}


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


def expression_evaluate(expression: str) -> Calculation:
    """The value of an arithmetic `expression` (a comma reads as a decimal point)."""
    text = expression.strip().replace("×", "*").replace("÷", "/").replace("−", "-")
    text = text.replace(",", ".") if "(" not in text else text
    evaluator = SimpleEval(operators=DEFAULT_OPERATORS, functions=FUNCTIONS, names={})
    try:
        value = evaluator.eval(text)
    except Exception as exc:  # simpleeval's refusals and arithmetic errors alike
        return Calculation(expression, None, f"{type(exc).__name__}: {exc}"[:300])
    if isinstance(value, bool) or not isinstance(value, int | float):
        return Calculation(expression, None, "the expression gives no number")
    if isinstance(value, float) and not math.isfinite(value):
        return Calculation(expression, None, "the result is not a finite number")
    return Calculation(expression, round(float(value), 10))
