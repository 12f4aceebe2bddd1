"""A law is read by its articles, and a citation of an article finds it: real excerpts of the
two codes of the public dataset Akumsk/russian-construction-standards
(tests/fixtures/norms/SOURCES.md), the Жилищный and the Градостроительный кодекс."""

from __future__ import annotations

import pytest

from normagpt import services
from normagpt.clauses import Clause, clauses_split, number_key
from normagpt.models import NormClause
from normagpt.parsing import number_normal, query_parse, title_aliases
from normagpt.references import references_find
from normagpt.search import documents_named
from normagpt.verification import Checker
from tests.normagpt.material import pages_of, pages_stored


def articles(name: str) -> dict[str, Clause]:
    return {u.number: u for u in clauses_split(pages_of(name)) if u.kind == "clause"}


def test_a_code_is_read_as_one_clause_per_article_with_its_title_as_heading() -> None:
    found = articles("zhk-rf.json")
    assert list(found)[:7] == ["ст. 24", "ст. 25", "ст. 26", "ст. 27", "ст. 28", "ст. 29", "ст. 30"]
    article = found["ст. 26"]
    assert article.heading.endswith(
        "Глава 4. Переустройство и перепланировка помещения в многоквартирном доме › "
        "Статья 26. Основание проведения переустройства и (или) перепланировки помещения в "
        "многоквартирном доме"
    )
    # its parts are its text, over the pages it runs on, its edition's note with them
    assert "(Наименование в редакции Федерального закона от 27.12.2018" in article.text
    assert "1. Переустройство и (или) перепланировка помещения" in article.text
    assert "2. Для проведения переустройства" in article.text
    assert article.span >= 2
    assert "Статья 27" not in article.text


def test_articles_added_with_a_flattened_superscript_and_repealed_ones_are_articles() -> None:
    found = articles("zhk-rf.json")
    added = [n for n in found if n.startswith("ст. 87") or n == "ст. 88"]
    assert added == ["ст. 87", "ст. 87.1", "ст. 87.2", "ст. 88"]
    assert {"ст. 91", "ст. 91.1", "ст. 91.2"} <= set(found)
    assert "ст. 911" not in found
    assert "Утратила силу" in found["ст. 139"].text  # «Статья 139.» / «(Утратила силу …)»
    keys = [number_key(n) for n in found]
    assert keys == sorted(keys)


def test_a_heading_set_word_by_word_and_the_running_header_are_read_as_a_reader_does() -> None:
    units = clauses_split(pages_of("grk-rf.json"))
    found = {u.number: u for u in units if u.kind == "clause"}
    assert list(found) == [
        "ст. 1", "ст. 7", "ст. 8", "ст. 8.1", "ст. 8.2", "ст. 8.3", "ст. 8.4", "ст. 9",
        "ст. 50.1", "ст. 51",
    ]  # fmt: skip
    assert found["ст. 8"].heading.endswith(
        "› Статья 8. Полномочия органов местного самоуправления в области градостроительной "
        "деятельности"
    )
    assert found["ст. 8.2"].heading.endswith(
        "Статья 8.2. Перераспределение полномочий между органами местного самоуправления и "
        "органами государственной власти субъекта Российской Федерации"
    )
    assert found["ст. 51"].heading.endswith("Статья 51. Разрешение на строительство")
    every = "\n".join(u.text for u in units)
    assert "Документ предоставлен КонсультантПлюс" not in every
    assert "Страница 38 из 420" not in every
    # no part of an article («1.», «2.») is a section or clause of its own
    assert all(u.number.startswith("ст. ") or u.kind != "clause" for u in units)


def test_an_article_is_cited_as_a_person_cites_it() -> None:
    assert number_normal("Статья 26") == number_normal("ст.26") == "ст. 26"
    cases = {
        "ст. 26 ЖК РФ": ("ст. 26", "ЖК РФ"),
        "статья 26 Жилищного кодекса": ("ст. 26", "ЖК РФ"),
        "ч. 2 ст. 26 ЖК РФ": ("ст. 26", "ЖК РФ"),
        "согласно статьи 51 ГрК РФ": ("ст. 51", "ГрК РФ"),
        "п. 3 ч. 1 ст. 8 Градостроительного кодекса Российской Федерации": ("ст. 8", "ГрК РФ"),
    }
    for text, (number, document) in cases.items():
        [reference] = references_find(text)
        assert (reference.kind, reference.number, reference.document) == (
            "clause", number, document,
        ), text  # fmt: skip
        query = query_parse([text])
        assert [r.number for r in query.clauses] == [number], text
        assert query.documents == [document], text
    assert references_find("сталь Ст.3сп по ГОСТ 380") == []  # a steel grade, no article
    assert title_aliases("Градостроительный кодекс Российской Федерации")[-2:] == [
        "ГрК РФ", "ГрК",
    ]  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_a_cited_article_is_found_in_the_code_it_names() -> None:
    pages_stored(
        "Кодекс Жилищный кодекс Российской Федерации",
        "Жилищный кодекс Российской Федерации",
        "zhk-rf.json",
    )
    pages_stored(
        "Градостроительный кодекс Российской Феедерации",
        "Градостроительный кодекс Российской Федерации",
        "grk-rf.json",
    )
    zhk = documents_named(["ЖК РФ"])
    grk = documents_named(["ГрК РФ"])
    assert len(zhk) == len(grk) == 1
    assert zhk != grk
    assert documents_named(["Жилищный кодекс"]) == zhk
    assert documents_named(["Градостроительный кодекс"]) == grk
    for keywords, document, number in (
        ("ст. 26 ЖК РФ", zhk, "ст. 26"),
        ("статья 26 Жилищного кодекса", zhk, "ст. 26"),
        ("ч. 2 ст. 26 ЖК РФ переустройство", zhk, "ст. 26"),
        ("статьи 51 ГрК РФ разрешение на строительство", grk, "ст. 51"),
        ("ст. 8 ГрК РФ", grk, "ст. 8"),
    ):
        hits = services.clauses_search(keywords=[keywords], limit=3)
        first = hits[0].clause
        assert (first.document_id, first.number) == (document[0], number), keywords
        assert hits[0].named
    article = NormClause.objects.get(document_id=grk[0], number="ст. 51")
    assert article.heading.endswith("Статья 51. Разрешение на строительство")
    # an answer's claim citing a part of an article is checked against that article
    [result] = Checker(sources=[], pages=[]).answer(
        "Переустройство помещения в многоквартирном доме проводится по согласованию с органом "
        "местного самоуправления (ч. 1 ст. 26 ЖК РФ)."
    )
    assert (result.document_code, result.clause_number) == (
        "Кодекс Жилищный кодекс Российской Федерации", "ст. 26",
    ), result.reason  # fmt: skip
    # and named as a person cites it: «ст. 26», never «п. ст. 26»
    article = NormClause.objects.get(document_id=zhk[0], number="ст. 26")
    assert str(article) == "Кодекс Жилищный кодекс Российской Федерации, ст. 26"
    [wrong] = Checker(sources=[], pages=[]).answer(
        "Переустройство помещения согласуют в течение 90 дней (ч. 1 ст. 26 ЖК РФ)."
    )
    assert "п. ст." not in wrong.reason, wrong.reason
    assert "ст. 26" in wrong.reason, wrong.reason
