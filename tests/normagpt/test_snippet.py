"""normagpt.parsing.snippet: the piece of a clause a search hit shows."""

from __future__ import annotations

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
