"""Ingestion of PDFs (text layer, images, OCR), the demo corpus, and search on either database."""

from __future__ import annotations

import io
import itertools
from pathlib import Path

import pytest
from django.core.files import File
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from PIL import Image, ImageDraw, ImageFont
from reportlab.lib.pagesizes import A4
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas

from core.exceptions import InvalidInput
from core.fonts import FONT_CANDIDATES, cyrillic_font
from normagpt import services
from normagpt.exceptions import BadPdf
from normagpt.ingest import tesseract_available
from normagpt.models import NormClause, NormDocument, NormPage
from normagpt.parsing import clauses_find, stem

pytestmark = pytest.mark.django_db

SCANNED = "Защитный слой бетона\nдля фундаментов\nне менее 40 мм"


def font_path() -> str:
    return next(p for p in FONT_CANDIDATES if Path(p).exists())


def make_pdf(path: Path, *, scanned_page: bool = True) -> Path:
    """Page 1 with a text layer and clauses; page 2 only an image of text (a scan)."""
    font = cyrillic_font()
    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.setFont(font, 12)
    for i, line in enumerate(
        [
            "ГОСТ 99999-2099 Тестовый стандарт",
            "5.1 Общие требования к бетону",
            "5.1.2 Класс бетона по прочности не ниже B15.",
        ]
    ):
        pdf.drawString(56, 780 - 20 * i, line)
    pdf.showPage()
    if scanned_page:
        image = Image.new("RGB", (1400, 500), "white")
        draw = ImageDraw.Draw(image)
        draw.multiline_text(
            (40, 40), SCANNED, fill="black", font=ImageFont.truetype(font_path(), 64), spacing=30
        )
        pdf.drawImage(ImageReader(image), 40, 500, width=520, height=186)
        pdf.showPage()
    pdf.save()
    return path


def ingest(path: Path, code: str = "ГОСТ 99999-2099", **kwargs) -> NormDocument:  # type: ignore[no-untyped-def]
    with path.open("rb") as handle:
        document = services.document_save(
            code=code, title="Тестовый стандарт", file=File(handle, name=path.name), **kwargs
        )
    return services.document_ingest(document_id=document.pk)


