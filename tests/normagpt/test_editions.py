"""Issue 31, editions and amendments: one code with two editions and an amendment; the same
question asked as of three days cites the edition in force then, and after the amendment's
day the clause's new text, citing the amendment. The model is scripted to read its prompt:
it answers from the first page it is shown, so what it says is what search and the pages
gave it for that day."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest
from django.core.management import call_command

from core.exceptions import InvalidInput
from normagpt import editions, services
from normagpt.agent.runner import run_advance
from normagpt.indexing import document_index
from normagpt.models import ClaimCheck, NormClause, NormDocument, NormPage, NormTerm
from normagpt.search import clauses_search, pages_search
from normagpt.terms import GENERATION, stem_counts
from tests.normagpt.scripted_llm import Call, plan, verdict

QUESTION = "Какая минимальная толщина защитного слоя бетона рабочей арматуры плит перекрытия?"
KEYWORDS = ["толщина защитного слоя бетона", "рабочей арматуры плит"]
HEAD = "10 Конструктивные требования\n10.3 Защитный слой бетона\n"
CLAUSE = (
    "10.3.2 Минимальная толщина защитного слоя бетона рабочей арматуры плит в закрытых "
    "помещениях при нормальной и пониженной влажности принимают не менее {} мм.\n"
    "10.3.3 Толщину защитного слоя бетона для конструкций в агрессивной среде принимают с "
    "учётом требований СП 28.13330.\n"
)
AMENDMENT = (
    "Изменение № 1 к СП 63.13330.2018\n"
    "Дата введения — 2021-07-01\n\n"
    "Пункт 10.3.2 изложить в новой редакции:\n"
    f"«{CLAUSE.splitlines()[0].format(25)}»\n\n"
    "Пункт 10.3.3 исключить.\n"
)
OLD, NEW = "СП 63.13330.2012", "СП 63.13330.2018"
DAYS = {  # the day asked → the edition, its value, the amendment cited
    date(2015, 3, 1): (OLD, "15", ""),
    date(2020, 1, 15): (NEW, "20", ""),
    date(2023, 9, 1): (NEW, "25", "Изменение № 1 (с 01.07.2021)"),
}


def edition(code: str, value: int, since: date, until: date | None = None) -> NormDocument:
    document = services.document_save(
        code=code,
        title="Бетонные и железобетонные конструкции. Основные положения",
        in_force_from=since,
        in_force_to=until,
    )
    intro = "1 Область применения\nНастоящий свод правил распространяется на проектирование.\n"
    for number, text in ((1, intro), (2, HEAD + CLAUSE.format(value))):
        NormPage.objects.create(document=document, number=number, text=text)
    document_index(document_id=document.pk)
    return document


@pytest.fixture
def editions_corpus(db) -> list[NormDocument]:  # type: ignore[no-untyped-def]
    new = edition(NEW, 20, date(2019, 6, 20))
    old = edition(OLD, 15, date(2013, 1, 1), date(2019, 6, 20))
    NormDocument.objects.filter(pk=old.pk).update(replaced_by=new)
    editions.amendment_save(
        code=NEW,
        number=1,
        in_force_from=date(2021, 7, 1),
        changes=editions.changes_parse(AMENDMENT),
    )
    return [old, new]


def executor_reads_its_first_page(call: Call) -> str:
    """A model answering from the first page it was shown: the clause's text there, or the
    amendment's text of it when the page says one holds."""
    prompt = call.messages[1]["content"]
    heading = re.search(r"=== Страница (\d+) — (\S+ \S+)", prompt)
    assert heading is not None, prompt
    page_text = prompt[heading.start() :].split("\n=== ", 1)[0]
    amended = re.search(r"10\.3\.2 в новой редакции\] .*?не менее (\d+) мм", page_text)
    value = (amended or re.search(r"не менее (\d+) мм", page_text))[1]  # type: ignore[index]
    finding = {
        "document": heading[2],
        "clause": "10.3.2",
        "page": int(heading[1]),
        "quote": f"не менее {value} мм",
    }
    return json_reply({"findings": [finding], "summary": f"{heading[2]}: {value} мм."})


