"""Real norm documents read as a person reads them: excerpts of the public dataset
Akumsk/russian-construction-standards (tests/fixtures/norms/SOURCES.md), each holding a case
the reader once got wrong: a preface's items, a table of contents, a table's numbered rows, a
number alone on its line, letter-spaced captions, integer cells, a clause over two pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from normagpt import indexing, services
from normagpt.clauses import Clause, clauses_split, document_read
from normagpt.dataset import ATTRIBUTION
from normagpt.models import NormClause, NormDocument, NormPage
from normagpt.split_words import _LETTER_WORDS, letter_spaced_joined, words_rejoined
from normagpt.terms import PART
from tests.normagpt.material import FIXTURES, pages_of, pages_stored


def by_number(units: list[Clause], kind: str = "clause") -> dict[str, Clause]:
    return {u.number: u for u in units if u.kind == kind}


def test_a_prefaces_items_open_no_section_and_the_real_sections_are_read() -> None:
    """ГОСТ 10180-2012: «4 Приказом Федерального агентства …» and «5 Настоящий стандарт
    соответствует …» are items of the preface; sections 1–4 are read with their titles."""
    structure = document_read(pages_of("gost-10180-2012.json"))
    sections = [(h.number, h.title) for h in structure.headings if "." not in h.number]
    assert sections[:4] == [
        ("1", "Область применения"),
        ("2", "Нормативные ссылки"),
        ("3", "Сущность методов"),
        ("4", "Контрольные образцы"),
    ]
    clauses = by_number(structure.units)
    assert clauses["4.1.1"].heading == "4 Контрольные образцы › 4.1 Форма, размеры и число образцов"
    preface = next(u for u in structure.units if "Приказом Федерального агентства" in u.text)
    assert preface.kind == "text"
    assert "Приказом" not in preface.heading


def test_contents_entries_open_no_part() -> None:
    """The contents («1 Область применения ……… 1», «Приложение А (обязательное) …», wrapped
    over lines) open no section, clause or appendix: the text after them is read in order."""
    structure = document_read(pages_of("gost-10180-2012.json"))
    assert not any(h.number.startswith("Приложение") for h in structure.headings)
    contents = next(u for u in structure.units if u.text.startswith("Содержание"))
    assert contents.kind == "text"
    assert "Приложение А" in contents.text
    units = clauses_split(pages_of("sp-54-13330-2016.json"))
    assert "7.1" not in by_number(units)  # «7.1 Предотвращение распространения пожара ……11»
    assert [u.number for u in units if u.kind == "clause"][:3] == ["1.1", "1.2", "1.3"]


def test_a_tables_numbered_rows_are_its_cells_not_sections() -> None:
    """СП 4.13130.2013, table 7: rows «8. Производственные …» to «12. Ось железнодорожного …»
    and the notes «1. Приведенные расстояния …» stay in the table; 6.1.20 follows 6.1.19."""
    structure = document_read(pages_of("sp-4-13130-2013.json"))
    assert structure.headings == []
    numbers = [u.number for u in structure.units if u.kind == "clause"]
    assert numbers[numbers.index("6.1.19") + 1] == "6.1.20"
    table = by_number(structure.units, "table")["7"]
    assert "8. Производственные" in table.text
    assert "12. Ось железнодорожного или трамвайного пути, край" in table.text
    assert table.span == 2


def test_a_number_alone_on_its_line_takes_the_next_line_as_its_text() -> None:
    """СП 54.13330.2016: «4.2» alone, «Размещение жилого здания …» below: clause 4.2, and 4.1
    is not the whole section (it held 4.1–4.8 when the lone number was skipped)."""
    clauses = by_number(clauses_split(pages_of("sp-54-13330-2016.json")))
    assert clauses["4.2"].text.startswith("4.2 Размещение жилого здания, расстояния от него")
    assert "4.2.1" in clauses
    assert "Размещение жилого здания" not in clauses["4.1"].text
    assert [n for n in clauses if n.startswith("4.")][:3] == ["4.1", "4.2", "4.2.1"]


@pytest.mark.parametrize(
    ("fixture", "numbers"),
    [("sp-20-13330-2016.json", ["8.1", "8.2", "8.3"]), ("gost-25192-2012.json", ["1"])],
)
def test_letter_spaced_captions_open_tables(fixture: str, numbers: list[str]) -> None:
    """«Т а б л и ц а  8.3» as the official typography sets it opens table 8.3 (its rows, to
    «Окончание таблицы 8.3» overleaf, are the table's), not text of the clause before."""
    tables = by_number(clauses_split(pages_of(fixture)), "table")
    assert [n for n in numbers if n in tables] == numbers
    if "8.3" in tables:
        assert tables["8.3"].span == 1
        assert "Окончание таблицы 8.3" in tables["8.3"].text


def test_a_caption_whose_one_the_ocr_read_as_an_exclamation_mark_opens_table_1() -> None:
    """СП 64.13330.2017 as the dataset holds it: «Т а б л и ц а !» (the «1» read as «!», in
    seven documents of the dataset) opens table 1, the service classes of timber; its rows
    are the table's, not clause 5.5's (a right answer from the table was once unconfirmed)."""
    units = clauses_split(pages_of("sp-64-13330-2017-ocr-one.json"))
    table = by_number(units, "table")["1"]
    assert "4 (мокрый)" in table.text
    assert "мокрый" not in by_number(units)["5.5"].text


def test_a_table_is_indexed_with_the_sentences_pointing_to_it() -> None:
    """The sentences of a document's clauses that point to one of its tables («Клеи … должны
    соответствовать таблице 2») go into the table's search text with its heading; a
    reference to another document's table («по таблице 1 СП 20.13330») does not."""
    units = clauses_split(pages_of("sp-64-13330-2017-ocr-one.json"))
    pointed = indexing.tables_pointed(units)
    assert any("Клеи, используемые для склеивания" in s for s in pointed["2"])
    assert any("Для определения собственного веса" in s for s in pointed["Г.1"])
    rows = {(row[1], row[2]): row[9] for row in indexing.pages_indexed(
        pages_of("sp-64-13330-2017-ocr-one.json")).clauses}  # fmt: skip
    heading = rows[("table", "Г.1")].split(PART)[0]
    assert {"собствен", "вес", "определен"} <= set(heading.split())
    other = Clause("clause", "9.9", "", 0, 0, 0, lines=["9.9 Нагрузки принимают по таблице 2 "
                                                       "СП 20.13330.2016."])  # fmt: skip
    assert indexing.tables_pointed([*units, other])["2"] == pointed["2"]


def test_a_numbering_garbled_by_ocr_is_picked_up_again_after_a_table() -> None:
    """ГОСТ Р 58882-2020: OCR wrote «7.45.8» … «7.45.12» for 7.4.5.8 … 7.4.5.12; after table 2
    the numbering goes on at 7.4.6.1, 7.5, 7.5.1.1 (they once stayed in the table, and every
    clause after them with them); 7.5.2.1 is under 7.5.2, not 7.5.1."""
    units = clauses_split(pages_of("gost-r-58882-2020.json"))
    clauses = by_number(units)
    assert {"7.4.6.1", "7.4.6.2", "7.5", "7.5.1.1", "7.5.2.1"} <= set(clauses)
    assert "7.4.6.1" not in by_number(units, "table")["2"].text
    assert "7.5.1 Характеристики" not in clauses["7.5.2.1"].heading


def test_an_amendment_bound_in_is_no_parts_text() -> None:
    """ГОСТ 25192-2012 as the dataset holds it: Изменение № 1 bound in after appendix А. Its
    orders («Пункт 2.2 изложить в новой редакции: «2.2 …»») neither open parts nor go on with
    the appendix's last clause: they are text of their own, under no heading."""
    units = clauses_split(pages_of("gost-25192-2012.json"))
    parts = [u for u in units if u.kind != "text"]
    assert not [u.number for u in parts if "изложить в новой редакции" in u.text]
    amendment = [u for u in units if "Изменение № 1" in u.text]
    assert amendment
    assert all(u.kind == "text" and u.heading == "" for u in amendment)


def test_every_integer_cell_of_a_table_is_kept() -> None:
    """СП 63.13330.2018, tables 10.1а and 10.1: cells holding only an integer (35, 30, 25 …)
    are the table's values, not page numbers; the page numbers are not in any unit."""
    tables = by_number(clauses_split(pages_of("sp-63-13330-2018.json")), "table")
    rows = tables["10.1а"].text.splitlines()
    assert rows[rows.index("а) сборные") + 1 : rows.index("а) сборные") + 4] == ["40", "35", "30"]
    cells = tables["10.1"].text.splitlines()
    assert {"20", "25", "30", "40"} <= set(cells)


def test_a_clause_over_two_pages_is_one_unit_that_knows_both() -> None:
    units = by_number(clauses_split(pages_of("sp-63-13330-2018.json")))
    assert units["10.3.2"].span == 1
    assert "таблице 10.1" in units["10.3.2"].text
    assert "Для конструктивной арматуры" in units["10.3.2"].text


@pytest.mark.django_db
def test_a_clause_running_on_is_on_both_pages_and_search_brings_both(settings) -> None:  # type: ignore[no-untyped-def]
    """Stored and indexed, 10.3.2 knows its second page: that page lists it, and a search
    that finds it brings the page it runs on to, for the agent to read."""
    document = pages_stored(
        "СП 63.13330.2018", "Бетонные конструкции", "sp-63-13330-2018.json", 104
    )
    clause = NormClause.objects.get(document=document, number="10.3.2")
    assert (clause.page.number, clause.span) == (105, 1)
    assert "10.3.2" in NormPage.objects.get(document=document, number=106).clauses
    [hit] = services.pages_search(keywords=["п. 10.3.2 СП 63 толщина защитного слоя"], limit=1)
    assert hit.page.number == 105
    assert [page.number for page in hit.pages_after] == [106]


@pytest.mark.django_db
def test_the_dataset_command_loads_documents_with_their_source_and_goes_on_after_a_stop(
    tmp_path: Path,
    capsys,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    """A checkout's metadata/*.json become documents by their codes with the dataset's
    attribution, a summary line each; a second run skips what it loaded; a broken file is
    named and the others still load."""
    folder = tmp_path / "metadata"
    folder.mkdir()
    for name in ("sp-54-13330-2016.json", "gost-10180-2012.json"):
        (folder / name).write_bytes((FIXTURES / name).read_bytes())
    (folder / "broken.json").write_text('{"pages": ', encoding="utf-8")
    with pytest.raises(Exception, match="1 file"):
        call_command("normagpt_ingest_dataset", str(tmp_path))
    out, err = capsys.readouterr()
    assert "broken.json: not a document of Akumsk/russian-construction-standards" in err
    assert "СП 54.13330.2016: 12 pages, " in out
    assert "ГОСТ 10180-2012: 6 pages" in out
    sp = NormDocument.objects.get(code="СП 54.13330.2016")
    assert (sp.source, sp.ingest_status, sp.page_count) == (ATTRIBUTION, "done", 12)
    assert NormClause.objects.filter(document=sp, number="4.2").exists()
    (folder / "broken.json").unlink()
    call_command("normagpt_ingest_dataset", str(tmp_path), "--only", "СП 54")
    out, _ = capsys.readouterr()
    assert "СП 54.13330.2016: 12 pages" in out
    assert "(unchanged)" in out
    assert "0 loaded" in out


@pytest.mark.django_db
def test_a_page_of_the_dataset_shows_its_attribution(admin_user) -> None:  # type: ignore[no-untyped-def]
    document = services.document_save(code="СП 54.13330.2016", title="Здания жилые")
    NormDocument.objects.filter(pk=document.pk).update(source=ATTRIBUTION)
    page = NormPage.objects.create(document=document, number=1, text="1 Область применения")
    client = Client()
    client.force_login(admin_user)
    html = client.get(f"/normagpt/pages/{page.pk}/").content.decode()
    assert "Akumsk/russian-construction-standards" in html
    assert "CC BY 4.0" in html


@pytest.mark.django_db
def test_the_agent_reads_and_may_cite_every_page_of_a_clause_it_reads(llm, settings) -> None:  # type: ignore[no-untyped-def]
    """10.3.2 of СП 63 begins on page 105 and ends on 106: a step reading one page (the one
    10.3.2 is found on) is shown both, and an answer citing the value on page 106 keeps its
    source."""
    settings.NORMAGPT_PAGES_PER_STEP = 1
    from normagpt.agent.runner import run_advance
    from tests.normagpt.scripted_llm import final, plan, step, verdict

    document = services.document_save(code="СП 63.13330.2018", title="Бетонные конструкции")
    texts = pages_of("sp-63-13330-2018.json")
    NormPage.objects.bulk_create(
        [NormPage(document=document, number=n, text=t) for n, t in enumerate(texts, 104)]
    )
    indexing.document_index(document_id=document.pk)
    answer = "В ячеистом бетоне — не менее 25 мм (п. 10.3.2 СП 63.13330.2018)."
    llm.play(
        planner=[plan(("Защитный слой", ["п. 10.3.2 толщина защитного слоя"], ["СП 63"]))],
        executor=[step(("СП 63.13330.2018", "10.3.2", 106, "не менее 25 мм"))],
        judge=[verdict("FINALIZE")],
        finalizer=[final(answer, ("СП 63.13330.2018", "10.3.2", 106))],
    )
    run = services.run_create(question="Толщина защитного слоя в ячеистом бетоне?")
    run = run_advance(run_id=run.pk)
    prompt = next(c for c in llm.calls if c.node == "executor").messages[1]["content"]
    assert "Страница 105 — СП 63.13330.2018" in prompt
    assert "Страница 106 — СП 63.13330.2018" in prompt
    assert "из ячеистого бетона толщина защитного слоя во всех случаях" in prompt
    assert [(s["clause"], s["page"]) for s in run.sources] == [("10.3.2", 106)]


def test_words_the_text_layer_split_are_joined_again() -> None:
    """СП 52.13330.2016 (and СП 121.13330.2019, СП 12.13130.2009, СП 52-105-2009 …): the text
    layer split words after a wide glyph («освещ енность», «ж илы х», «лю бы х»); read as
    written, «освещенность» was in none of these clauses."""
    clauses = by_number(clauses_split(pages_of("sp-52-13330-2016-split-words.json")))
    assert "среднюю освещенность на дорожном покрытии" in clauses["7.5.5.6"].text
    assert "на площадке запасного или технического входа" in clauses["7.5.5.6"].text
    assert "окнах квартир жилых зданий" in clauses["7.5.5.3"].text
    assert "на любых улицах, прилегающих к" in clauses["7.5.5.3"].text
    assert " ж " not in clauses["7.5.5.3"].text
    assert "освещ " not in clauses["7.5.5.5"].text


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("к лест ничной клетке", "к лестничной клетке"),  # «клест» is a word: «к» no part
        ("Т а б л и ц а  7.22 —  Нормируемые", "Т а б л и ц а  7.22 —  Нормируемые"),
        ("П р и м е ч а н и е", "П р и м е ч а н и е"),  # letter-spaced: a caption
        ("на следующ ие", "на следующие"),  # a word, then a part of the next: not «наследующ…»
    ],
)
def test_a_preposition_a_caption_and_a_word_before_a_part_are_not_joined(
    text: str, read: str
) -> None:
    assert words_rejoined(text) == read


