"""Pages split into clauses at ingestion, the stems counted, aliases made; clause search
(named clauses and aliased documents first); the page view marking a whole clause."""

from __future__ import annotations

from datetime import date

import pytest
from django.db import connection
from django.test import Client

from normagpt import indexing, services, terms
from normagpt.clauses import clauses_split
from normagpt.kin import stems_related
from normagpt.models import NormClause, NormDocument, NormDocumentAlias, NormPage, NormTerm
from normagpt.parsing import code_aliases, query_parse, search_stems

pytestmark = pytest.mark.django_db

PAGES = [
    "СП 99.13330.2020\n"
    "1 Область применения\n"
    "1.1 Настоящий свод правил распространяется на перекрытия.\n"
    "10 Конструктивные требования\n"
    "10.3 Требования к толщине защитного слоя бетона\n"
    "10.3.1 Защитный слой бетона должен обеспечивать совместную работу\n"
    "арматуры с бетоном.\n"
    "10.3.2 Минимальная толщина защитного слоя бетона для плит принимается не\n"
    "менее:\n"
    "20 мм — в закрытых помещениях;\n"
    "10.3.3 Для сборных элементов значения по\n"
    "10.3.2 уменьшают на 5 мм. Требования приведены по\n"
    "12.5 Таблице Б.1 и по таблице 10.1.\n"
    "1",
    "СП 99.13330.2020\n"
    "Таблица 10.1 — Толщина защитного слоя, мм\n"
    "Условия эксплуатации   Толщина, мм\n"
    "На открытом воздухе   30\n"
    "10.3.4 Во всех случаях толщина защитного слоя должна быть не менее диаметра\n"
    "стержня арматуры.\n"
    "Приложение А\n"
    "А.1 Общие сведения\n"
    "А.1.1 Текст приложения.\n"
    "2",
]


def test_a_document_splits_into_clauses_tables_and_headings() -> None:
    units = clauses_split(PAGES)
    assert [(u.kind, u.number) for u in units] == [
        ("clause", "1.1"),
        ("clause", "10.3.1"),
        ("clause", "10.3.2"),
        ("clause", "10.3.3"),  # the wrapped «10.3.2 уменьшают», «12.5 Таблице» stay inside
        ("table", "10.1"),
        ("clause", "10.3.4"),
        ("clause", "А.1.1"),
    ]
    by_number = {u.number: u for u in units}
    assert by_number["10.3.2"].heading == (
        "10 Конструктивные требования › 10.3 Требования к толщине защитного слоя бетона"
    )
    assert by_number["10.3.2"].text.endswith("20 мм — в закрытых помещениях;")
    assert "10.3.2 уменьшают на 5 мм" in by_number["10.3.3"].text
    assert "12.5 Таблице Б.1" in by_number["10.3.3"].text
    assert by_number["10.1"].page_index == 1
    assert "На открытом воздухе   30" in by_number["10.1"].text
    assert by_number["А.1.1"].heading == "Приложение А › А.1 Общие сведения"
    start, end = by_number["10.3.2"].start, by_number["10.3.2"].end
    assert PAGES[0][start:end].startswith("10.3.2 Минимальная")
    assert PAGES[0][start:end].endswith("в закрытых помещениях;")
    assert not any("СП 99.13330.2020" in u.text for u in units)  # the running header


def test_a_wrapped_clause_line_followed_by_the_next_clause_is_not_a_heading() -> None:
    pages = [
        "7.1.9 Для залов освещённость принимают не менее 75 лк.\n"
        "7.1.10 Освещённость в спортивных залах в районах севернее 60° следует принимать\n"
        "не менее 200 лк.\n"
        "7.1.11 Освещённость в залах следует принимать не менее 500 лк."
    ]
    assert [u.number for u in clauses_split(pages)] == ["7.1.9", "7.1.10", "7.1.11"]


def test_a_reference_wrapped_to_a_line_start_is_not_a_clause() -> None:
    pages = [
        "6.2.10 Толщину проката принимают не менее 6 мм. Требования к стойкам фахверка по\n"
        "9.2. Толщину проката стоек назначают по расчёту.\n"
        "6.2.11 Опирание прогонов предусматривают на длину не менее 80 мм.\n"
        "7 Требования к узлам\n"
        "7.1 Узлы проектируют по расчёту."
    ]
    units = clauses_split(pages)
    assert [u.number for u in units] == ["6.2.10", "6.2.11", "7.1"]
    assert "9.2. Толщину проката стоек" in units[0].text


