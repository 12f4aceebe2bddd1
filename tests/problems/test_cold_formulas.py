"""Cold search on a site whose search does not see a formula's text: the real blocks keep
most labels and numbers in formula images, so phrases of them find nothing there; the
query's prose alone (`repair.phrase_prose`) still finds the problem (issue 50)."""

from __future__ import annotations

import pytest

from problems import fuzzy
from problems.parsing import parse_search_page
from problems.repair import phrase_prose, words_repair
from problems.subjects import Site
from tests.problems.conftest import real_items, unique_real
from tests.problems.fake_site import FakeSite

MATH = Site("math", "ege")
BASE = "https://math-ege.sdamgia.ru"
# Problem 27792 («В треугольнике ABC AB = BC = AC = 2 корень из 3. Найдите высоту CH.»),
# OCR-damaged: its labels and numbers after «ABC» are formula images on the site.
DAMAGED_27792 = "В треyгольнике ABC AB = BC = AC =2 кореньиз3.\nНaйдите высоту CH."
# Problem 27321: its labels, numbers and «синус BAC = …» are formulas; «Найдите» is too
# damaged to repair.
DAMAGED_27321 = (
    "В треугольникe ABC AC =\nBC, AH − высота, AB = 5, синус BAC\n= дробь: числитель: 7, "
    "знаменатель: 25 к0нец дроби .Нaшйдитe BH."
)


@pytest.mark.parametrize(
    ("damaged", "repaired"),
    [
        ("тpеyгольникеABC", ["треугольнике", "abc"]),  # labels glued to a word with look-alikes
        ("уг0л5", ["угол", "5"]),  # a number glued on
        ("треугольникеABC", ["треугольнике", "abc"]),  # as before: no look-alike
    ],
)
def test_labels_glued_to_a_damaged_word_are_cut_off(damaged: str, repaired: list[str]) -> None:
    """Before, `тpеyгольникеABC` was cut at every script boundary: `т`, `р`, `е`, `у`,
    `гольнике`, and no phrase held `треугольнике`."""
    words = words_repair(damaged)
    assert [w.text for w in words] == repaired
    assert all(w.intact for w in words)


@pytest.mark.parametrize(
    ("query", "prose"),
    [
        (DAMAGED_27792, "треугольнике найдите высоту"),  # no label, number, «корень из»
        (DAMAGED_27321, "треугольнике высота синус"),  # no «дробь», «числитель», «конец»
        ("Найдите AB: BC = 5 и AC = 12.", ""),  # one Russian word: no phrase
    ],
)
def test_the_prose_phrase_holds_the_russian_words_only(query: str, prose: str) -> None:
    assert phrase_prose(words_repair(query)) == prose


def test_a_formula_blind_site_finds_the_problem_by_its_prose() -> None:
    """The stand-in as such a site: the prose phrase finds 27792 on its first page."""
    site = FakeSite(search_engine=True, search_formulas=False)
    for pid, html in unique_real(real_items()).items():
        site.add_problem("math-ege", pid, html)
    phrase = phrase_prose(words_repair(DAMAGED_27792))
    page = parse_search_page(site.search("math-ege", phrase, 1), base_url=BASE)
    assert "27792" in page.ids


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("query", "problem_id"), [(DAMAGED_27792, "27792"), (DAMAGED_27321, "27321")]
)
def test_a_damaged_query_finds_its_problem_on_a_formula_blind_site(  # type: ignore[no-untyped-def]
    fake_site, query: str, problem_id: str
) -> None:
    """An empty database and a site that does not search formulas: before, every phrase
    held labels or numbers of the formulas and 27792 was not found at all."""
    fake_site.search_engine = True
    fake_site.search_formulas = False
    for pid, html in unique_real(real_items()).items():
        fake_site.add_problem("math-ege", pid, html)
    outcome = fuzzy.problems_search_fuzzy(site=MATH, condition_text=query, limit=3)
    assert outcome.site_asked
    assert phrase_prose(words_repair(query)) in outcome.phrases
    assert outcome.matches
    assert outcome.matches[0].problem.problem_id == problem_id