_WORDS = sorted({w for w in " ".join(pages_of("sp-54-13330-2016.json")).split() if w.isalpha()})


@given(st.lists(st.sampled_from(_WORDS), min_size=2, max_size=12))
def test_words_of_a_clean_page_are_never_joined(words: list[str]) -> None:
    """Words apart in a page whose text layer split none (СП 54.13330.2016) stay apart,
    however they stand: only a part no dictionary knows is joined."""
    text = " ".join(words)
    joined = words_rejoined(text)
    assert joined == text or any(not _known_word(w) for w in words)


def _known_word(word: str) -> bool:
    """A word the dictionary knows; a letter alone only as the reader counts it a word (a
    preposition, a conjunction, a unit): pymorphy3 also knows «е», «ж», «х» as
    abbreviations, which are a split word's last part as often («следующи е»)."""
    from core.russian import morphology

    if len(word) == 1:
        return word.lower() in _LETTER_WORDS
    return bool(morphology().word_is_known(word.lower()))


@pytest.mark.django_db
def test_a_table_head_set_letter_spaced_is_searched_by_its_words() -> None:
    """ГОСТ 8736-2014 sets its tables' column heads letter-spaced, whole or in pieces («С о д
    е р ж а н и е  зе р е н  кр уп н о сть ю», «и гл и н и сты х ч а сти ц»): read as
    written, their words were in no table's search text: a search for the grains under 0,16
    mm found clause 4.2.10 (the fractions sold) before table 3, which gives their share."""
    document = pages_stored(
        "ГОСТ 8736-2014", "Песок для строительных работ", "gost-8736-2014-spaced-heads.json", 9
    )
    table = NormClause.objects.get(document=document, kind="table", number="4")
    held = set(table.search_text.split())
    assert {"содержан", "пылевидн", "глинист", "частиц", "комк"} <= held
    hits = services.clauses_search(keywords=["содержание зерен крупностью менее 0,16 мм"])
    assert (hits[0].clause.kind, hits[0].clause.number) == ("table", "3")


@pytest.mark.parametrize(
    "text",
    [  # running text of the dataset that a join to the fewest words would have run together
        "по данным лабораторных испытаний в соответствии с п",  # «поданным»
        "конструкций и сооружений в земле и в водных объектах",  # «вводных»
        "питающие линии к распределительным щиткам и групповые линии к консолям и",
        "не регистрируются и не принимаются для исполнения",  # «ине»
        "работ в ходе полевого дешифрирования",  # «входе»
        "помещениями категорий г и д",  # «гид»
    ],
)
def test_running_text_is_not_read_as_letter_spaced(text: str) -> None:
    assert letter_spaced_joined(text) == text


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("с о д е р ж а н и е  п ы л е в и д н ы х", "содержание  пылевидных"),
        ("и гл и н и сты х ч а сти ц", "и глинистых частиц"),  # not «игл инистых»
        ("с о д е р ж а н и е  зе р е н  кр уп н о сть ю", "содержание  зерен  крупностью"),
        ("в ко м ка х", "в комках"),
        ("к л а сс", "класс"),
    ],
)
def test_words_set_letter_spaced_are_joined_for_search(text: str, read: str) -> None:
    assert letter_spaced_joined(text) == read