def test_a_clause_runs_on_over_pages_and_knows_them_but_not_without_end() -> None:
    """A clause continued overleaf is one unit that knows the pages it runs on to; numbering
    the reader cannot follow (a scan's lost lines) does not make one clause of many pages:
    past SPAN_PAGES the text is kept page by page; a table may run on longer."""
    pages = [
        "5.1 Общие положения\n5.1.1 Перекрытия проектируют по расчёту нагрузок\n"
        "и воздействий, сочетания которых принимают",
        "по нормам проектирования\nи с учётом требований пожарной безопасности.",
        "Конструкции защищают от коррозии\nи увлажнения в период эксплуатации.",
        "и от биологических повреждений\nв течение всего срока службы.",
        "Текст, который ни один пункт не продолжает.",
        "Таблица 5.1 — Нагрузки\nЖилые помещения   1,5",
        "Продолжение таблицы 5.1\nЧердаки   0,7",
        "Подвалы   2,0",
    ]
    units = clauses_split(pages)
    assert [(u.kind, u.number, u.page_index, u.span) for u in units] == [
        ("clause", "5.1.1", 0, 3),
        ("text", "", 4, 0),
        ("table", "5.1", 5, 2),
    ]
    assert units[0].text.endswith("в течение всего срока службы.")
    assert units[1].heading == "5.1 Общие положения"
    assert units[2].text.endswith("Подвалы   2,0")


def test_stems_and_aliases() -> None:
    assert search_stems("помещении помещениях категории категорий Ф1.3 7 баллов I степени") == [
        "помещен", "помещен", "категор", "категор", "ф13", "7", "балл", "i", "степен",
    ]  # fmt: skip
    assert stems_related("подва", "подвальн")
    assert stems_related("стал", "стальн")
    assert not stems_related("противопожарн", "противодымн")
    assert code_aliases("СП 63.13330.2018") == [
        "СП 63.13330.2018", "СП 63.13330", "63.13330.2018", "63.13330", "СП 63",
    ]  # fmt: skip
    query = query_parse(["п. 10.3.2 СП 63", "таблица 5.1", "защитный слой"])
    assert [(c.kind, c.number) for c in query.clauses] == [("clause", "10.3.2"), ("table", "5.1")]
    assert query.documents == ["СП 63"]
    assert query.phrases == [["защитн", "сло"]]


def stored(code: str, pages: list[str]) -> NormDocument:
    document = services.document_save(code=code, title="Образец")
    NormPage.objects.bulk_create(
        [NormPage(document=document, number=n, text=t) for n, t in enumerate(pages, 1)]
    )
    indexing.document_index(document_id=document.pk)
    return document


def test_indexing_counts_stems_once_per_clause_and_undoes_them() -> None:
    document = stored("СП 99.13330.2020", PAGES)
    clauses = NormClause.objects.filter(document=document)
    assert NormTerm.objects.get(term="").clauses == clauses.count() == 7
    assert NormTerm.objects.get(term="защитн").clauses == sum(
        "защитн" in c.search_text.split() for c in clauses
    )
    assert set(NormDocumentAlias.objects.filter(document=document).values_list("alias", flat=True)) == {
        "СП 99.13330.2020", "СП 99.13330", "99.13330.2020", "99.13330", "СП 99",
    }  # fmt: skip
    assert NormPage.objects.get(document=document, number=1).clauses == [
        "1.1",
        "10.3",
        "10.3.1",
        "10.3.2",
        "10.3.3",
    ]  # fmt: skip  (the heading «10.3 …» is cited too; the wrapped «12.5» is not a clause)
    indexing.document_index(document_id=document.pk)  # again: replaced, not counted twice
    assert NormTerm.objects.get(term="").clauses == 7
    indexing.document_unindex(document_id=document.pk)
    assert NormTerm.objects.get(term="").clauses == 0
    assert NormTerm.objects.get(term="защитн").clauses == 0
    assert terms.terms_recount() >= 1


def test_the_clause_index_follows_a_clauses_stems_and_nothing_else() -> None:
    """An edition's end date written on a clause leaves its index entry as it is (on SQLite
    the trigger fired on any column and rewrote it); new stems replace the old ones."""
    document = stored("СП 99.13330.2020", PAGES)
    clause = NormClause.objects.get(document=document, number="10.3.4")

    def found(words: str) -> list[str]:
        return [hit.clause.number for hit in services.clauses_search(keywords=[words])]

    def writes() -> int:
        return connection.connection.total_changes if connection.vendor == "sqlite" else 0

    assert "10.3.4" in found("диаметр стержня")
    before = writes()
    NormClause.objects.filter(pk=clause.pk).update(valid_to=date(2099, 12, 31))
    if connection.vendor == "sqlite":
        assert writes() - before == 1  # the row: no index entry deleted and written again
    assert "10.3.4" in found("диаметр стержня")
    assert "10.3.4" not in found("текст приложения")
    stems = " ".join(search_stems("Текст приложения"))  # stems the corpus has: a query keeps them
    NormClause.objects.filter(pk=clause.pk).update(search_text=stems)
    assert "10.3.4" in found("текст приложения")
    assert "10.3.4" not in found("диаметр стержня")


