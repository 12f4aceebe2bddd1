"""The process's morphology keeps each word's parses: questions repeat their words, and a
parse costs about 0.1 ms."""

from __future__ import annotations

from typing import Any

import pytest

from core import russian


@pytest.fixture
def analyzer(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A fresh analyzer of the process's kind, counting the dictionary's look-ups."""
    import pymorphy3

    looked_up: list[str] = []
    original = pymorphy3.MorphAnalyzer.parse

    def counted(self: Any, word: str) -> Any:
        looked_up.append(word)
        return original(self, word)

    monkeypatch.setattr(pymorphy3.MorphAnalyzer, "parse", counted)
    russian.morphology.cache_clear()
    yield russian.morphology(), looked_up
    russian.morphology.cache_clear()


def test_a_word_is_looked_up_once(analyzer: Any) -> None:
    morph, looked_up = analyzer
    first = morph.parse("стали")
    again = morph.parse("стали")
    assert looked_up == ["стали"]
    assert again == first
    assert {p.normal_form for p in first} >= {"стать", "сталь"}


def test_each_call_gets_its_own_list(analyzer: Any) -> None:
    morph, _ = analyzer
    morph.parse("высота").clear()
    assert morph.parse("высота")[0].normal_form == "высота"
    assert morph.tag("высота")  # the analyzer's other readers use the kept parses too
