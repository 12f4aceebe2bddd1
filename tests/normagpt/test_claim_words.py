"""What a claim's words must find in the clause it cites: the words that tell what it is
about — not the words of talk («рассчитывают», «шести», «миллиметров»), and found however
the clause's text writes them (split by OCR, another form of the word, the norms' word for a
lay one)."""

from __future__ import annotations

import pytest

from normagpt import services
from normagpt.ingest import document_texts_ingest
from normagpt.verification import Checker

pytestmark = pytest.mark.django_db(transaction=True)

# СП 52.13330.2016 п. 7.5.5.6 and СП 50.13330.2012 табл. 9 as the dataset's OCR writes them
# (Akumsk/russian-construction-standards, c9912bc, CC BY 4.0): «площ адке», «Окна».
PAGE = (
    "7.5.5.6 Освещенность на площ адке перед запасным входом в здание должна быть не "
    "менее 4 лк.\n"
    "7.5.5.7 Окна и балконные двери жилых зданий должны иметь воздухопроницаемость не "
    "более 6 кг/(м2·ч).\n"
    "7.5.5.8 Покрытие бассейнов рассчитывают на нагрузку не менее 2 кПа."
)


@pytest.fixture
def clauses() -> None:
    document = services.document_save(code="СП 999.1.2026", title="Проверочные пункты")
    document_texts_ingest(document_id=document.pk, texts=[PAGE])


def verdicts(text: str) -> list[tuple[str, str]]:
    return [(r.verdict, r.reason) for r in Checker(sources=[], pages=[]).answer(text)]


def test_words_split_by_ocr_or_in_another_form_are_found(clauses) -> None:  # type: ignore[no-untyped-def]
    assert verdicts(
        "Освещенность на площадке у запасного входа — не менее 4 лк (п. 7.5.5.6 СП 999.1.2026)."
    ) == [("confirmed", "")]
    assert verdicts(
        "Воздухопроницаемость окон — не более 6 кг/(м²·ч) (п. 7.5.5.7 СП 999.1.2026)."
    ) == [("confirmed", "")]


def test_words_of_talk_tell_nothing(clauses) -> None:  # type: ignore[no-untyped-def]
    """Verbs, numerals in words and unit names are how an answer talks: never «не говорит о»."""
    assert verdicts(
        "Покрытие бассейнов шести метров рассчитывают на нагрузку не менее 2 кПа, то есть "
        "двух килопаскалей (п. 7.5.5.8 СП 999.1.2026)."
    ) == [("confirmed", "")]


def test_a_word_of_measure_tells_nothing(clauses) -> None:  # type: ignore[no-untyped-def]
    """«в количестве» says how a value is counted, as «составляет» says it is (development
    set 2: ГОСТ 5781-82 п. 1.13 «не более 15 % от массы партии» was left unconfirmed)."""
    assert verdicts(
        "Покрытие бассейнов рассчитывают на нагрузку в количестве не менее 2 кПа "
        "(п. 7.5.5.8 СП 999.1.2026)."
    ) == [("confirmed", "")]


def test_a_telling_word_the_clause_lacks_still_fails(clauses) -> None:  # type: ignore[no-untyped-def]
    [(verdict, reason)] = verdicts(
        "Освещенность на площадке у запасного входа в котельную — не менее 4 лк "
        "(п. 7.5.5.6 СП 999.1.2026)."
    )
    assert verdict == "unconfirmed"
    assert "не говорит о «котельную»" in reason


def test_a_sentence_only_pointing_to_a_clause_is_no_claim(clauses) -> None:  # type: ignore[no-untyped-def]
    """«Подробнее см. п. …» says only that the clause exists: reported as confirmed, it would
    lend an answer a confirmed claim no check of what it says stands behind."""
    assert verdicts("Подробнее см. п. 7.5.5.6 СП 999.1.2026.") == []
    assert verdicts(
        "Освещенность на площадке у запасного входа — не менее 4 лк. Это требование "
        "установлено п. 7.5.5.6 СП 999.1.2026."
    ) == [("confirmed", "")]
    # the pointer cites for its paragraph's claim, and adds no confirmed one beside it
    [(verdict, reason)] = verdicts(
        "Освещенность на площадке у запасного входа — не менее 5 лк. Это требование "
        "установлено п. 7.5.5.6 СП 999.1.2026."
    )
    assert verdict == "unconfirmed"
    assert "5 лк" in reason


def test_a_pointer_to_a_clause_not_there_or_naming_a_thing_is_checked(clauses) -> None:  # type: ignore[no-untyped-def]
    [(verdict, reason)] = verdicts("Подробнее см. п. 7.5.5.99 СП 999.1.2026.")
    assert verdict == "unconfirmed"
    assert "7.5.5.99" in reason
    [(verdict, reason)] = verdicts(
        "Освещенность у входа в котельную регламентирует п. 7.5.5.6 СП 999.1.2026."
    )
    assert verdict == "unconfirmed"
    assert "котельную" in reason