def test_a_clause_named_by_number_comes_first(corpus) -> None:  # type: ignore[no-untyped-def]
    [first, *_] = services.clauses_search(keywords=["п. 10.4.1"], expected_documents=["СП 63"])
    assert (first.clause.document.code, first.clause.number, first.named) == (
        "СП 63.13330.2018",
        "10.4.1",
        True,
    )
    hits = services.clauses_search(keywords=["защитный слой бетона", "пункт 5.5.2 СП 28"])
    assert (hits[0].clause.document.code, hits[0].clause.number) == ("СП 28.13330.2017", "5.5.2")


def test_a_clause_named_by_number_is_found_where_the_named_document_lacks_it(corpus) -> None:  # type: ignore[no-untyped-def]
    """Documents named to rank first do not hide a clause only another holds: «п. 10.3.2»
    with СП 28 named finds СП 63's, as it does with a code the corpus does not hold."""
    for named in (["СП 28"], ["ГОСТ 99999"]):
        [first, *_] = services.clauses_search(keywords=["п. 10.3.2"], expected_documents=named)
        assert (first.clause.document.code, first.clause.number) == ("СП 63.13330.2018", "10.3.2")
        assert not first.expected
    # named with its document, the clause is that document's or none: no other's is «named»
    hits = services.clauses_search(keywords=["п. 10.3.2 СП 28"])
    assert not any(hit.named for hit in hits)


@pytest.mark.parametrize("alias", ["сп63", "СП 63", "63.13330"])
def test_a_document_named_by_an_alias_comes_first(corpus, alias) -> None:  # type: ignore[no-untyped-def]
    for hits in (
        services.clauses_search(keywords=["защитный слой бетона", alias]),
        services.clauses_search(keywords=["защитный слой бетона"], expected_documents=[alias]),
    ):
        assert hits[0].clause.document.code == "СП 63.13330.2018"
        assert hits[0].expected


def test_the_phrase_and_its_condition_rank_the_clause_that_says_them_first(corpus) -> None:  # type: ignore[no-untyped-def]
    hits = services.clauses_search(keywords=["толщина защитного слоя бетона плит", "фундаменты"])
    assert (hits[0].clause.document.code, hits[0].clause.number) == ("СП 63.13330.2018", "10.3.2")
    [table_question] = services.clauses_search(keywords=["в слабоагрессивной среде"], limit=1)
    assert table_question.clause.number == "5.5.1"


def test_the_page_view_marks_the_whole_clause_and_its_values(corpus, admin_user) -> None:  # type: ignore[no-untyped-def]
    page = NormPage.objects.get(document__code="СП 63.13330.2018", number=2)
    client = Client()
    html = client.get(f"/normagpt/pages/{page.pk}/?clause=10.3.2").content.decode()
    marked = html.split('<mark id="cited">', 1)[1].split("</mark>", 1)[0]
    assert marked.startswith("10.3.2 Минимальная толщина")
    assert "40 мм" in marked.replace('<strong class="value">', "").replace("</strong>", "")
    assert '<strong class="value">20 мм</strong>' in marked
    assert "10.3.3" not in marked  # the next clause is not part of it
    absent = client.get(f"/normagpt/pages/{page.pk}/?clause=99.9").content.decode()
    assert "<mark" not in absent


def test_the_index_merged_after_a_load_finds_the_same() -> None:
    """Each indexing writes apart what the full-text index holds (an FTS5 segment, a GIN
    pending list) and every search reads it so; merged, the search finds what it found."""
    for n in (1, 2, 3):
        stored(f"СП {n}.13330.2020", [f"5.{n} Толщина защитного слоя бетона {n}0 мм.\n1"])
    asked = ["толщина защитного слоя"]
    before = [(h.clause.pk, h.score) for h in services.clauses_search(keywords=asked)]
    assert len(before) == 3
    segments = "SELECT count(DISTINCT segid) FROM normagpt_clause_fts_idx"
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute(segments)
            assert cursor.fetchone()[0] > 1
    assert indexing.search_index_merge()
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute(segments)
            assert cursor.fetchone()[0] == 1
    assert [(h.clause.pk, h.score) for h in services.clauses_search(keywords=asked)] == before


def test_a_noun_finds_its_adjective_with_a_vowel_put_in() -> None:
    """«в сутки» is said «суточного расхода» (СП 55.13330.2016 п. 9.2, as the dataset
    gives it), «окно» «оконных блоков»: the search holds the noun where its adjective is."""
    from normagpt.ingest import document_texts_ingest

    document = services.document_save(code="СП 55.13330.2016", title="Дома жилые одноквартирные")
    document_texts_ingest(
        document_id=document.pk,
        texts=[
            "9.2 В домах допускается предусматривать индивидуальные и коллективные источники "
            "водоснабжения из подземных водоносных горизонтов или водоемов из расчета суточного "
            "расхода хозяйственнопитьевой воды не менее 60 л на человека.\n"
            "9.3 Расход воды на наружное пожаротушение принимают 5 л/с.\n"
        ],
    )
    [first, second] = services.clauses_search(keywords=["расход воды в сутки на человека"])
    assert (first.clause.number, first.lacks) == ("9.2", ())
    assert "сутки" in second.lacks
