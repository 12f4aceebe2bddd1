"""Issue 48, part 3: amendments as they are really written. Изменение № 1 к ГОСТ 24866-2014
and Изменение № 1 к ГОСТ 25192-2012 are read from the public dataset's pages (cut into
tests/fixtures/norms, see SOURCES.md): every order is applied or named (none dropped,
counted against the orders listed here by reading the pages), five clauses of each are
checked before and after the amendment's day, and a text an amendment in force could not
change carries its mark. Then the review findings on the reader, one test each."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from hypothesis import given, settings
from hypothesis import strategies as st

from normagpt import editions, services
from normagpt.editions.quotes import VERB, blanked, furniture_removed, quoted_spans
from normagpt.indexing import document_index
from normagpt.models import NormAmendmentChange, NormClause, NormDocument, NormPage
from normagpt.parsing import text_clean

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "norms"


@dataclass(frozen=True)
class Norm:
    file: str
    code: str
    amendment: range  # its pages in the dataset's file
    day: date  # the amendment's day in Russia (its footnote)

    def data(self) -> dict[str, Any]:
        return json.loads((FIXTURES / self.file).read_text(encoding="utf-8"))

    def amendment_text(self) -> str:
        """The amendment's pages one after another, as a PDF's text layer is read."""
        pages = self.data()["pages"]
        return "\n".join(p["page_content"] for p in pages if p["page"] in self.amendment)


GLASS = Norm("gost-24866-2014.json", "ГОСТ 24866-2014", range(29, 33), date(2020, 12, 1))
CONCRETE = Norm("gost-25192-2012.json", "ГОСТ 25192-2012", range(9, 13), date(2023, 7, 1))

# every order of the amendments, by reading their pages: its first words, read or named
GLASS_ORDERS = [
    ("Предисловие изложить в новой редакции", True),
    ("По всему тексту стандарта заменить слово", True),  # every clause where it stands
    ("Раздел 2. Заменить ссылки: ГОСТ 12.0.004— 90 на", True),  # unquoted pairs
    ("Раздел 2 … сноску 2) исключить", False),  # a footnote: not a part the reader finds
    ("Раздел 2 … для ГОСТ 12.1.004— 91 заменить слово", True),  # in that entry only
    ("Раздел 2 … дополнить ссылками", True),
    ("Раздел 2 … примечание изложить в новой редакции", True),
    ("Пункт 4.2. Последний абзац изложить", True),
    ("Пункт 4.3. Последний абзац. Дополнить ссылкой: 5.1.4.", False),  # nothing quoted
    ("Пункт 4.4. Таблица 1. Графа", True),
    ("Пункт 4.4. Таблица 1 … для строки «Многослойное — пулестойкое»", True),
    ("Пункт 4.4. Таблица 1 … дополнить строкой", True),  # the row's quote is never closed
    ("Пункт 4.6, второй абзац. Заменить слова", True),
    ("Пункт 4.12 дополнить абзацем", True),
    ("Пункт 4.13 изложить в новой редакции", True),  # the new text lacks its number
    ("Пункт 4.14 Третье перечисление. Условное обозначение", False),  # a part not found
    ("Пункт 4.14 … формулу стеклопакета изложить", False),
    ("Пункт 5.1.3 дополнить абзацем", True),
    ("Подпункт 5.1.4.1 дополнить абзацами", True),
    ("Подпункт 5.1.6.1 дополнить абзацем", True),
    ("Подпункт 5.1.6.2 изложить в новой редакции", True),
    ("Пункт 5.2.2. Первый абзац перед словами", True),
    ("Пункт 5.2.3. второй абзац. Заменить слово", True),
    ("Пункт 5.2.4, первый абзац. Исключить слова", True),
    ("Пункт 5.2.5 изложить в новой редакции", True),  # its new text is not quoted
    ("Пункт 5.2.6 изложить в новой редакции", True),
    ("Пункт 5.2.7 изложить в новой редакции", True),
    ("Пункт 5.4.4 изложить в новой редакции", True),
    ("Подраздел 5.4 дополнить пунктом 5.4.7", True),
    ("Пункт 5.5.2 изложить в новой редакции", True),
    ("Пункт 7.11.5. Заменить слово", True),
    ("Пункт 7.13.5 изложить в новой редакции", True),
    ("Пункт 8.1 дополнить абзацем", True),
    ("Пункт 8.3 изложить в новой редакции", True),
    ("Раздел 8 дополнить пунктом 8.4", True),
    ("Раздел 9. Наименование раздела изложить", True),
    ("Пункт 9.1 дополнить абзацем", True),
    ("Пункт 9.4 изложить в новой редакции", True),
    ("Пункт 9.7 изложить в новой редакции", True),
    ("Пункт 9.17. Пятое перечисление изложить", True),
    ("Пункт 9.18. Заменить слова", True),
    ("Раздел 9 дополнить пунктами 9.26. 9.27, 9.28", True),
]
CONCRETE_ORDERS = [
    ("Раздел 2. Пункт 2.1. Заменить слово", True),
    ("Пункт 2.2 изложить в новой редакции", True),
    ("Пункт 2.3. Заменить слова", True),
    ("Пункт 2.3 … дополнить видом бетона Е", True),  # the same clause, the order goes on
    ("Пункт 2.4 изложить в новой редакции", True),
    ("Пункт 2.7 дополнить перечислением (перед первым)", True),
    ("Раздел 2 дополнить пунктом 2.7а (после пункта 2.7)", True),
    ("Пункт 2.8 изложить в новой редакции", True),
    ("Пункты 2.10—2.12 изложить в новой редакции", True),
    ("Раздел 3. Пункт 3.1. Первый абзац. Исключить слова", True),
    ("Раздел 4. Пункт 4.1 изложить в новой редакции", True),
    ("Приложение А изложить в новой редакции", True),
]


def edition_store(norm: Norm) -> NormDocument:
    """The standard's pages (not the amendment's) stored and split, as ingestion does."""
    data = norm.data()
    document = services.document_save(code=norm.code, title=data["full_name"])
    for page in data["pages"]:
        if page["page"] not in norm.amendment:
            text = text_clean(page["page_content"])
            NormPage.objects.create(document=document, number=page["page"], text=text)
    document_index(document_id=document.pk)
    return document


def amendment_by_command(norm: Norm, tmp_path: Path) -> tuple[NormDocument, str, str]:
    """The edition stored and its amendment given by `normagpt_ingest --amends`."""
    document = edition_store(norm)
    file = tmp_path / "izm1.txt"
    file.write_text(norm.amendment_text(), encoding="utf-8")
    out, err = StringIO(), StringIO()
    call_command(
        "normagpt_ingest", str(file), "--amends", norm.code, "--number", "1",
        "--in-force-from", norm.day.isoformat(), stdout=out, stderr=err,
    )  # fmt: skip
    return document, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("norm", "orders"), [(GLASS, GLASS_ORDERS), (CONCRETE, CONCRETE_ORDERS)], ids=["24866", "25192"]
)
def test_every_order_of_a_real_amendment_is_read_or_named(
    norm: Norm, orders: list[tuple[str, bool]]
) -> None:
    reading = editions.amendment_read(norm.amendment_text())
    found = [
        (o.text[: len(first)], bool(o.changes))
        for o, (first, _) in zip(reading.orders, orders, strict=False)
    ]
    assert found == orders
    assert len(reading.orders) == len(orders)  # none dropped, none made up
    for order in reading.orders:
        assert bool(order.changes) != bool(order.reason), order  # read, or named with why
    # every verb outside the quoted texts is an order
    text = furniture_removed(text_clean(norm.amendment_text()))
    assert len(VERB.findall(blanked(text, quoted_spans(text)))) == len(orders)


def test_real_orders_read_as_written() -> None:
    glass = editions.amendment_read(GLASS.amendment_text()).orders
    whole = glass[1].changes[0]  # «По всему тексту стандарта заменить слово: …»
    assert (whole.kind, whole.number, whole.replaces, whole.text) == (
        "section", "", "толщины", "номинальной толщины"
    )  # fmt: skip
    assert [(c.replaces, c.text) for c in glass[2].changes] == [
        ("ГОСТ 12.0.004— 90", "ГОСТ 12.0.004—2015"),
        ("ГОСТ 26602.3—992)", "ГОСТ 26602.3—2016"),
    ]
    row = glass[11].changes[0]  # an unclosed quote closes at the next order
    assert (row.kind, row.number, row.mode, row.text) == (
        "table", "1", "append", "С полимерными пленками\nГОСТ 32563\nСМ1 — СМ4\nР1А— Р5А"
    )  # fmt: skip
    assert glass[12].changes[0].number == "4.6"  # the order after it is its own
    assert glass[24].changes[0].text.startswith("5.2.5 Для изготовления стеклопакетов")
    assert glass[24].changes[0].text.endswith("настоящего стандарта")  # the stray » dropped
    assert [(c.number, c.mode) for c in glass[41].changes] == [
        ("9.26", "add"), ("9.27", "add"), ("9.28", "add")
    ]  # fmt: skip
    concrete = editions.amendment_read(CONCRETE.amendment_text()).orders
    assert [(c.number, c.text[:5]) for c in concrete[8].changes] == [
        ("2.10", "2.10 "), ("2.11", "2.11 "), ("2.12", "2.12 ")
    ]  # fmt: skip
    assert concrete[8].changes[2].text.endswith("ГОСТ 12730.5—2018")
    assert (concrete[5].changes[0].mode, concrete[5].changes[0].part) == (
        "insert",
        "перечисление 1",
    )
    assert (concrete[6].changes[0].number, concrete[6].changes[0].mode) == ("2.7а", "add")
    appendix = concrete[11].changes[0]
    assert (appendix.kind, appendix.number, appendix.mode) == ("section", "А", "section")
    assert "(Продолжение Изменения" not in appendix.text  # the pages' running lines left out


@pytest.mark.django_db
@pytest.mark.parametrize("norm", [GLASS, CONCRETE], ids=["24866", "25192"])
def test_a_real_amendment_by_the_command_every_order_applied_or_named(
    norm: Norm, tmp_path: Path
) -> None:
    document, out, err = amendment_by_command(norm, tmp_path)
    reading = editions.amendment_read(norm.amendment_text())
    amendment = document.amendments.get(number=1)
    assert amendment.changes.count() == len(reading.changes)
    assert [o.text for o in amendment.unread_orders.all()] == [o.text for o in reading.unread]
    for order in reading.unread:  # each order not read is named, with its reason
        assert f"{order.reason}): {order.shown}" in err
    missed = list(amendment.changes.filter(applied=False))
    for change in missed:  # each change not made is named
        assert f"not made on the edition's text: {editions.change_label(change)}" in err
    assert len(err.splitlines()) == len(reading.unread) + len(missed)
    assert f"amendment 1 in force from {norm.day}, {len(reading.changes)} clause(s) changed" in out
    made = {editions.change_label(c) for c in missed}
    if norm is GLASS:  # what this edition's text cannot give: the dataset's OCR, a footnote
        assert "разд. 2: слова «ГОСТ 26602.3—992)» → «ГОСТ 26602.3—2016»" in made  # «99*>»
        assert any("«Р6В. Р7В. Р8В» → «Р1В. Р2В. РЗВ»" in label for label in made)  # «Р78»
        assert made <= {
            "разд. 2: слова «ГОСТ 26602.3—992)» → «ГОСТ 26602.3—2016»",
            "табл. 1 (после «Многослойное — взломостойкое»): слова «Р6В. Р7В. Р8В» → «Р1В. Р2В. РЗВ»",
            "табл. 1 (после «Многослойное — пулестойкое»): слова «П1 — Пба» → «С1. Бр1 — Брб»",
            "табл. 1: дополнение «С полимерными пленками ГОСТ 32563 СМ1 — СМ4 Р1А— Р5А»",
        }  # table 1 until the splitter reads «Т а б л и ц е 1» (OCR) as its caption
    else:
        assert missed == []


def text_on(document: NormDocument, number: str, day: date) -> str | None:
    held = editions.clause_version(document.pk, number, day)
    return held.text if held is not None else None


# (clause, what its text holds before the day, after it, and not after it)
GLASS_CLAUSES = [
    ("4.6", "стеклопакетам, имеющих размеры", "стеклопакетам, имеющим размеры", "имеющих"),
    ("4.13", "4.13 Рекомендуемое расстояние", "4.13 При использовании декоративной рамки", "Змм"),
    ("5.2.5", "толщиной не менее 3 мм.", "не менее 4 мм с учетом требований 9.3.9.4 настоящего стандарта", "»"),
    ("7.11.5", "Стеклопакет читают выдержавшим", "Стеклопакет считают выдержавшим", "читают"),
    ("9.17", "- длительное присутствие влаги и загрязнений на поверхности стекла;",
     "- длительное присутствие влаги и загрязнений на поверхности стекла и торцевой части "
     "стеклопакета\n- резкие перепады температур;", "стекла;"),
]  # fmt: skip
CONCRETE_CLAUSES = [
    ("2.3", "вызывающей химическую коррозию (ХА).",
     "вызывающей химическую и биологическую коррозию (ХА).\nЕ — бетоны, эксплуатируемые в среде "
     "с различной влажностью (W0, WF, WA, WS)\nП р и м е ч а н и е", "вызывающей химическую коррозию"),
    ("2.7", "твердеющие:\n- в естественных условиях;",
     "твердеющие:\n- в нормальных условиях;\n- в естественных условиях;", "твердеющие:\n- в естественных"),
    ("2.12", "от W4 до W12", "от W16 до W20).\nП р и м е ч а н и е", "W12"),
    ("3.1", "должно включать в себя, как правило", "должно включать, как правило", "в себя"),
    ("А.1.1", "А.1.1 напрягающий бетон", "А.1.1 архитектурный бетон: Бетон, поверхность", "напрягающий"),
]  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("norm", "clause"),
    [(GLASS, c) for c in GLASS_CLAUSES] + [(CONCRETE, c) for c in CONCRETE_CLAUSES],
    ids=[f"24866-{c[0]}" for c in GLASS_CLAUSES] + [f"25192-{c[0]}" for c in CONCRETE_CLAUSES],
)
def test_a_clause_before_and_after_the_amendments_day(
    norm: Norm, clause: tuple[str, str, str, str], tmp_path: Path
) -> None:
    number, before, after, gone = clause
    document, _, _ = amendment_by_command(norm, tmp_path)
    then = text_on(document, number, norm.day - timedelta(days=1))
    assert then is not None, f"the reader finds clause {number} of {norm.code}"
    now = text_on(document, number, norm.day)
    assert before in then
    assert now is not None
    assert after in now
    assert gone not in now.replace(after, "")


@pytest.mark.django_db
def test_a_table_amended_by_rows_named(tmp_path: Path) -> None:
    document, _, _ = amendment_by_command(GLASS, tmp_path)
    # «Т а б л и ц е  1 — Виды стекла …» (page 8, OCR of «Таблица 1») is table 1's caption
    then = editions.clause_version(document.pk, "1", GLASS.day - timedelta(days=1))
    assert then is not None
    assert then.kind == "table"
    now = editions.clause_version(document.pk, "1", GLASS.day)
    assert now is not None
    assert "П1 - Пба" in then.text
    assert "С1. Бр1 — Брб" in now.text  # the row «Многослойное — пулестойкое», any dash
    assert "Р6В. Р78. Р8В" in now.text  # OCR's «Р78» is not «Р7В»: that change is named
    assert "С полимерными пленками\nГОСТ 32563\nСМ1 — СМ4\nР1А— Р5А" in now.text


@pytest.mark.django_db
def test_clauses_added_stand_after_the_one_they_follow(tmp_path: Path) -> None:
    document, _, _ = amendment_by_command(CONCRETE, tmp_path)
    day, before = CONCRETE.day, CONCRETE.day - timedelta(days=1)
    assert text_on(document, "2.7а", before) is None
    added = editions.clause_version(document.pk, "2.7А", day)  # a letter in either case
    assert added is not None
    assert added.text.startswith("2.7а По технологии формования бетоны подразделяют")
    held = [editions.clause_version(document.pk, n, day) for n in ("2.7", "2.7а", "2.8")]
    places = [(c.page_id, c.position, c.pk) for c in held if c is not None]
    assert len(places) == 3
    assert places == sorted(places)  # 2.7а between 2.7 and 2.8, on 2.7's page
    assert text_on(document, "А.1.9", day).startswith("А.1.9 фильтрующий (дренирующий) бетон")  # type: ignore[union-attr]
    assert text_on(document, "А.1.9", before) is None
    (tmp_path / "glass").mkdir()
    glass, _, _ = amendment_by_command(GLASS, tmp_path / "glass")
    assert text_on(glass, "5.4.7", GLASS.day).startswith("5.4.7 Требования безопасности")  # type: ignore[union-attr]
    four_five = text_on(glass, "4.5", GLASS.day) or ""  # «толщины» → «номинальной толщины»
    assert "Предельное отклонение номинальной толщины стеклопакетов" in four_five  # everywhere,
    assert "номинальной номинальной" not in four_five  # but not where it reads so already
    assert "их номинальной толщины" in (text_on(glass, "3.6", GLASS.day) or "")


@pytest.mark.django_db
def test_a_text_an_amendment_could_not_change_carries_its_mark_after_its_day(
    tmp_path: Path,
) -> None:
    from normagpt.agent.nodes import amended_on_page

    document, _, _ = amendment_by_command(GLASS, tmp_path)
    day, before = GLASS.day, GLASS.day - timedelta(days=1)
    numbers = ["4.4", "4.6", "4.14"]
    assert editions.clause_marks(document_id=document.pk, numbers=numbers, day=before) == {}
    marks = editions.clause_marks(document_id=document.pk, numbers=numbers, day=day)
    assert set(marks) == {"4.4", "4.14"}  # 4.6 is amended: its new text is served
    assert marks["4.14"].startswith(
        "Изменение № 1 (с 01.12.2020) меняет этот пункт; изменение не применено: «Пункт 4.14 "
        "Третье перечисление. Условное обозначение двухкамерного стеклопакета изложить"
    )
    assert "«Пункт 4.4. Таблица 1. Графа «Обозначение стекла" in marks["4.4"]
    page = NormClause.objects.get(document=document, number="4.14", amendment=None).page
    assert "[4.14: Изменение № 1 (с 01.12.2020) меняет этот пункт" in amended_on_page(page, day)
    assert "меняет этот пункт" not in amended_on_page(page, before)


@pytest.mark.django_db
def test_search_and_the_claim_check_carry_the_mark_of_an_amendment_not_made(
    tmp_path: Path,
) -> None:
    """Found by a search after the amendment's day, clause 4.14 (whose amended parts the
    reader could not find) carries the amendment's mark, in the hit and in its snippet; a
    claim checked against its text then is not confirmed, and says why."""
    from normagpt import formatting, services
    from normagpt.verification import Checker

    amendment_by_command(GLASS, tmp_path)
    day, before = GLASS.day, GLASS.day - timedelta(days=1)
    keywords = ["п. 4.14 ГОСТ 24866 условное обозначение стеклопакета"]
    [hit] = services.pages_search(keywords=keywords, limit=1, as_of=day)
    found = next(h for h in hit.clauses if h.clause.number == "4.14")
    assert found.mark.startswith("Изменение № 1 (с 01.12.2020) меняет этот пункт")
    assert formatting.hit_as_dict(hit)["snippet"].startswith("[Изменение № 1 (с 01.12.2020)")
    [earlier] = services.pages_search(keywords=keywords, limit=1, as_of=before)
    assert not any(h.mark for h in earlier.clauses)
    claim = (
        "Ширина дистанционной рамки однокамерного стеклопакета — 16 мм (п. 4.14 ГОСТ 24866-2014)."
    )
    [then] = Checker(sources=[], pages=[], as_of=before).answer(claim)
    [now] = Checker(sources=[], pages=[], as_of=day).answer(claim)
    assert then.verdict == "confirmed"
    assert now.verdict == "unconfirmed"
    assert "п. 4.14 ГОСТ 24866-2014: Изменение № 1 (с 01.12.2020) меняет этот пункт" in now.reason


def test_parts_of_a_clause_are_found_as_a_reader_finds_them() -> None:
    from normagpt.editions.texts import part_span, words_replaced

    clause = (
        "4.2 Стеклопакеты подразделяют на типы:\n- СПО — однокамерные;\n- СПД — двухкамерные.\n"
        "Камеры заполняют воздухом\nили газом.\nз\nДопускается иное.\n"
        "П р и м е ч а н и е  — Примечание."
    )
    last = part_span(clause, "абзац -1")  # the note is not a paragraph of the clause
    assert last is not None
    assert clause[slice(*last)] == "Допускается иное."  # «з», a page number read as a letter
    item = part_span(clause, "перечисление 2")
    assert item is not None
    assert clause[slice(*item)] == "- СПД — двухкамерные."
    assert part_span(clause, "перечисление 3") is None
    table = "Многослойное:\n- пулестойкое\nГОСТ 30826\nП1 - Пба\nП1 - Пба2"
    assert words_replaced(table, "П1 — Пба", "С1", part="после «Многослойное — пулестойкое»") == (
        "Многослойное:\n- пулестойкое\nГОСТ 30826\nС1\nП1 - Пба2",
        1,
    )  # the row's cells stand apart: the words once in the table, any dash
    refs = "ГОСТ 1—90 Общие\nположения\nГОСТ 2—91 Общие\nположения"
    assert words_replaced(refs, "положения", "требования", part="после «ГОСТ 2— 91»")[0] == (
        "ГОСТ 1—90 Общие\nположения\nГОСТ 2—91 Общие\nтребования"
    )  # the entry named: the words after it
    text = "номинальной толщины и толщины"
    assert words_replaced(text, "толщины", "номинальной толщины", every=True) == (
        "номинальной толщины и номинальной толщины",
        1,
    )  # where it reads as the new words already, left alone


# -- the review findings -----------------------------------------------------------------


def test_finding_1_an_unclosed_quote_ends_at_the_next_order() -> None:
    text = (
        "Пункт 5.1 изложить в новой редакции:\n«5.1 Новый текст без закрывающей кавычки.\n"
        "Пункт 5.2 исключить.\n"
        "Пункт 5.3. Заменить слова «свай» на «опор».\n"
    )
    read = [(c.number, c.mode, c.text) for c in editions.changes_parse(text)]
    assert read == [
        ("5.1", "replace", "5.1 Новый текст без закрывающей кавычки."),
        ("5.2", "replace", ""),
        ("5.3", "substitute", "опор"),
    ]
    assert editions.changes_unread(text) == []


def test_finding_2_the_clause_named_is_the_one_an_order_starts_with() -> None:
    text = "Пункт 6.1.2. Второй абзац (со ссылкой на пункт 5.3). Заменить слова «сваи» на «опоры»."
    [change] = editions.changes_parse(text)
    assert change.number == "6.1.2"  # not 5.3
    assert (change.part, change.replaces) == ("абзац 2", "сваи")


def test_finding_3_every_pair_is_read_or_the_order_named() -> None:
    text = "Пункт 5.2. Заменить слова «А» на «Б», слова «В» на «Г»; а также «Д» на «Е»."
    pairs = [(c.replaces, c.text) for c in editions.changes_parse(text)]
    assert pairs == [("А", "Б"), ("В", "Г"), ("Д", "Е")]
    odd = "Пункт 5.2. Заменить слова «А» на «Б» и далее «В» на «Г»."
    assert editions.changes_unread(odd) == [odd]  # not half read: named whole


@pytest.mark.django_db
def test_finding_4_words_are_replaced_only_where_they_stand_as_words(tmp_path: Path) -> None:
    document = small_edition(
        "5.1 Толщина листа 12,5 мм.\n5.2 Толщина листа 2,5 мм, допуск 12,5 мм.\n"
        "5.3 Образцы считают выдержавшими испытание.\n"
    )
    editions.amendment_save(
        code=document.code, number=1, in_force_from=date(2024, 1, 1),
        changes=editions.changes_parse(
            "Пункт 5.1. Заменить слова «2,5» на «3,0».\n"
            "Пункт 5.2. Заменить слова «2,5» на «3,0».\n"
            "Пункт 5.3. Заменить слово «читают» на «принимают»."
        ),
    )  # fmt: skip
    day = date(2024, 1, 1)
    assert text_on(document, "5.1", day) == "5.1 Толщина листа 12,5 мм."  # not «13,0»
    assert text_on(document, "5.2", day) == "5.2 Толщина листа 3,0 мм, допуск 12,5 мм."
    assert text_on(document, "5.3", day) == "5.3 Образцы считают выдержавшими испытание."
    applied = list(NormAmendmentChange.objects.order_by("id").values_list("number", "applied"))
    assert applied == [("5.1", False), ("5.2", True), ("5.3", False)]


@pytest.mark.django_db
def test_finding_5_no_clause_is_made_up_or_overwritten() -> None:
    document = small_edition("5.1 Первый пункт.\n5.2 Второй пункт.\n")
    editions.amendment_save(
        code=document.code, number=1, in_force_from=date(2024, 1, 1),
        changes=editions.changes_parse(
            "Пункт 9.9 исключить.\n"
            "Пункт 9.8 изложить в новой редакции: «9.8 Такого пункта нет.»\n"
            "Раздел 5 дополнить пунктом 5.2: «5.2 Не тот пункт.»\n"
            "Раздел 5 дополнить пунктом 5.3: «5.3 Новый пункт.»\n"
        ),
    )  # fmt: skip
    day = date(2024, 1, 1)
    assert text_on(document, "9.8", day) is None  # no phantom
    assert text_on(document, "5.2", day) == "5.2 Второй пункт."  # not overwritten
    assert text_on(document, "5.3", day) == "5.3 Новый пункт."
    applied = list(NormAmendmentChange.objects.order_by("id").values_list("number", "applied"))
    assert applied == [("9.9", False), ("9.8", False), ("5.2", False), ("5.3", True)]


def test_finding_6_a_new_wording_keeps_all_its_quoted_blocks() -> None:
    text = "Пункт 5.2 изложить в новой редакции:\n«5.2 Первый абзац.»\n«Второй абзац.»\n"
    [change] = editions.changes_parse(text)
    assert change.text == "5.2 Первый абзац.\nВторой абзац."


def test_finding_7_every_verb_is_an_order() -> None:
    text = (
        "Пункт 5.3 признать утратившим силу.\n"
        "Пункт 5.4. Первый абзац читать: «Новый первый абзац.»\n"
        "Пункт 5.5. После слов «до 20 мм» вставить слова «включительно».\n"
        "Пункт 5.6. Рисунок 2 вставить после второго абзаца.\n"
    )
    read = [(c.number, c.mode, c.part, c.replaces, c.text) for c in editions.changes_parse(text)]
    assert read == [
        ("5.3", "replace", "", "", ""),
        ("5.4", "replace", "абзац 1", "", "Новый первый абзац."),
        ("5.5", "substitute", "", "до 20 мм", "до 20 мм включительно"),
    ]
    assert editions.changes_unread(text) == ["Пункт 5.6. Рисунок 2 вставить после второго абзаца."]


@pytest.mark.django_db
def test_finding_8_numbers_compare_in_one_form_whatever_their_letters() -> None:
    document = small_edition("2.6 Шестой пункт.\n2.7 Седьмой пункт.\n")
    clauses = NormClause.objects.filter(document=document)  # as the splitter stores them:
    clauses.filter(number="2.6").update(number="2.7а", text="2.7а Пункт с буквой.")  # letters
    clauses.filter(number="2.7").update(number="А.1.2")  # in Cyrillic
    editions.amendment_save(
        code=document.code, number=1, in_force_from=date(2024, 1, 1),
        changes=[
            editions.Change("clause", "2.7А", "буквой и цифрой", "substitute", "буквой"),
            editions.Change("clause", "A.1.2", "Новый", "substitute", "Седьмой"),  # Latin A
        ],
    )  # fmt: skip
    day = date(2024, 1, 1)
    assert text_on(document, "2.7а", day) == "2.7а Пункт с буквой и цифрой."
    assert text_on(document, "А.1.2", day) == "2.7 Новый пункт."
    stored = list(NormAmendmentChange.objects.order_by("id").values_list("number", "applied"))
    assert stored == [("2.7а", True), ("А.1.2", True)]  # stored in the one form


@pytest.mark.django_db
def test_finding_9_the_admin_takes_typed_changes_with_a_scanned_file_and_a_new_file_whole(
    client: Any, staff: Any
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.normagpt.test_editions import inline

    document = small_edition("5.1 Первый пункт.\n5.2 Второй пункт.\n")
    client.force_login(staff)
    typed = {"kind": "clause", "number": "5.2", "mode": "replace", "text": "5.2 Введён рукой."}
    form = {"document": str(document.pk), "number": "1", "in_force_from": "2024-01-01"}
    scanned = SimpleUploadedFile("izm1.pdf", blank_pdf(), content_type="application/pdf")
    client.post("/admin/normagpt/normamendment/add/", {**form, "file": scanned, **inline(typed)})
    amendment = document.amendments.get(number=1)  # a file with no text, changes typed in
    assert text_on(document, "5.2", date(2024, 1, 1)) == "5.2 Введён рукой."
    refused = client.post(
        "/admin/normagpt/normamendment/add/",
        {**form, "number": "2", "file": SimpleUploadedFile("izm2.pdf", blank_pdf()), **inline()},
    ).content.decode()
    assert "the amendment states no change" in refused  # and nothing typed: refused
    assert not document.amendments.filter(number=2).exists()
    first = "Пункт 5.1 исключить.\nРаздел 5 дополнить пунктом 5.3: «5.3 Опечатка.»\n"
    corrected = "Раздел 5 дополнить пунктом 5.4: «5.4 Верный пункт.»\n"
    url = f"/admin/normagpt/normamendment/{amendment.pk}/change/"
    for text in (first, corrected):
        rows = [
            {"id": str(pk), "amendment": str(amendment.pk), "kind": kind, "number": number,
             "mode": mode, "text": text_}
            for pk, kind, number, mode, text_ in amendment.changes.values_list(
                "pk", "kind", "number", "mode", "text"
            )
        ]  # fmt: skip
        client.post(url, {**form, "file": SimpleUploadedFile("f.txt", text.encode()),
                          **inline(*rows, initial=len(rows))})  # fmt: skip
    numbers = sorted(amendment.changes.values_list("number", flat=True))
    assert numbers == ["5.2", "5.4"]  # the typed row kept; the first file's rows gone whole
    assert text_on(document, "5.1", date(2024, 1, 1)) == "5.1 Первый пункт."
    assert text_on(document, "5.3", date(2024, 1, 1)) is None


def small_edition(text: str) -> NormDocument:
    document = services.document_save(code="СП 999.1325800.2020", title="Проба")
    NormPage.objects.create(document=document, number=1, text="5 Требования\n" + text)
    document_index(document_id=document.pk)
    return document


def blank_pdf() -> bytes:
    """A one-page PDF with no text layer: a scanned amendment."""
    import io

    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument.new()
    pdf.new_page(595, 842)
    buffer = io.BytesIO()
    pdf.save(buffer)
    return buffer.getvalue()


# -- no order is dropped, whatever the quotes -------------------------------------------

ORDER_TEMPLATES = [  # (text, its verbs)
    ("Пункт {n} изложить в новой редакции:\n«{n} Текст пункта.»\n", 1),
    ("Пункт {n} изложить в новой редакции:\n«{n} Текст без закрывающей кавычки.\n", 1),
    ("Пункт {n} исключить.\n", 1),
    ("Пункт {n}. Заменить слова «а» на «б»; дополнить абзацем: «Абзац.»\n", 2),
    ("Пункт {n}. Заменить слова «а» на «б», «в» на\n", 1),
    ("Раздел {s} дополнить пунктом {n}: «{n} Новый «вложенный» текст\n", 1),
    ("Пункт {n}. Какой-то абзац исключить; формулу изложить: «x»\n", 2),
    ("Таблицу {s}.1 дополнить строкой:\n«\nстрока\n", 1),
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(range(len(ORDER_TEMPLATES))), min_size=1, max_size=12))
def test_no_order_is_dropped_whatever_the_quotes(picked: list[int]) -> None:
    text = "".join(
        ORDER_TEMPLATES[k][0].format(n=f"{i + 1}.{k + 1}", s=i + 1) for i, k in enumerate(picked)
    )
    reading = editions.amendment_read(text)
    assert len(reading.orders) == sum(ORDER_TEMPLATES[k][1] for k in picked)
    for order in reading.orders:
        assert bool(order.changes) != bool(order.reason)
    named = [order.targets[-1][1] for order in reading.orders]  # each order its own clause
    assert named == [
        f"{i + 1}.{k + 1}" if k != 7 else f"{i + 1}.1"
        for i, k in enumerate(picked)
        for _ in range(ORDER_TEMPLATES[k][1])
    ]