def finalizer_answers_what_was_found(call: Call) -> str:
    prompt = call.messages[1]["content"]  # a finding's keys in the store's order: jsonb's
    fields = {k: re.search(rf"\b{k}: (.+)", prompt) for k in ("document", "page", "quote")}
    assert all(fields.values()), prompt  # (PostgreSQL) is not SQLite's
    code, page = fields["document"][1].strip(), int(fields["page"][1])  # type: ignore[index]
    value = re.search(r"\d+", fields["quote"][1])[0]  # type: ignore[index]
    return json_reply(
        {
            "answer": f"Не менее {value} мм (п. 10.3.2 {code}).",
            "sources": [{"document": code, "clause": "10.3.2", "page": page}],
        }
    )


def json_reply(data: dict) -> str:  # type: ignore[type-arg]
    import json

    return json.dumps(data, ensure_ascii=False)


@pytest.mark.django_db
@pytest.mark.parametrize("day", list(DAYS), ids=[d.isoformat() for d in DAYS])
def test_the_same_question_on_three_days_cites_the_edition_and_text_of_that_day(  # type: ignore[no-untyped-def]
    editions_corpus, llm, day
) -> None:
    code, value, amendment = DAYS[day]
    llm.play(
        planner=[plan(("Найти защитный слой", KEYWORDS, ["СП 63.13330"]))],
        executor=[executor_reads_its_first_page],
        judge=[verdict("FINALIZE")],
        finalizer=[finalizer_answers_what_was_found],
    )
    run = run_advance(run_id=services.run_create(question=QUESTION, as_of=day).pk)
    assert run.status == "completed", run.error
    assert run.as_of == day
    assert run.final_answer.endswith(f"Не менее {value} мм (п. 10.3.2 {code}).")
    [source] = run.sources
    assert (source["document"], source["clause"], source["amendment"]) == (
        code,
        "10.3.2",
        amendment,
    )
    assert source["edition"].startswith("действует с ")  # the edition and its status, named
    [check] = run.checks.filter(origin=ClaimCheck.Origin.ANSWER)
    assert check.verdict == "confirmed", check.reason  # the value is in that day's text
    assert check.document_code == code
    executor_prompt = next(c for c in llm.calls if c.node == "executor").messages[1]["content"]
    assert f"на дату {day:%d.%m.%Y}" in executor_prompt
    if amendment:
        assert "Изменение № 1 (с 01.07.2021): 10.3.2 в новой редакции" in executor_prompt
        assert "Пункты 10.3.3 этой страницы исключены изменениями" in executor_prompt


@pytest.mark.django_db
def test_search_on_a_day_reads_that_days_editions_and_clause_texts(editions_corpus) -> None:  # type: ignore[no-untyped-def]
    for day, (code, value, amendment) in DAYS.items():
        best, *_ = clauses_search(keywords=KEYWORDS, limit=5, as_of=day)
        assert (best.clause.document.code, best.clause.number) == (code, "10.3.2"), day
        assert f"не менее {value} мм" in best.clause.text, day
        assert best.in_force
        assert (best.clause.amendment is not None) == bool(amendment)
        [page, *others] = pages_search(keywords=KEYWORDS, limit=2, as_of=day)
        assert page.page.document.code == code
        assert [o.replaced for o in others] == [True] * len(others)  # the other edition
    # 10.3.3 holds until the amendment deletes it
    before = clauses_search(keywords=["агрессивной среде"], limit=5, as_of=date(2021, 6, 30))
    after = clauses_search(keywords=["агрессивной среде"], limit=5, as_of=date(2021, 7, 1))
    assert ("10.3.3", NEW) in [(h.clause.number, h.clause.document.code) for h in before]
    assert ("10.3.3", NEW) not in [(h.clause.number, h.clause.document.code) for h in after]


