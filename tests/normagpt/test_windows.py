"""The sliding windows the ranking and the judge read a clause by (`judging.windows`): each
window's stems, a window holding the same stems as the one before it not given again."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from normagpt.judging import windows


def _every_window(events: list[tuple[int, str]], span: int) -> list[frozenset[str]]:
    """The stems of the window ending at each event, counted afresh."""
    return [
        frozenset(term for place, term in events[: end + 1] if place > at - span)
        for end, (at, _) in enumerate(events)
    ]


_EVENTS = st.lists(
    st.tuples(st.integers(0, 60), st.sampled_from(["бетон", "класс", "толщин", "слой"])),
    max_size=40,
).map(sorted)


@given(events=_EVENTS, span=st.integers(1, 12))
def test_each_distinct_run_of_windows_is_given_once(
    events: list[tuple[int, str]], span: int
) -> None:
    given_sets = [frozenset(inside) for inside in windows(events, span)]
    runs = [stems for stems, _ in itertools.groupby(_every_window(events, span))]
    assert given_sets == runs


def test_a_repeated_word_gives_no_new_window() -> None:
    # «бетон» three times within the span: the window's stems stay {бетон, класс}
    events = [(0, "бетон"), (1, "класс"), (2, "бетон"), (3, "бетон"), (4, "слой")]
    assert [dict(inside) for inside in windows(events, 5)] == [
        {"бетон": 1},
        {"бетон": 1, "класс": 1},
        {"бетон": 3, "класс": 1, "слой": 1},
    ]