def test_a_generated_pdf_is_ingested_page_by_page(tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    if not tesseract_available():
        pytest.skip("tesseract with Russian language data is not installed: OCR cannot be tested")
    settings.NORMAGPT_PAGE_DPI = 72
    progress: list[tuple[int, int]] = []
    path = make_pdf(tmp_path / "gost.pdf")
    with path.open("rb") as handle:
        document = services.document_save(
            code="ГОСТ  99999-2099", title="Тест", file=File(handle, name="gost.pdf")
        )
    document = services.document_ingest(
        document_id=document.pk, progress=lambda d, t: progress.append((d, t))
    )
    assert (document.code, document.kind, document.ingest_status, document.page_count) == (
        "ГОСТ 99999-2099",
        "gost",
        "done",
        2,
    )
    assert progress == [(1, 2), (2, 2)]
    first, second = document.pages.order_by("number")
    assert first.has_text_layer
    assert not first.ocr
    assert first.clauses == ["5.1", "5.1.2"]
    assert "Класс бетона по прочности" in first.text
    with first.image.open("rb") as handle:
        image = Image.open(io.BytesIO(handle.read()))
    assert image.format == "JPEG"
    assert (image.width, image.height) == (first.width, first.height)
    assert abs(first.width - 595) <= 1  # A4 at 72 DPI: 595.3 × 841.9 points
    assert abs(first.height - 842) <= 1
    assert not second.has_text_layer
    assert second.ocr
    assert "бетона" in second.text.lower()
    # the OCR text is searchable: the scan continues clause 5.1.2 (no number of its own), so
    # the clause is found, on the page where it starts
    [hit] = services.pages_search(keywords=["фундаментов"])
    assert [c.clause.number for c in hit.clauses] == ["5.1.2"]
    assert "фундаментов" in hit.clauses[0].clause.text.lower()
    assert hit.page == first


def test_without_tesseract_a_scanned_page_is_only_flagged(tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    settings.NORMAGPT_OCR = False
    settings.NORMAGPT_PAGE_DPI = 50
    document = ingest(make_pdf(tmp_path / "scan.pdf"))
    scanned = document.pages.get(number=2)
    assert not scanned.has_text_layer
    assert not scanned.ocr
    assert scanned.text == ""


def test_reingesting_replaces_the_pages(tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    settings.NORMAGPT_OCR = False
    settings.NORMAGPT_PAGE_DPI = 50
    ingest(make_pdf(tmp_path / "a.pdf"))
    document = ingest(make_pdf(tmp_path / "b.pdf", scanned_page=False), code="гост 99999-2099")
    assert NormDocument.objects.count() == 1
    assert document.page_count == 1
    assert NormPage.objects.filter(document=document).count() == 1


def test_a_broken_pdf_fails_the_document_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.7 this is not really a pdf")
    with pytest.raises(BadPdf, match="not a readable PDF"):
        ingest(path)
    document = NormDocument.objects.get()
    assert document.ingest_status == "failed"
    assert "not a readable PDF" in document.ingest_error


def test_replaced_by_must_name_a_known_document() -> None:
    with pytest.raises(InvalidInput.__mro__[1]):  # DomainError
        services.document_save(code="СНиП 1", title="x", replaced_by="СП 404")


def test_ingest_command(tmp_path: Path, settings, capsys) -> None:  # type: ignore[no-untyped-def]
    settings.NORMAGPT_OCR = False
    settings.NORMAGPT_PAGE_DPI = 50
    path = make_pdf(tmp_path / "cmd.pdf")
    call_command("normagpt_ingest", str(path), "--code", "СП 1.2.3", "--title", "Тест")
    out = capsys.readouterr().out
    assert "СП 1.2.3: 2 pages ingested; 1 without a text layer (0 read by OCR)" in out
    assert NormDocument.objects.get().kind == "sp"
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="replaced_by: no document"):
        call_command(
            "normagpt_ingest", str(path), "--code", "X", "--title", "x", "--replaced-by", "Y"
        )


def test_the_demo_corpus_is_marked_as_a_sample_on_every_page(capsys) -> None:  # type: ignore[no-untyped-def]
    call_command("normagpt_demo")
    call_command("normagpt_demo")  # again: replaced, not duplicated
    assert "СП 63.13330.2018: 3 page(s)" in capsys.readouterr().out
    documents = NormDocument.objects.all()
    assert documents.count() == 4
    assert all(d.is_sample and d.ingest_status == "done" for d in documents)
    assert NormPage.objects.count() == 6
    assert all("ОБРАЗЕЦ" in page.text for page in NormPage.objects.all())
    snip = NormDocument.objects.get(code="СНиП 52-01-2003")
    assert snip.status == "replaced"
    assert snip.replaced_by.code == "СП 63.13330.2018"


# --- search ------------------------------------------------------------------------------------


def test_search_finds_inflected_words_expected_documents_first(corpus) -> None:  # type: ignore[no-untyped-def]
    hits = services.pages_search(
        keywords=["защитный слой бетона", "плиты перекрытия"],
        expected_documents=["СП 28.13330"],
        limit=10,
    )
    assert (hits[0].page.document.code, hits[0].expected) == ("СП 28.13330.2017", True)
    rest = [h for h in hits if not h.expected]
    assert rest[0].page.document.code == "СП 63.13330.2018"
    assert rest[0].page.number == 2  # «толщина защитного слоя… для плит перекрытия»
    for replaced in (False, True):  # in force first, then replaced: each the better first
        group = [h.rank for h in rest if h.replaced == replaced]
        assert group == sorted(group, reverse=True)
    assert "защитного слоя" in rest[0].snippet


def test_search_without_expected_documents_ranks_by_match(corpus) -> None:  # type: ignore[no-untyped-def]
    hits = services.pages_search(
        keywords=["минимальная толщина защитного слоя плиты перекрытия"], limit=3
    )
    assert (hits[0].page.document.code, hits[0].page.number) == ("СП 63.13330.2018", 2)
    assert "10.3.2" in hits[0].page.clauses
    assert not hits[0].expected


def test_replaced_documents_are_marked(corpus) -> None:  # type: ignore[no-untyped-def]
    hits = services.pages_search(keywords=["защитный слой"], expected_documents=["СНиП 52-01-2003"])
    assert hits[0].page.document.code == "СНиП 52-01-2003"
    assert hits[0].replaced
    assert not any(h.replaced for h in hits[1:])


def test_replaced_documents_rank_below_those_in_force_unless_asked_for(corpus) -> None:  # type: ignore[no-untyped-def]
    # (the replaced СНиП says it as СП 63 does: both match better than СП 28's clause)
    hits = services.pages_search(keywords=["защитный слой бетона", "арматура"], limit=20)
    replaced = [h.replaced for h in hits]
    assert any(replaced)
    assert replaced == sorted(replaced)  # every page in force before any replaced one
    best_replaced = max(h.rank for h in hits if h.replaced)
    assert any(h.rank < best_replaced for h in hits if not h.replaced)  # it matched better
    asked = services.pages_search(
        keywords=["защитный слой бетона"], expected_documents=["СНиП 52-01-2003"], limit=20
    )
    assert asked[0].replaced  # named: not put below


@pytest.mark.parametrize(
    "keywords",
    [
        ["защитный слой бетона", "плиты перекрытия"],
        ["минимальная толщина защитного слоя"],
        ["бетон", "морозостойкость"],
        ["анкеровка арматуры"],
    ],
)
def test_matching_with_the_rarest_stems_finds_the_same_best_clause(
    corpus, monkeypatch, keywords
) -> None:  # type: ignore[no-untyped-def]
    """Candidates found with a clause holding two of a few rare stems (a large corpus) rank
    first the clause that matching with every stem ranks first."""
    from normagpt import search_candidates as search

    monkeypatch.setattr(search, "RANK_MAX", 10**9)  # never all at once
    monkeypatch.setattr(search, "PAIR_TERMS", 32)  # two of every stem
    every = services.clauses_search(keywords=keywords, limit=3)
    monkeypatch.setattr(search, "PAIR_TERMS", 2)  # the two rarest only
    monkeypatch.setattr(search, "PAIRS_FEW", 0)
    top = services.clauses_search(keywords=keywords, limit=3)
    assert top
    assert top[0].clause.pk == every[0].clause.pk


@pytest.mark.parametrize(
    "alternatives",
    [
        [[["бетон"], ["арматур"]], [["бетон"], ["защитн"]], [["арматур"], ["защитн"]]],
        [[["бетон", "бетонн"], ["плит"]], [["слой"]]],
        [[["бетон"], ["арматур"]]],  # one alternative: ts_rank weighs how near they stand
    ],
)
def test_postgres_candidates_keep_the_order_of_their_whole_query(corpus, alternatives) -> None:  # type: ignore[no-untyped-def]
    """The candidates ranked by the stems of several alternatives come in the order
    `ts_rank` of the whole query gives."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's ranking")
    from normagpt import search_candidates as search

    query, rank = search._tsqueries(alternatives)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM normagpt_normclause WHERE search_vector @@ to_tsquery('simple', %s) "
            "ORDER BY ts_rank(search_vector, to_tsquery('simple', %s), %s) DESC, id",
            [query, query, search.RANK_NORMALIZATION],
        )
        whole = [pk for (pk,) in cursor.fetchall()]
    assert len(whole) > 1
    assert search._postgres(query, rank, [], 50) == whole[:50]


def test_search_limits_and_empty_results(corpus) -> None:  # type: ignore[no-untyped-def]
    assert services.pages_search(keywords=["бетон"], limit=2).__len__() == 2
    assert services.pages_search(keywords=["кирпичная кладка"]) == []
    with pytest.raises(InvalidInput, match="no searchable word"):
        services.pages_search(keywords=["и", " "])
    with pytest.raises(InvalidInput, match="limit"):
        services.pages_search(keywords=["бетон"], limit=51)


def test_the_full_text_index_of_the_database(corpus) -> None:  # type: ignore[no-untyped-def]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'normagpt_clause_fts_gin'"
            )
            [(definition,)] = cursor.fetchall()
            assert "gin" in definition.lower()
            assert "search_vector" in definition
            cursor.execute("SET enable_seqscan = off")
            cursor.execute(
                "EXPLAIN SELECT id FROM normagpt_normclause "
                "WHERE search_vector @@ to_tsquery('simple', 'бетон')"
            )
            assert "normagpt_clause_fts_gin" in " ".join(row[0] for row in cursor.fetchall())
            cursor.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'normagpt_table_fts_gin'"
            )
            [(tables,)] = cursor.fetchall()  # the tables' own index (search asks for them apart)
            assert "WHERE" in tables
            assert "'table'" in tables
        else:
            cursor.execute("SELECT count(*) FROM normagpt_clause_fts")
            assert cursor.fetchone()[0] == NormClause.objects.count() > 0


def test_parsing_helpers() -> None:
    assert clauses_find("10.3 Требования\n10.3.1 Защитный слой\nсм. 10.3.2 ниже\n  5.1. Общие") == [
        "10.3",
        "10.3.1",
        "5.1",
    ]
    assert stem("защитного") == "защитн"
    assert stem("плиты") == stem("плита") == stem("плит") == "плит"


def test_a_table_is_found_among_many_short_clauses_repeating_its_words() -> None:
    """More clauses than the database ranks hold the asked condition with the query's rarest
    words, others the asked quantity; the table whose row answers holds both but is long
    (its rows), which SQLite's bm25 puts last. It still comes first."""
    from normagpt.indexing import document_index
    from normagpt.terms import terms_recount

    elements = ["плит", "балок", "колонн", "стен", "ригелей", "фундаментов", "свай", "ростверков"]
    places = [
        "покрытия", "перекрытия", "подвала", "цоколя", "чердака", "лестниц", "галерей",
        "тоннелей", "резервуаров", "эстакад", "градирен", "дымовых труб", "опор", "мостов",
        "причалов", "шахт", "складов",
    ]  # fmt: skip
    clauses = [
        f"4.1.{n} Для рабочей арматуры {e} {p} в помещениях с повышенной влажностью применяют "
        f"бетон марки по водонепроницаемости не ниже W{4 + n % 3 * 2}."
        for n, (e, p) in enumerate(((e, p) for e in elements for p in places), 1)
    ]
    table = [
        "Таблица 5.2 — Минимальная толщина защитного слоя бетона рабочей арматуры, мм",
        "Условия эксплуатации конструкций   Толщина защитного слоя, мм",
        "В закрытых помещениях при нормальной и пониженной влажности   20",
        "В закрытых помещениях при повышенной влажности (при отсутствии мер защиты)   25",
        "На открытом воздухе (при отсутствии мер защиты)   30",
        "В грунте (при отсутствии мер защиты), в фундаментах при наличии бетонной подготовки   40",
        "В монолитных фундаментах при отсутствии бетонной подготовки   70",
        "В сборных фундаментах под колонны на песчаной подушке   35",
        "В конструкциях, подвергающихся попеременному замораживанию и оттаиванию   35",
        "В конструкциях с напрягаемой арматурой класса А800 и выше   40",
        "В конструкциях, эксплуатируемых в слабоагрессивной газовой среде   30",
        "В конструкциях, эксплуатируемых в среднеагрессивной газовой среде   35",
        "В конструкциях, эксплуатируемых в сильноагрессивной газовой среде   40",
        "В подземных сооружениях при отсутствии гидроизоляции   45",
    ]
    others = [  # the quantity asked, in other conditions: more of them than of the above
        f"6.{k}.{n} Минимальную толщину защитного слоя бетона {e} {p} в сухих условиях "
        f"принимают не менее {10 + n % 4 * 5} мм."
        if n
        else f"6.{k} Сухие условия, случай {k}"
        for k in (1, 2)
        for n, (e, p) in enumerate([("", ""), *((e, p) for e in elements for p in places)])
    ]
    unrelated = [
        f"7.{k}.{n} {template.format(e=e, p=p, n=n)}" if n else f"7.{k} Требования раздела {k}"
        for k, template in enumerate(
            [
                "Класс бетона {e} {p} по прочности на сжатие принимают не ниже B{n}.",
                "Нагрузку от снега на {e} {p} определяют по карте районов, не менее {n} кПа.",
                "Огнестойкость {e} {p} обеспечивают облицовкой толщиной не менее {n} мм.",
                "Прогиб {e} {p} от нормативных нагрузок не должен превышать 1/{n} пролёта.",
            ],
            1,
        )
        for n, (e, p) in enumerate([("", ""), *((e, p) for e in elements for p in places)])
    ]
    lines = [
        "4 Материалы", "4.1 Бетон", *clauses, "5 Конструктивные требования", "5.1 Общие", *table,
        "6 Защитный слой", *others, "7 Прочие требования", *unrelated,
    ]  # fmt: skip
    texts = ["\n".join(lines[i : i + 40]) for i in range(0, len(lines), 40)]
    document = NormDocument.objects.create(
        code="СП 990.13330.2099", title="Свод", page_count=len(texts)
    )
    NormPage.objects.bulk_create(
        [NormPage(document=document, number=n, text=t) for n, t in enumerate(texts, 1)]
    )
    document_index(document_id=document.pk)
    terms_recount()
    assert len(clauses) > 120  # more than the database ranks (search_candidates.CANDIDATES)

    hits = services.clauses_search(
        keywords=[
            "Минимальная толщина защитного слоя бетона рабочей арматуры",
            "в помещениях с повышенной влажностью",
        ],
        limit=5,
    )
    assert (hits[0].clause.kind, hits[0].clause.number) == ("table", "5.2")


def test_the_tables_asked_for_apart_name_the_table_mark_once() -> None:
    """The tables holding one of the alternatives are found, and on SQLite the full-text
    query names the mark every table holds once (FTS5 reads its list, every table's, once
    per mention), whatever the number of alternatives."""
    from normagpt import search_candidates as search
    from normagpt.indexing import document_index
    from normagpt.terms import TABLE_MARK, terms_recount

    lines = ["5 Требования", "5.1 Общие положения"]
    for n, (head, row) in enumerate(
        [
            ("Толщина защитного слоя бетона, мм", "В закрытых помещениях   20"),
            ("Класс бетона по прочности", "Для фундаментов   B15"),
            ("Диаметр арматуры, мм", "Для плит перекрытия   12"),
            ("Нагрузка на перекрытия, кПа", "Для квартир   1,5"),
        ],
        1,
    ):
        lines += [f"Таблица 5.{n} — {head}", "Условия   Значение", row]
    document = NormDocument.objects.create(code="СП 991.13330.2099", title="Свод", page_count=1)
    NormPage.objects.create(document=document, number=1, text="\n".join(lines))
    document_index(document_id=document.pk)
    terms_recount()
    alternatives = [[[stem("бетона")], [stem("защитного")]], [[stem("арматуры")], [stem("плит")]]]

    with CaptureQueriesContext(connection) as queries:
        found = search._tables(alternatives)

    numbers = set(NormClause.objects.filter(pk__in=found).values_list("number", flat=True))
    assert numbers == {"5.1", "5.3"}
    if connection.vendor != "postgresql":
        [match] = [str(q["sql"]) for q in queries.captured_queries if "MATCH" in q["sql"]]
        assert match.count(TABLE_MARK) == 1


def test_clauses_holding_two_of_the_rarest_stems_are_asked_naming_each_fewer_times(corpus) -> None:  # type: ignore[no-untyped-def]
    """The candidates holding two of four stems are every clause holding two of them, and
    the full-text query (FTS5's, PostgreSQL's) names the last, least rare, stem once, each
    other one at most three times: not each in each of its pairs."""
    from normagpt import search_candidates as search

    words = ["бетон", "арматур", "защитн", "слой"]
    pairs = [[[a], [b]] for a, b in itertools.combinations(words, 2)]
    holding = {
        pk
        for pk, text in NormClause.objects.values_list("pk", "search_text")
        if sum(word in text.split() for word in words) >= 2
    }

    with CaptureQueriesContext(connection) as queries:
        found = search._ranked(pairs, [])

    assert 1 < len(holding) < search.CANDIDATES
    assert set(found) == holding
    if connection.vendor == "postgresql":
        query = search._tsqueries(pairs)[0]  # the rank's query names each stem once
    else:
        [query] = [str(q["sql"]) for q in queries.captured_queries if "MATCH" in q["sql"]]
    assert query.count("слой") == 1
    assert max(query.count(word) for word in words) <= 3


def test_a_long_text_repeating_the_query_does_not_outrank_a_short_one_stating_it() -> None:
    """The database's candidates, best first: a clause stating the query's words once comes
    before a long table repeating them in some of its rows (bm25 on SQLite; on PostgreSQL
    `ts_rank` divided by the log of the text's length)."""
    from normagpt import search_candidates as search
    from normagpt.indexing import document_index
    from normagpt.terms import terms_recount

    rows = [
        f"Плита серии {n} с защитным слоем бетона   {20 + n % 3 * 5}"
        if n % 10 == 0
        else f"Плита серии {n} марки ПК-{n} пустотная   {n}"
        for n in range(60)
    ]
    others = [f"4.{n} Марку {n} применяют для перекрытий пролётом до {n} м." for n in range(3, 40)]
    lines = [
        "4 Требования",
        "4.1 Толщину защитного слоя бетона принимают не менее 20 мм.",
        *others,
        "Таблица 4.2 — Изделия серий и их марки",
        "Изделие   Значение",
        *rows,
    ]
    document = NormDocument.objects.create(code="СП 992.13330.2099", title="Свод", page_count=1)
    NormPage.objects.create(document=document, number=1, text="\n".join(lines))
    document_index(document_id=document.pk)
    terms_recount()
    kinds = dict(NormClause.objects.values_list("pk", "kind"))
    assert set(kinds.values()) == {"clause", "table"}

    a, b, c = ([stem(word)] for word in ["защитного", "слоя", "бетона"])
    [first] = search._ranked([[a, b], [a, c], [b, c]], [], 1)  # two of three

    assert kinds[first] == "clause"