@pytest.mark.django_db
def test_an_amendment_file_by_the_command_and_counts_that_stay_right(
    editions_corpus, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    new = editions_corpus[1]
    second = tmp_path / "izm2.txt"
    second.write_text(
        "Пункт 10.3.2 изложить в новой редакции:\n«10.3.2 Минимальная толщина защитного слоя "
        "бетона рабочей арматуры плит в закрытых помещениях принимают не менее 30 мм.»\n",
        encoding="utf-8",
    )
    call_command(
        "normagpt_ingest", str(second), "--amends", NEW, "--number", "2",
        "--in-force-from", "2024-01-01", verbosity=0,
    )  # fmt: skip
    versions = NormClause.objects.filter(document=new, number="10.3.2").order_by("id")
    spans = [(v.amendment.number if v.amendment else 0, v.valid_from, v.valid_to) for v in versions]
    assert spans == [
        (0, None, date(2021, 7, 1)),
        (1, date(2021, 7, 1), date(2024, 1, 1)),
        (2, date(2024, 1, 1), None),
    ]
    for day, value in ((date(2022, 1, 1), "25"), (date(2024, 2, 1), "30")):
        best = clauses_search(keywords=KEYWORDS, limit=1, as_of=day)[0]
        assert f"не менее {value} мм" in best.clause.text
    # re-splitting the edition keeps its amendments; the stem counts stay those of the rows
    document_index(document_id=new.pk)
    assert NormClause.objects.filter(document=new, amendment__isnull=False).count() == 2
    counted = stem_counts(NormClause.objects.values_list("search_text", flat=True))
    stored = dict(NormTerm.objects.values_list("term", "clauses"))
    assert dict(counted) == {t: n for t, n in stored.items() if n and t != GENERATION}
    with pytest.raises(InvalidInput, match="states no change"):
        editions.changes_parse("Пункт 10.3.2 оставить как есть.")


@pytest.mark.django_db
def test_as_of_is_a_day_or_an_error_naming_it(editions_corpus, llm) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidInput) as bad:
        services.run_create(question=QUESTION, as_of="01.02.2020")
    assert bad.value.field == "as_of"
    assert editions.day_of("2020-02-01") == date(2020, 2, 1)


@pytest.mark.django_db
def test_a_deleted_clause_stays_deleted_until_an_amendment_gives_it_a_text(editions_corpus) -> None:  # type: ignore[no-untyped-def]
    new = editions_corpus[1]
    editions.amendment_save(  # 10.3.3 deleted by № 1 (2021); № 2 (2024) amends 10.3.2 only
        code=NEW, number=2, in_force_from=date(2024, 1, 1),
        changes=[editions.Change("clause", "10.3.3", "")],
    )  # fmt: skip
    editions.amendment_save(
        code=NEW, number=3, in_force_from=date(2025, 1, 1),
        changes=[editions.Change("clause", "10.3.3", "10.3.3 Вновь: не менее 40 мм.")],
    )  # fmt: skip
    original = NormClause.objects.get(document=new, number="10.3.3", amendment=None)
    assert original.valid_to == date(2021, 7, 1)  # deleted by № 1, not reopened by № 2
    for day, texts in (
        (date(2022, 1, 1), []),
        (date(2024, 6, 1), []),
        (date(2025, 6, 1), ["10.3.3 Вновь: не менее 40 мм."]),
    ):
        held = editions.clause_version(new.pk, "10.3.3", day)
        assert ([held.text] if held else []) == texts, day


@pytest.mark.django_db
def test_a_claim_on_a_past_day_is_checked_against_that_days_edition(editions_corpus) -> None:  # type: ignore[no-untyped-def]
    from normagpt.verification import Checker

    source = [{"document": "СП 63.13330", "clause": "10.3.2", "page": 2}]  # the series only
    for day, value in ((date(2015, 3, 1), 15), (date(2020, 1, 15), 20)):
        checker = Checker(sources=source, pages=[], as_of=day)
        [right] = checker.answer(f"Принимают не менее {value} мм (п. 10.3.2 СП 63.13330).")
        assert right.verdict == "confirmed", (day, right.reason)
        [other] = checker.answer(f"Принимают не менее {35 - value} мм (п. 10.3.2 СП 63.13330).")
        assert other.verdict == "unconfirmed", day


