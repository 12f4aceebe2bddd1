"""The calculate steps read Russian decimal commas, in calls too, and refuse to guess.

`max(20, 1,5 * 12)` is max(20, 18) = 20 (it was read as max(20, 1, 60) = 60); a call whose
commas could be either decimals or separators (`max(20,15)`) is refused naming the
expression and the rule; one-argument functions read `sqrt(2,25)` as sqrt(2.25).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from normagpt.calculate import expression_evaluate

# The package's autouse fixtures (media dir, settings) do not change between examples.
PROPERTY = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
RULE = "separate arguments with ', ' or ';', or write decimals with a point"


def value(expression: str) -> float | None:
    calculation = expression_evaluate(expression)
    assert not calculation.error, calculation.error
    return calculation.result


def refusal(expression: str) -> str:
    calculation = expression_evaluate(expression)
    assert calculation.result is None, f"{expression} gave {calculation.result}"
    return calculation.error


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("max(20, 1,5 * 12)", 20),  # the case: was 60
        ("max(20, 2,5 * 12)", 30),
        ("max(20; 1,5 * 12)", 20),
        ("max(1,5;2)", 2),
        ("min(20 , 1,5)", 1.5),
        ("1,5 * 2", 3),  # outside calls, as before
        ("(1,5 + 2) * 2", 7),  # brackets that only group
        ("max((1,5), 1)", 1.5),
        ("sqrt(2,25)", 1.5),  # one argument: a decimal comma
        ("abs(-2,5)", 2.5),
        ("max(20, sqrt(2,25))", 20),
        ("max(2,sqrt(4))", 2),  # a tight comma that cannot be a decimal one separates
        ("round(2.567, 2)", 2.57),
        ("20 + 5", 25),
        ("max(20, 1.5 * 12)", 20),
        ("12 × 2 − 3 ÷ 3", 23),
    ],
)
def test_decimal_commas_are_read(expression: str, expected: float) -> None:
    assert value(expression) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("expression", "call"),
    [
        ("max(20,15)", "max(20,15)"),
        ("round(2,5)", "round(2,5)"),
        ("10 + min(1,5)", "min(1,5)"),
        ("max(1,5,sqrt(4))", "max(1,5,sqrt(4))"),  # separated tightly elsewhere: unclear
    ],
)
def test_ambiguous_commas_are_refused_naming_the_call_and_the_rule(
    expression: str, call: str
) -> None:
    error = refusal(expression)
    assert f"«{call}»" in error
    assert RULE in error
    assert expression_evaluate(expression).summary.startswith(
        f"Расчёт не выполнен: «{expression}»: the commas in «{call}»"
    )


def ru(number: Decimal | int) -> str:
    return format(number, "f").replace(".", ",")


decimals = st.decimals(min_value=-1000, max_value=1000, places=3)


@PROPERTY
@given(a=decimals, b=decimals)
def test_max_with_russian_decimals_and_comma_space_separators(a: Decimal, b: Decimal) -> None:
    assert value(f"max({ru(a)}, {ru(b)} * 2)") == pytest.approx(max(float(a), float(b) * 2))
    assert value(f"min({ru(a)}; {ru(b)})") == pytest.approx(min(float(a), float(b)))


@PROPERTY
@given(
    name=st.sampled_from(["min", "max", "round"]),
    x=st.integers(min_value=0, max_value=999),
    y=st.integers(min_value=0, max_value=999),
)
def test_digit_comma_digit_alone_in_a_call_is_never_guessed(name: str, x: int, y: int) -> None:
    assert RULE in refusal(f"{name}({x},{y})")


# An expression tree: a number, (name, [arguments]) or (left, operator, right).
numbers = st.one_of(
    st.integers(min_value=0, max_value=999), st.decimals(min_value=0, max_value=999, places=2)
)


def _calls(children: Any) -> Any:
    pairs = st.tuples(st.sampled_from(["min", "max"]), st.lists(children, min_size=2, max_size=3))
    single = st.tuples(st.sampled_from(["abs", "sqrt"]), st.lists(children, min_size=1, max_size=1))
    operation = st.tuples(children, st.sampled_from(["+", "-", "*"]), children)
    return pairs | single | operation


trees = st.recursive(numbers, _calls, max_leaves=8)


def render(tree: Any, separators: Any) -> str:
    """The tree in Russian notation: decimal commas, `, ` or `; ` between arguments."""
    if isinstance(tree, int | Decimal):
        return ru(tree)
    if len(tree) == 3:
        left, operator, right = tree
        return f"({render(left, separators)} {operator} {render(right, separators)})"
    name, arguments = tree
    separator = separators.draw(st.sampled_from([", ", "; "]))
    return f"{name}({separator.join(render(a, separators) for a in arguments)})"


def evaluate(tree: Any) -> float:
    if isinstance(tree, int | Decimal):
        return float(tree)
    if len(tree) == 3:
        left, operator, right = evaluate(tree[0]), tree[1], evaluate(tree[2])
        return {"+": left + right, "-": left - right, "*": left * right}[operator]
    name, arguments = tree
    values = [evaluate(a) for a in arguments]
    if name in ("abs", "sqrt"):
        return abs(values[0]) if name == "abs" else math.sqrt(values[0])
    return min(values) if name == "min" else max(values)


@PROPERTY
@given(tree=trees, data=st.data())
def test_any_expression_in_russian_notation_has_its_value(tree: Any, data: Any) -> None:
    text = render(tree, data)
    try:
        expected: float | None = round(evaluate(tree), 10)
    except ValueError:  # sqrt of a negative number
        expected = None
    calculation = expression_evaluate(text)
    if expected is None:
        assert calculation.result is None
        assert "ValueError" in calculation.error
    else:
        assert not calculation.error, f"{text}: {calculation.error}"
        assert calculation.result == pytest.approx(expected, rel=1e-9, abs=1e-9)
