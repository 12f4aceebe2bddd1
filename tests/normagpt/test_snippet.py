"""normagpt.parsing.snippet: the piece of a clause a search hit shows."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from normagpt.parsing import search_terms, snippet

FILLER = "Требования настоящего раздела распространяются на здания всех классов. "


def test_a_short_text_is_shown_whole_when_the_terms_are_near_its_start() -> None:
    text = "5.3 Толщину защитного слоя бетона принимают не менее 20 мм."
    assert snippet(text, search_terms(["защитный слой бетона"])) == text


def test_a_short_text_starts_a_quarter_width_before_its_first_term() -> None:
    text = FILLER + "Толщину защитного слоя бетона принимают не менее 20 мм."
    assert len(text) < 240
    shown = snippet(text, search_terms(["защитный слой бетона"]))
    first = text.lower().find("защитн")
    assert shown == "…" + text[first - 60 :]


def test_whitespace_of_every_kind_reads_as_one_space() -> None:
    text = "Толщину\tзащитного\n\nслоя\u00a0бетона  принимают   не менее 20 мм."
    shown = snippet(text, search_terms(["защитный слой"]))
    assert shown == "Толщину защитного слоя бетона принимают не менее 20 мм."


def test_a_long_text_shows_the_window_holding_most_terms() -> None:
    lone = "Слой утеплителя защищают от увлажнения. "
    together = "Защитный слой бетона для арматуры фундаментов принимают не менее 40 мм. "
    text = lone + FILLER * 6 + together + FILLER * 6
    shown = snippet(text, search_terms(["защитный слой бетона арматуры"]), width=120)
    assert shown.startswith("…")
    assert shown.endswith("…")
    assert "Защитный слой бетона для арматуры" in shown
    assert "утеплителя" not in shown


def test_no_term_found_shows_the_start() -> None:
    text = FILLER * 5
    shown = snippet(text, search_terms(["вентиляция"]), width=100)
    assert shown == " ".join(text.split())[:100] + "…"


WORDS = ["защитного", "слоя", "бетона", "арматуры", "толщину", "принимают", "не", "менее", "мм.",
         "Защитный", "СЛОЙ", "фундаментов", "в", "зданиях", "20", "ёмкостей"]  # fmt: skip


def _window_of_most(text: str, terms: list[str], width: int) -> str:
    """The snippet by its definition: of the windows starting where a left-to-right scan
    finds a term, the one wholly holding the most terms; the earliest of equals."""
    flat = " ".join(text.split())
    low = flat.lower().replace("ё", "е")
    found = {t: [i for i in range(len(low)) if low.startswith(t, i)] for t in dict.fromkeys(terms)}
    starts = []
    for term, at in found.items():
        after = -1
        for i in at:
            if i >= after:
                starts.append(i)
                after = i + len(term)
    if not starts:
        return flat[:width] + ("…" if width < len(flat) else "")
    if len(flat) <= width:
        start = max(0, min(starts) - width // 4)
        return ("…" if start else "") + flat[start:]

    def held(p: int) -> int:
        return sum(any(p <= i and i + len(t) <= p + width for i in at) for t, at in found.items())

    best = max(sorted(starts), key=lambda p: (held(p), -p))
    start = max(0, best - width // 4)
    return (
        ("…" if start else "")
        + flat[start : start + width]
        + ("…" if start + width < len(flat) else "")
    )


@given(
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=60),
    keywords=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    width=st.integers(min_value=20, max_value=240),
)
@settings(max_examples=300, deadline=None)
def test_the_window_is_the_earliest_holding_the_most_terms(
    words: list[str], keywords: list[str], width: int
) -> None:
    text, terms = " ".join(words), search_terms(keywords)
    assert snippet(text, terms, width) == _window_of_most(text, terms, width)