@pytest.mark.django_db
def test_a_replaced_edition_without_its_last_day_is_not_in_force(editions_corpus) -> None:  # type: ignore[no-untyped-def]
    old = editions_corpus[0]
    NormDocument.objects.filter(pk=old.pk).update(in_force_to=None)
    old.refresh_from_db()
    assert old.status == "replaced"
    assert not old.in_force_on(date(2024, 1, 1))
    assert not editions.document_in_force("2024-01-01", "replaced", old.in_force_from, None)
    best = clauses_search(keywords=KEYWORDS, expected_documents=["СП 63.13330"], limit=1)[0]
    assert best.clause.document.code == NEW


def test_an_amendments_orders_are_read_and_the_unknown_ones_named() -> None:
    text = (
        "Изменение № 2 к СП 63.13330.2018\n"
        "Пункт 10.3.2 изложить в новой редакции:\n"
        "«10.3.2 Толщину принимают не менее 25 мм; пункт 10.3.3 исключить нельзя.»\n"
        "Пункты 5.1, 5.2 и 5.3 исключить.\n"
        "Раздел 6 дополнить пунктом 6.4 следующего содержания:\n«6.4 Новый пункт.»\n"
        "Таблицу 5.1 изложить в редакции:\n«Таблица 5.1 — Значения»\n"
    )
    read = [(c.kind, c.number, c.text[:12]) for c in editions.changes_parse(text)]
    assert read == [
        ("clause", "10.3.2", "10.3.2 Толщи"),
        ("clause", "5.1", ""),
        ("clause", "5.2", ""),
        ("clause", "5.3", ""),
        ("clause", "6.4", "6.4 Новый пу"),
        ("table", "5.1", "Таблица 5.1 "),
    ]  # fmt: skip  (in the order of the text)
    assert editions.changes_unread(text) == []
    # «Пункт 4.4. Исключить.»: a number ending its sentence, the order capitalized
    dotted = "Пункт 4.4. Исключить.\nПункт 4.5. Изложить в новой редакции:\n«4.5 Новый текст.»\n"
    assert [(c.number, c.text) for c in editions.changes_parse(dotted)] == [
        ("4.4", ""), ("4.5", "4.5 Новый текст."),
    ]  # fmt: skip


ADDITIONS = (
    "Изменение № 2 к СП 63.13330.2018\n"
    "Раздел 10 дополнить пунктами 10.3.4 и 10.3.5 следующего содержания:\n"
    "«10.3.4 В фундаментах сборных толщину защитного слоя бетона рабочей арматуры принимают "
    "не менее 35 мм.\n"
    "10.3.5 При наличии бетонной подготовки толщину защитного слоя бетона для рабочей "
    "арматуры фундаментов монолитных принимают не менее 40 мм.»\n"
    "Пункт 10.3.2 дополнить абзацем следующего содержания:\n"
    "«Для плит с предварительно напряжённой арматурой толщину защитного слоя принимают не "
    "менее 35 мм.»\n"
    "Пункт 10.3.3 дополнить абзацем:\n«Для надземных конструкций — по таблице 10.2.»\n"
    "Таблицу 5.1 дополнить строками:\n«B60 | 3,30»\n«B70 | 3,40»\n"
    "Пункт 10.3.1. Первый абзац после слов «бетона с арматурой» дополнить словами «в течение "
    "всего срока службы».\n"
    "Дополнить пунктами 11.1 и 11.2:\n«11.1 Только один пункт здесь.»\n"
)


