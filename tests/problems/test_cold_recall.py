"""Cold recall on a site whose search matches words: the stand-in behaves as SEARCH.md says,
the query is repaired before phrases are made, and damaged queries find their problem
with an empty database."""

from __future__ import annotations

import random

import pytest

from bench.damage import damage_kept, holds_every
from problems import fuzzy
from problems.matching import distinctive_phrases
from problems.models import Problem
from problems.parsing import parse_problem_block, parse_search_page
from problems.repair import phrase_whole, phrases_build, words_repair
from problems.subjects import Site
from tests.problems.blocks import block
from tests.problems.conftest import real_items, unique_real
from tests.problems.fake_site import FakeSite

MATH = Site("math", "ege")
BASE = "https://math-ege.sdamgia.ru"
TRIANGLE = "В треугольнике ABC угол C равен 90°, высота CH равна 8, BH = 4. Найдите тангенс A."
DAMAGED = "В треугоьлнике ABC уг0л C равeн 90°, высотa CH рaвна 8, BH = 4. Найдитe тангенс A."


def texts(words: list) -> list[str]:  # type: ignore[type-arg]
    return [w.text for w in words]


@pytest.mark.parametrize(
    ("damaged", "repaired"),
    [
        ("pавнa", ["равна"]),  # Latin look-alikes
        ("уг0л 6ольший", ["угол", "больший"]),  # digits inside words
        ("ll0 и з0", ["110", "и", "30"]),  # letters inside numbers
        ("изоставшихся", ["из", "оставшихся"]),  # merged words
        ("вточке", ["в", "точке"]),
        ("уголC на90", ["угол", "c", "на", "90"]),  # script and digit boundaries
        ("иBE", ["и", "be"]),  # mostly Latin: labels, not a Russian word
        ("треуго-\nльнике", ["треугольнике"]),  # a hyphenated line break
        ("треугол ьнике", ["треугольнике"]),  # a broken word
        ("тркугольнике", ["треугольнике"]),  # one typing error
    ],
)
def test_words_are_repaired(damaged: str, repaired: list[str]) -> None:
    words = words_repair(damaged)
    assert texts(words) == repaired
    assert all(w.intact for w in words)


def test_a_word_beyond_repair_is_left_out_of_the_phrases() -> None:
    words = words_repair("Найдите плщдьадь треугольника со сторонами 13 и 14")
    assert [w.text for w in words if not w.intact] == ["плщдьадь"]
    phrases = phrases_build(words, count=3)
    assert phrases
    assert all("плщдьадь" not in phrase for phrase in phrases)
    assert "13" in phrase_whole(words)


def test_the_stand_in_finds_words_not_characters_and_shows_whole_problems() -> None:
    """A client that sends the damaged text fails on the stand-in as on the real site."""
    site = FakeSite(search_engine=True)
    site.add_problem("math-ege", "27344", block("27344", TRIANGLE, solution="Решение длинное."))
    for n in range(12):
        site.add_problem("math-ege", str(100 + n), block(str(100 + n), f"Треугольник №{n}."))

    old_phrases = distinctive_phrases(DAMAGED)
    assert all(not _ids(site, phrase) for phrase in old_phrases)  # the damage kills them
    for phrase in phrases_build(words_repair(DAMAGED), count=3):
        assert "27344" in _ids(site, phrase)

    page = parse_search_page(site.search("math-ege", "треугольник", 1), base_url=BASE)
    assert len(page.problems) == 10
    assert page.problems[0].solution_text  # whole problems, not numbers
    last = site.search("math-ege", "треугольник", 2)
    assert site.search("math-ege", "треугольник", 9) == last  # the last page, forever


def _ids(site: FakeSite, phrase: str) -> list[str]:
    return parse_search_page(site.search("math-ege", phrase, 1), base_url=BASE).ids


@pytest.mark.django_db(transaction=True)
def test_damaged_queries_find_their_problem_with_an_empty_database(fake_site) -> None:  # type: ignore[no-untyped-def]
    """The real problems on the stand-in, 30 damaged queries, the database emptied before
    each: the first result holds every sentence the query kept (SEARCH.md)."""
    fake_site.search_engine = True
    blocks = unique_real(real_items())
    conditions = {
        pid: parse_problem_block(html, base_url=BASE).condition_text for pid, html in blocks.items()
    }
    for pid, html in blocks.items():
        fake_site.add_problem("math-ege", pid, html)
    rng = random.Random(12)
    hits = 0
    for pid in rng.sample(sorted(conditions), 30):
        query, kept = damage_kept(conditions[pid], rng)
        Problem.objects.all().delete()
        outcome = fuzzy.problems_search_fuzzy(site=MATH, condition_text=query[:1000], limit=3)
        assert outcome.site_asked
        assert outcome.phrases
        first = outcome.matches[0].problem.condition_text if outcome.matches else ""
        hits += holds_every(first, kept)
    assert hits >= 28
