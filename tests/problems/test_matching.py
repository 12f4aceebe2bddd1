"""Normalization and scoring of the fuzzy search."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.damage import damage
from problems.matching import (
    Candidate,
    Query,
    distinctive_phrases,
    normalize,
    numbers,
    ocr_fold,
    rank,
    score,
    telling,
)

TEXT = "В треугольнике ABC угол C равен 90°, AC = 24, BC = 7. Найдите синус A."
SIBLING = "В треугольнике ABC угол C равен 90°, AC = 12, BC = 5. Найдите синус A."


def test_normalize_folds_case_yo_soft_hyphens_spaces_and_punctuation() -> None:
    assert normalize("Ёлка\u00a0и\u00adгла —  «ПРИМЕР»,\u202fx=1") == "елка игла пример x 1"


def test_numbers_read_look_alike_letters_inside_numbers_only() -> None:
    assert numbers(normalize("угол равен 9о°, AC = 2з, высота равна4")) == ("90", "23", "4")
    assert numbers(normalize("уг0л и отрезок о")) == ()


def test_siblings_that_differ_only_in_numbers_are_told_apart() -> None:
    query = Query.from_text(
        "В треуг0льнике ABC угoл C равен 9о, AC = 2 4, BC = 7. Найди-\nте синус A"
    )
    own = score(query, Candidate.from_normalized(1, normalize(TEXT)))
    sibling = score(query, Candidate.from_normalized(2, normalize(SIBLING)))
    assert own > sibling
    assert own >= 0.75


def test_rank_applies_threshold_and_limit() -> None:
    candidates = [
        Candidate.from_normalized(i, normalize(t))
        for i, t in enumerate([TEXT, SIBLING, "Совсем другой текст про химию и реакции."])
    ]
    ranked = rank(Query.from_text(TEXT), candidates, threshold=0.6, limit=5)
    assert ranked[0][0].key == 0
    assert all(s >= 0.6 for _, s in ranked)
    assert 2 not in [c.key for c, _ in ranked]
    assert len(rank(Query.from_text(TEXT), candidates, threshold=0.0, limit=1)) == 1


def test_distinctive_phrases_are_short_pieces_of_the_text() -> None:
    long_text = TEXT + " Высота треугольника проведена из вершины прямого угла к гипотенузе."
    phrases = distinctive_phrases(long_text)
    assert 1 <= len(phrases) <= 3
    whole = normalize(long_text)
    for phrase in phrases:
        assert phrase in whole
        assert len(phrase.split()) <= 7


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_score_is_bounded_and_a_text_matches_itself_best(text: str) -> None:
    query = Query.from_text(text)
    own = score(query, Candidate.from_normalized(1, normalize(text)))
    assert 0.0 <= own <= 1.0
    if query.folded:
        longer = Candidate.from_normalized(2, normalize(text + " посторонний хвост 12345"))
        assert own >= score(query, longer)


def test_damaged_queries_find_their_problem_first() -> None:
    """A small version of the quality benchmark on hand-made near-duplicate problems."""
    texts = [
        f"В треугольнике ABC угол C равен 90°, AC = {a}, BC = {b}. Найдите {f} A."
        for a, b in [(24, 7), (12, 5), (8, 6), (15, 8), (20, 21)]
        for f in ("синус", "косинус", "тангенс")
    ] + [
        "Точка пересечения биссектрис двух углов параллелограмма лежит на стороне. Найдите его большую сторону.",
        "Периметр ромба равен 40, а один из углов равен 30°. Найдите площадь ромба.",
    ]
    candidates = [Candidate.from_normalized(i, normalize(t)) for i, t in enumerate(texts)]
    rng = random.Random(7)
    hits = total = 0
    for _ in range(5):
        for i, text in enumerate(texts):
            ranked = rank(Query.from_text(damage(text, rng)), candidates, threshold=0, limit=1)
            hits += ranked[0][0].key == i
            total += 1
    assert hits / total >= 0.95


def test_damaged_real_conditions_find_their_problem_first() -> None:
    """The quality benchmark in small: every real problem once, all siblings present."""
    from problems.parsing import parse_problem_block
    from tests.problems.conftest import real_items, unique_real

    blocks = unique_real(real_items())
    texts = {
        pid: parse_problem_block(html, base_url="https://math-ege.sdamgia.ru").condition_text
        for pid, html in blocks.items()
    }
    candidates = [Candidate.from_normalized(pid, normalize(t)) for pid, t in texts.items()]
    rng = random.Random(11)
    hits = sum(
        rank(Query.from_text(damage(text, rng)), candidates, threshold=0, limit=1)[0][0].key == pid
        for pid, text in texts.items()
    )
    assert hits / len(texts) >= 0.98


TELLING_LOST = (
    "Два угла треугольника равны 33° и 105°. Найдите тупой угол, который образуют высоты "
    "треугольника, выходящие из вершин этих углов. Ответ дайте в градусах."
)
GENERIC_SHORT = (
    "Найдите острый угол между биссектрисами острых углов прямоугольного треугольника. "
    "Ответ дайте в градусах."
)


@pytest.mark.parametrize(
    "query",
    [
        # the first sentence lost, OCR damage in the rest
        "Найдите туопй угол, который обра-\nзуют высоты трeугольника, ваходящие из вершин "
        "этих угл0в. Ответ дaйте в градусах.",
        "Найдите тупой угол, который образуют высоты треугольника. Ответ дайте в градусах.",
    ],
)
def test_the_telling_sentence_outweighs_generic_exam_phrasing(query: str) -> None:
    """A short problem that is mostly «Найдите … Ответ дайте в градусах» does not outrank
    the one whose telling words the query holds."""
    asked = Query.from_text(query)
    right = score(asked, Candidate.from_normalized(1, normalize(TELLING_LOST)))
    generic = score(asked, Candidate.from_normalized(2, normalize(GENERIC_SHORT)))
    assert right > generic
    assert telling(ocr_fold(normalize(GENERIC_SHORT))) == ocr_fold(
        "острый угол между биссектрисами острых углов прямоугольного треугольника"
    )