def test_an_amendments_additions_are_read_and_what_is_not_clear_is_named() -> None:
    changes = editions.changes_parse(ADDITIONS)
    assert [(c.kind, c.number, c.mode, c.text[:12]) for c in changes] == [
        ("clause", "10.3.4", "add", "10.3.4 В фун"),  # new clauses: never overwrite one
        ("clause", "10.3.5", "add", "10.3.5 При н"),
        ("clause", "10.3.2", "append", "Для плит с п"),
        ("clause", "10.3.3", "append", "Для надземны"),
        ("table", "5.1", "append", "B60 | 3,30\nB"),
        ("clause", "10.3.1", "substitute", "бетона с арм"),  # words added after words
    ]
    assert changes[0].text.endswith("не менее 35 мм.")  # each added clause its own text
    assert changes[4].text == "B60 | 3,30\nB70 | 3,40"  # each quoted row, a line apart
    assert (changes[5].part, changes[5].replaces, changes[5].text) == (
        "абзац 1",
        "бетона с арматурой",
        "бетона с арматурой в течение всего срока службы",
    )
    assert editions.changes_unread(ADDITIONS) == [
        "Дополнить пунктами 11.1 и 11.2: «11.1 Только один пункт здесь.»",  # one of the two
    ]  # is quoted: not guessed
    long = "Пункт 4.1. Рисунок «" + "нагрузки " * 40 + "» изложить в новой редакции: «…»."
    [shown] = editions.changes_unread(long)
    assert len(shown) == editions.UNREAD_SHOWN
    assert shown.endswith("…")
    assert shown.startswith("Пункт 4.1. Рисунок «нагрузки нагрузки")


@pytest.mark.django_db
def test_added_clauses_and_paragraphs_hold_from_the_amendments_day(editions_corpus) -> None:  # type: ignore[no-untyped-def]
    new = editions_corpus[1]
    editions.amendment_save(
        code=NEW, number=2, in_force_from=date(2024, 1, 1),
        changes=editions.changes_parse(ADDITIONS),
    )  # fmt: skip
    before, after = date(2023, 12, 31), date(2024, 1, 1)
    foundation = ["защитный слой фундаментов монолитных", "бетонной подготовки"]
    for day, expected in ((before, False), (after, True)):
        hits = clauses_search(keywords=foundation, limit=3, as_of=day)
        assert (hits[0].clause.number == "10.3.5" if hits else False) is expected, day
    added = editions.clause_version(new.pk, "10.3.5", after)
    assert added is not None
    assert added.text.startswith("10.3.5 При наличии бетонной подготовки")
    assert added.heading == "10 Конструктивные требования › 10.3 Защитный слой бетона"
    # 10.3.2: amendment 1's text, then that text with the paragraph added
    then, now = (editions.clause_version(new.pk, "10.3.2", d) for d in (before, after))
    assert then is not None
    assert now is not None
    assert "не менее 25 мм" in then.text
    assert "напряжённой" not in then.text
    assert (
        now.text == then.text + "\nДля плит с предварительно напряжённой арматурой "
        "толщину защитного слоя принимают не менее 35 мм."
    )
    assert now.amendment.number == 2
    # 10.3.3 was deleted by amendment 1: nothing to add to, it stays deleted
    assert editions.clause_version(new.pk, "10.3.3", after) is None
    # the counts stay those of the rows
    counted = stem_counts(NormClause.objects.values_list("search_text", flat=True))
    stored = dict(NormTerm.objects.values_list("term", "clauses"))
    assert dict(counted) == {t: n for t, n in stored.items() if n and t != GENERATION}


@pytest.mark.django_db
def test_the_command_names_what_it_added_and_what_it_did_not_apply(
    editions_corpus, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from io import StringIO

    file = tmp_path / "izm2.txt"
    file.write_text(ADDITIONS, encoding="utf-8")
    out, err = StringIO(), StringIO()
    call_command(
        "normagpt_ingest", str(file), "--amends", NEW, "--number", "2",
        "--in-force-from", "2024-01-01", stdout=out, stderr=err,
    )  # fmt: skip
    assert (
        out.getvalue()
        .strip()
        .endswith(
            "6 clause(s) changed: 10.3.4 (новый), 10.3.5 (новый), 10.3.2 (дополнен), "
            "10.3.3 (дополнен), 5.1 (дополнен), 10.3.1 (замена слов)"
        )
    )
    assert err.getvalue().count("not applied (not a wording this reader knows") == 1
    assert "Дополнить пунктами 11.1 и 11.2: «11.1 Только один пункт здесь.»" in err.getvalue()


SUBSTITUTIONS = (
    "Изменение № 2 к СП 63.13330.2018\n"
    "Пункт 10.3.2. Заменить слова «не менее 25 мм» на «не менее 30 мм».\n"
    "Пункт 10.3.2. Исключить слова «при нормальной и пониженной влажности».\n"
    "Пункт 10.3.2. Второй абзац. Заменить слова «в агрессивной среде» на «в слабоагрессивной "
    "среде».\n"
    "Пункт 10.3.3. Заменить слова «СП 28.13330» на «СП 28.13330.2017».\n"
)


def test_substitutions_are_read_pair_by_pair_and_never_taken_for_a_deletion() -> None:
    text = (
        "Пункт 5.2. Второй абзац. Заменить слова «не менее 20 мм» на «не менее 25 мм», "
        "«СНиП 2.03.11-85» на «СП 28.13330.2017».\n"
        "Таблица 5.1. Заменить значение «3,30» на «3,35».\n"
        "Пункт 5.3 исключить слова «и в подвалах».\n"
        "Пункт 5.4. Заменить слова «по таблице» на.\n"
        "Пункт 5.5 исключить. Пункт 5.6. Заменить слова «сваи» на «сваи и ростверки».\n"
    )
    read = [(c.kind, c.number, c.mode, c.replaces, c.text) for c in editions.changes_parse(text)]
    assert read == [
        ("clause", "5.2", "substitute", "не менее 20 мм", "не менее 25 мм"),
        ("clause", "5.2", "substitute", "СНиП 2.03.11-85", "СП 28.13330.2017"),
        ("table", "5.1", "substitute", "3,30", "3,35"),
        ("clause", "5.3", "substitute", "и в подвалах", ""),  # words removed: not the clause
        ("clause", "5.5", "replace", "", ""),
        ("clause", "5.6", "substitute", "сваи", "сваи и ростверки"),  # two orders on a line
    ]
    assert editions.changes_unread(text) == [
        "Пункт 5.4. Заменить слова «по таблице» на."  # a pair without its new words
    ]


@pytest.mark.django_db
def test_substitutions_apply_in_order_as_one_version_and_the_missed_ones_are_named(
    editions_corpus, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from io import StringIO

    new = editions_corpus[1]
    file = tmp_path / "izm2.txt"
    file.write_text(SUBSTITUTIONS, encoding="utf-8")
    out, err = StringIO(), StringIO()
    call_command(
        "normagpt_ingest", str(file), "--amends", NEW, "--number", "2",
        "--in-force-from", "2024-01-01", stdout=out, stderr=err,
    )  # fmt: skip
    then, now = (
        editions.clause_version(new.pk, "10.3.2", d) for d in (date(2023, 1, 1), date(2024, 1, 1))
    )
    assert then is not None
    assert then.text.endswith("при нормальной и пониженной влажности принимают не менее 25 мм.")
    assert now is not None
    assert now.text == (
        "10.3.2 Минимальная толщина защитного слоя бетона рабочей арматуры плит в закрытых "
        "помещениях принимают не менее 30 мм."
    )  # both substitutions, one space where the removed words stood
    assert (
        NormClause.objects.filter(document=new, number="10.3.2", amendment__number=2).count() == 1
    )
    applied = list(new.amendments.get(number=2).changes.values_list("number", "applied"))
    assert applied == [("10.3.2", True), ("10.3.2", True), ("10.3.2", False), ("10.3.3", False)]
    assert err.getvalue().splitlines() == [
        "not made on the edition's text: п. 10.3.2 (абзац 2): слова «в агрессивной среде» → «в "
        "слабоагрессивной среде»",  # not in the clause
        "not made on the edition's text: п. 10.3.3: слова «СП 28.13330» → «СП 28.13330.2017»",
    ]  # 10.3.3: deleted by amendment 1
    best = clauses_search(keywords=KEYWORDS, limit=1, as_of=date(2024, 2, 1))[0]
    assert "не менее 30 мм" in best.clause.text


def inline(*rows: dict[str, str], initial: int = 0, orders: int = 0) -> dict[str, str]:
    """The amendment page's inlines: the changed clauses, with `rows` typed in (the first
    `initial` of them stored already), and the orders not applied (`orders` shown)."""
    form = {"changes-TOTAL_FORMS": str(len(rows)), "changes-INITIAL_FORMS": str(initial),
            "changes-MIN_NUM_FORMS": "0", "changes-MAX_NUM_FORMS": "1000",
            "unread_orders-TOTAL_FORMS": str(orders), "unread_orders-INITIAL_FORMS": str(orders),
            "unread_orders-MIN_NUM_FORMS": "0", "unread_orders-MAX_NUM_FORMS": "1000"}  # fmt: skip
    for index, row in enumerate(rows):
        form.update({f"changes-{index}-{key}": value for key, value in row.items()})
    return form


@pytest.mark.django_db
def test_an_amendment_file_uploaded_in_the_admin_is_read_and_applied(
    editions_corpus, client, staff
) -> None:  # type: ignore[no-untyped-def]
    from django.core.files.uploadedfile import SimpleUploadedFile

    new = editions_corpus[1]
    client.force_login(staff)
    typed = [
        {"kind": "clause", "number": "10.3.6", "mode": "add", "text": "10.3.6 Введён рукой."},
        {"kind": "clause", "number": "10.3.4", "mode": "add", "text": "10.3.4 Опечатка."},
    ]
    page = client.post(
        "/admin/normagpt/normamendment/add/",
        {
            "document": str(new.pk), "number": "2", "in_force_from": "2024-01-01",
            "title": "Изменение № 2",
            "file": SimpleUploadedFile("izm2.txt", ADDITIONS.encode(), content_type="text/plain"),
            **inline(*typed),
        },
        follow=True,
    ).content.decode()  # fmt: skip

    assert "Прочитано из файла: 10.3.4, 10.3.5, 10.3.2, 10.3.3, 5.1, 10.3.1" in page
    assert page.count("Не применено (такую формулировку чтение не разбирает)") == 1
    assert "Дополнить пунктами 11.1 и 11.2:" in page
    amendment = new.amendments.get(number=2)
    stored = {(c.number, c.mode): c.text[:20] for c in amendment.changes.all()}
    assert stored == {
        ("10.3.6", "add"): "10.3.6 Введён рукой.",  # typed, a clause the file leaves alone
        ("10.3.4", "add"): "10.3.4 В фундаментах",  # the file's reading, not the typo
        ("10.3.5", "add"): "10.3.5 При наличии б",
        ("10.3.2", "append"): "Для плит с предварит",
        ("10.3.3", "append"): "Для надземных констр",
        ("5.1", "append"): "B60 | 3,30\nB70 | 3,4",
        ("10.3.1", "substitute"): "бетона с арматурой в",
    }
    assert amendment.changes.filter(number="10.3.4").count() == 1  # the typo's row is gone
    [order] = amendment.unread_orders.all()  # the order not read, kept and named
    assert order.text.startswith("Дополнить пунктами 11.1 и 11.2:")
    added = editions.clause_version(new.pk, "10.3.5", date(2024, 1, 1))
    assert added is not None
    assert added.amendment == amendment  # applied on saving
    # a file that states no change it can read is refused on its field; nothing is saved
    refused = client.post(
        "/admin/normagpt/normamendment/add/",
        {
            "document": str(new.pk), "number": "3", "in_force_from": "2025-01-01",
            "file": SimpleUploadedFile("izm3.txt", "Пункт 10.3.2 оставить как есть.".encode()),
            **inline(),
        },
    ).content.decode()  # fmt: skip
    assert "the amendment states no change" in refused
    assert not new.amendments.filter(number=3).exists()
