"""Questions as people ask them (issue 49): a whole question in lay words is read down to what
it asks before it is searched — the sentence that asks (not a closing «Что говорят нормы?»),
its words of talk left out; the quantity a lay word asks for («насколько близко»: a
distance); lay words in the norms' words, from the lexicon's data
(`normagpt/lexicon.yaml`). On real norm pages (tests/fixtures/norms/SOURCES.md,
«Answering») and on pages written for a rule.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from normagpt import services
from normagpt.everyday import COMMON, FLOOR, everyday_share, everyday_weighed, zipf_listed
from normagpt.ingest import document_texts_ingest
from normagpt.lexicon import LEXICON, lexicon_data
from normagpt.parsing import search_stems
from normagpt.questions import question_read
from normagpt.search import clauses_search

EXCERPTS = Path(__file__).resolve().parent.parent / "fixtures" / "norms" / "answering"


@pytest.fixture
def real_pages(django_db_blocker) -> None:  # type: ignore[no-untyped-def]
    with django_db_blocker.unblock():
        call_command("normagpt_ingest_dataset", str(EXCERPTS))


def found(keywords: list[str], n: int = 1) -> list[tuple[str, str, bool]]:
    hits = clauses_search(keywords=keywords, limit=5)[:n]
    return [(hit.clause.document.code, hit.clause.number, hit.answers) for hit in hits]


def stem(word: str) -> str:
    return search_stems(word)[0]


def test_a_lay_word_of_how_far_asks_a_distance() -> None:
    """«Насколько близко» asks a distance, as «на каком расстоянии» does: the adverb is kept
    (not dropped as talk) and stands for the norms' «расстояние» and «не ближе»."""
    query = question_read(["Насколько близко к забору можно поставить септик?"])
    assert query.quantity == stem("близко")
    assert {stem("расстояние"), stem("ближе")} <= set(query.said_as[query.quantity])


def test_the_lexicon_data_gives_the_norms_words() -> None:
    """Each lay word below is said as the lexicon file says (data, not code): the water in
    the radiators is the heating's «теплоноситель», a boiler's power its
    «теплопроизводительность», a yard's sewer «внутриквартальная», test cubes «образцы»."""
    data = yaml.safe_load(LEXICON.read_text(encoding="utf-8"))
    for lay, norm in [
        ("батареях", "теплоноситель"),
        ("кубики", "образцы"),
        ("двору", "внутриквартальный"),
        ("вытяжка", "воздухообмен"),
    ]:
        assert norm in data["synonyms"][lay]
        query = question_read([f"{lay} какое требование"])
        assert stem(norm) in query.said_as[stem(lay)], lay
    assert "теплопроизводительность" in data["quantities"]["мощность"]
    query = question_read(["Какой мощности котёл можно поставить на кухне?"])
    assert stem("теплопроизводительность") in query.said_as[query.quantity]


def test_digging_a_pipe_or_a_cable_in_is_the_norms_laying() -> None:
    """«Закопать», «закапывать» (a pipe, a cable), «вкопать» (a post) are how people say what
    norms call laying a line or setting a thing in the ground: «прокладка», «заложение»,
    «заглубление». Without them the verb is a word the corpus never uses, and the depth asked
    is of nothing."""
    for question, verb in [
        ("На какую глубину его закапывать?", "закапывать"),
        ("Хотим закопать канализацию неглубоко.", "закопать"),
        ("На какую глубину вкопать столбы забора?", "вкопать"),
    ]:
        query = question_read([question])
        said = set(query.said_as.get(stem(verb), ()))
        assert said & {stem("прокладка"), stem("заложение"), stem("заглубление")}, question


def test_a_question_whose_last_sentence_names_nothing_asks_the_one_before() -> None:
    """«Что говорят нормы?» asks nothing of its own (a verb and the norms' boilerplate): the
    sentence before it is what is asked, its verbs left out however short it is."""
    query = question_read(
        ["Электрик ставит розетки на кухне кафе, на какой высоте их ставить. Что говорят нормы?"]
    )
    asked = {query.words[t] for t in query.terms if t not in query.context}
    assert {"розетки", "кухне", "кафе", "высоте"} <= asked
    assert not {"говорят", "ставит", "ставить"} & {query.words[t] for t in query.terms}
    assert query.quantity == stem("высоте")


@pytest.mark.django_db(transaction=True)
def test_a_lay_whole_question_finds_what_the_norms_words_find(real_pages) -> None:  # type: ignore[no-untyped-def]
    """СП 53.13330.2019 п. 6.8 («… от садового дома или жилого дома до … отдельно стоящей
    бани (сауны) … – 8») is what «расстояние от садового дома до бани» finds; asked as a
    person asks — a bath-house in a diminutive, the distance as «насколько близко», the bath
    named in the story before the asking sentence — the question finds it first, as an
    answer. So
    with a shed and the neighbour's fence: п. 6.7 (the border of the neighbouring plot, «других
    хозяйственных построек — 1 м») among the first two, as its norm wording finds it."""
    assert found(["расстояние от садового дома до бани"]) == [("СП 53.13330.2019", "6.8", True)]
    question = "Хотим на даче баньку. Насколько близко к дому её можно ставить?"
    assert found([question]) == [("СП 53.13330.2019", "6.8", True)]
    border = ("СП 53.13330.2019", "6.7", True)
    assert border in found(
        ["расстояние до границы соседнего участка", "хозяйственные постройки"], 2
    )
    shed = "Сарай у нас на даче. Насколько близко к забору соседа его можно поставить?"
    assert border in found([shed], 2)


@pytest.mark.parametrize(
    ("question", "norms_word"),
    [
        ("Насколько узкой можно сделать дверь?", "ширина"),
        ("Какой самый тонкий слой стяжки?", "толщина"),
        ("Насколько коротким может быть нахлест?", "длина"),
        ("Какой уровень громкости сирены должен быть?", "звука"),
        ("Какую производительность вытяжки должна обеспечивать вентиляция?", "воздухообмен"),
    ],
)
def test_a_lay_word_of_size_asks_its_quantity(question: str, norms_word: str) -> None:
    """How narrow, thin or short a thing may be asks its width, thickness or length; how loud
    a siren, its sound level; a hood's capacity, the air exchange norms set (the lexicon's
    `quantities`)."""
    query = question_read([question])
    assert stem(norms_word) in query.said_as[query.quantity]


def test_lay_names_of_things_are_said_as_the_norms_name_them() -> None:
    """A fire engine is «пожарная техника» in the norms, a siren an «оповещатель» of a
    warning system's «звуковые сигналы» (the lexicon's `synonyms`)."""
    query = question_read(["Какой ширины проезд для пожарных машин?"])
    assert stem("техники") in query.said_as[stem("машин")]
    query = question_read(["Сирены еле слышны. Какой уровень громкости сирены?"])
    assert stem("оповещателя") in query.said_as[stem("сирены")]


def test_a_way_of_asking_read_as_its_quantity_keeps_the_sentences_apart() -> None:
    """«Сколько кубометров …» read as «Объем …» still starts its sentence: the story before
    it stays the story (a lower-case word after a full stop would join the two)."""
    query = question_read(
        ["Топим дом печью. Сколько кубометров дров по нормам нужно заготовить на зиму?"]
    )
    assert query.quantity == stem("объём")
    assert stem("печью") in query.context


def test_words_of_talk_of_when_and_where_are_left_out() -> None:
    """«до того, как замёрзнет», «вдоль него»: a pronoun's form and a preposition, no word
    of what is asked (searched, their rare stems took the candidates' places)."""
    query = question_read(["Какую прочность должен набрать бетон до того, как замёрзнет?"])
    assert stem("того") not in query.terms
    query = question_read(["Какой ширины нужно делать проезд вдоль него?"])
    assert stem("вдоль") not in query.terms


def test_rows_asked_about_are_no_word_of_talk() -> None:
    """«рядом» (nearby) was the lexicon's filler, and its stem «ряд» with it: the rows of
    «между рядами парт» (СП 138.13330.2012 п. 4.8), «в один ряд», «первого ряда» were left out
    of every question. A sentence's «рядом» is an adverb, a word of talk all the same."""
    query = question_read(
        ["Расставляем парты в классе. Какое расстояние оставлять между рядами парт?"]
    )
    assert stem("рядами") in query.terms
    assert stem("ряд") in question_read(["расстояние между рядами парт"]).terms
    query = question_read(["Хочу посадить дерево рядом с домом. На каком расстоянии его сажать?"])
    assert stem("рядом") not in query.terms


def test_a_norm_s_noun_the_morphology_reads_first_as_talk_is_searched() -> None:
    """pymorphy reads «марш» first as an interjection («Марш!»), «излив» as a gerund: a
    ramp's flight and a tap's spout were left out of the questions asking about them (the
    lexicon's `named`)."""
    query = question_read(
        ["Делаем пандус к крыльцу. Какой максимальной длины может быть один марш без площадки?"]
    )
    assert stem("марш") in query.terms
    query = question_read(["На какой высоте над раковиной должен быть излив смесителя?"])
    assert stem("излив") in query.terms


def test_a_noun_after_its_adjective_is_no_word_of_talk() -> None:
    """«из оцинкованной стали» was read as «стали» (they became), a verb, and left out;
    «по социальному найму» as «найму» (I will hire). After an adjective agreeing with it, a
    word that may be a noun is one; after a pronoun's adjective it is what it is read as
    first («такие стали»: they became such)."""
    query = question_read(
        ["У нас старый дом с кровлей из оцинкованной стали. Сколько лет служит такая кровля?"]
    )
    assert stem("стали") in query.terms
    query = question_read(["Нам дают квартиру по социальному найму. Какой площади кухня?"])
    assert stem("найму") in query.terms
    query = question_read(["Соседи такие стали шумные. Какой уровень шума допустим ночью?"])
    assert stem("стали") not in query.terms


def test_a_relative_pronoun_is_no_word_of_what_is_asked() -> None:
    """«шланг, которым плита подключена»: «который» names nothing; searched, it weighed as a
    word of the question in every clause saying «которые» (most of them)."""
    query = question_read(
        ["Через сколько лет нужно менять гибкий шланг, которым газовая плита подключена к трубе?"]
    )
    assert stem("которым") not in query.terms
    assert {stem("шланг"), stem("плита")} <= set(query.terms)


def test_a_value_given_is_not_the_quantity_asked() -> None:
    """«детей 3–7 лет» gives an age: the area asked after it is what the question asks, not
    a time (a quantity's word after a number is a value given)."""
    query = question_read(["Для детей 3–7 лет какая площадь групповой комнаты нужна?"])
    assert query.quantity == stem("площадь")
    assert stem("лет") not in query.quantities


def test_a_value_given_in_words_is_not_the_quantity_asked() -> None:
    """A number in words gives a value as digits do («от трех до семи лет»): no time is
    asked (a real keyword list of СП 252 п. 6.1.8 was judged to ask a time, and its clause,
    an area per child, said not to answer); «Через сколько лет» still asks one."""
    keywords = ["территории игровых площадок", "на одного ребенка", "от трех до семи лет"]
    assert stem("лет") not in question_read(keywords).quantities
    assert question_read(["Через сколько лет менять трубы?"]).quantity == stem("лет")


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("Сколько пешеходов в час пропускает одна полоса тротуара?", ""),
        ("Сколько литров в сутки на человека закладывать?", ""),
        ("Через сколько часов можно вынимать кубики из форм?", "часов"),
        ("Какой нахлёст делать по длинной стороне полотнищ?", ""),
        ("В высоком доме какой ширины нужна лестница?", "ширины"),
        ("Насколько длинным может быть один марш пандуса?", "длинным"),
        ("Какой самый высокий порог можно оставить?", "высокий"),
    ],
)
def test_a_rate_s_time_or_a_thing_s_property_is_not_asked(question: str, asked: str) -> None:
    """A time a rate is counted per («пешеходов в час») and an adjective after a preposition
    («по длинной стороне», «в высоком доме»: a condition) are not the quantity asked; a
    time asked («через сколько часов») and a property asked («насколько длинным», «самый
    высокий») are."""
    query = question_read([question])
    assert query.quantity == (stem(asked) if asked else "")


@pytest.mark.parametrize(
    ("question", "quantity"),
    [
        ("Сколько квадратных метров игровой площадки нужно на ребёнка?", "площадь"),
        ("Сколько кв. м нужно на одного ребёнка 4–5 лет?", "площадь"),
        ("Сколько кубометров должен быть септик?", "объём"),
        ("Насколько труба должна торчать над кровлей?", "торчать"),
        ("Насколько дымоход должен подниматься над коньком?", "подниматься"),
        ("При каком морозе мастика ещё должна гнуться?", "температура"),
    ],
)
def test_a_unit_or_a_verb_asked_names_the_quantity(question: str, quantity: str) -> None:
    """«Сколько квадратных метров» asks an area, «сколько кубометров» a volume, «при каком
    морозе» a temperature (the lexicon's `asked_as`); how far a pipe sticks out over a roof,
    a height."""
    query = question_read([question])
    assert query.quantity == stem(quantity)
    if quantity in {"торчать", "подниматься"}:
        assert stem("высота") in query.said_as[query.quantity]


@pytest.mark.django_db(transaction=True)
def test_an_area_asked_in_square_metres_is_answered_by_an_area(real_pages) -> None:  # type: ignore[no-untyped-def]
    """«Сколько квадратных метров должна быть кухня в частном доме?» asks an area: СП
    55.13330.2016 п. 6.1 («Площади помещений … кухни — 6 м2») answers it; п. 6.2 beside it,
    the kitchen's height, and a garden house's kitchen clause of СП 53 do not."""
    hits = clauses_search(
        keywords=["Сколько квадратных метров должна быть кухня в частном доме?"], limit=5
    )
    answers = {(hit.clause.document.code, hit.clause.number): hit.answers for hit in hits}
    assert answers[("СП 55.13330.2016", "6.1")] is True
    assert [hit.clause.number for hit in hits][:1] == ["6.1"]
    assert answers.get(("СП 55.13330.2016", "6.2")) is not True


@pytest.mark.django_db(transaction=True)
def test_a_word_kin_to_the_quantity_asked_is_still_its_own_word(real_pages) -> None:  # type: ignore[no-untyped-def]
    """«Сколько квадратных метров … площадка для мусорных контейнеров» asks the area
    («площадь») of a platform («площадка»): the two words share a stem's start, and the
    platform is not to be read as the area. The note under СП 53.13330.2019's table 5.1
    («Площадь площадки для контейнеров … не менее 10 м2», its end on the next page) answers
    first; СП 55.13330.2016
    п. 5.7 (platforms for waste, no area) does not answer."""
    question = "Сколько квадратных метров должна занимать площадка для мусорных контейнеров в СНТ?"
    hits = clauses_search(keywords=[question], limit=5)
    first = hits[0]
    assert (first.clause.document.code, first.answers) == ("СП 53.13330.2019", True)
    assert "не менее 10 м2" in first.clause.text  # the note, run on to the next page
    assert all(not hit.answers for hit in hits if hit.clause.document.code == "СП 55.13330.2016")


@pytest.mark.django_db(transaction=True)
def test_how_narrow_an_exit_may_be_finds_its_width(real_pages) -> None:  # type: ignore[no-untyped-def]
    """«Насколько узкой её можно сделать?» of a storeroom's door asks the width of an exit:
    СП 1.13130.2020 п. 4.2.19 («Из технических помещений и кладовых площадью не более 20 м2
    без постоянных рабочих мест … шириной не менее 0,6 м»), not п. 4.2.22, on the same page,
    which holds more of the question's words (its doors, exits, storerooms) and no width."""
    question = (
        "Дверь из маленькой кладовки (метров десять, без постоянных рабочих мест) считается "
        "эвакуационным выходом. Насколько узкой её можно сделать?"
    )
    assert found([question]) == [("СП 1.13130.2020", "4.2.19", True)]


TITLES = EXCERPTS.parent / "titles"


@pytest.mark.django_db(transaction=True)
def test_a_word_of_the_documents_title_counts_as_said_by_its_clauses(real_pages) -> None:  # type: ignore[no-untyped-def]
    """A person names the kind of building a norm is for, not the norm's words: «Строю
    частный дом с мансардой…» is asked of СП 55.13330.2016 «Дома жилые одноквартирные», whose
    п. 6.2 gives the rooms' height in a mansard without saying «дом». СП 54.13330.2016 п. А.2.2
    («Здания жилые многоквартирные»: the area of rooms in a mansard with a sloping ceiling)
    holds more of the question's other words. Without the title counted, А.2.2 came first."""
    call_command("normagpt_ingest_dataset", str(TITLES))
    question = (
        "Строю частный дом с мансардой, потолки там скошенные. Какой минимальной высоты можно"
        " сделать комнаты на мансарде?"
    )
    assert found([question]) == [("СП 55.13330.2016", "6.2", True)]


# СП 252.1325800.2016 п. 8.2.2, second paragraph, as the dataset holds it: the rule of СП
# 52.13330.2016 п. 7.5.5.6 for any building, repeated for kindergartens
ENTRANCE_LIGHT = (
    "8.2.2 Над каждым входом в здание или рядом с ним должны быть установлены\n"
    "светильники, обеспечивающие уровни средней горизонтальной освещенности\n"
    "не менее:\n- 6 лк -  на площадке основного входа;\n"
    "- 4 лк -  запасного или технического входа и на пешеходной дорожке\n"
    "длиной 4 м у основного входа в здание.\n"
)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("Какая освещённость нужна вечером у запасного входа в здание?", "СП 52.13330.2016"),
        ("Какая освещённость нужна у запасного входа в детском саду?", "СП 252.1325800.2016"),
    ],
)
def test_a_document_for_what_the_question_does_not_name_weighs_less(
    real_pages, question: str, first: str
) -> None:  # type: ignore[no-untyped-def]
    """A norm for one kind of building repeats the general norm's rule (СП 252.1325800.2016
    «Здания дошкольных образовательных организаций» п. 8.2.2 gives the lighting at a
    kindergarten's entrances as СП 52.13330.2016 «Естественное и искусственное освещение» п.
    7.5.5.6 does at any building's). Asked of any building, the kindergartens' norm, whose
    scope the question does not name, comes after the general one; asked of a kindergarten,
    first. The same clause in both: before, the one stored first came first either way."""
    for code, title in [
        (
            "СП 252.1325800.2016",
            "Здания дошкольных образовательных организаций Правила проектирования",
        ),
        ("СП 52.13330.2016", "Естественное и искусственное освещение"),
    ]:
        document = services.document_save(code=code, title=title)
        document_texts_ingest(document_id=document.pk, texts=[ENTRANCE_LIGHT])
    assert [code for code, _, _ in found([question])] == [first]


SHORTENED = Path(__file__).resolve().parent.parent / "fixtures" / "norms" / "shortened"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("keywords", "first"),
    [
        (["гарантийный срок хранения минваты"], ("ГОСТ 9573-2012", "9.1")),
        (
            ["расстояние между подающим и обратным трубопроводом при капремонте"],
            ("СП 368.1325800.2017", "7.1.5"),
        ),
    ],
)
def test_a_shortened_lay_word_is_said_as_the_norms_say_it(
    keywords: list[str], first: tuple[str, str]
) -> None:
    """A word people shorten is the norms' two: «минвата» is «минеральная вата» (ГОСТ 9573's
    plates of mineral wool; ГОСТ 379's silicate bricks, whose page also speaks of storing and
    transporting, do not answer), «капремонт» the «капитальный ремонт» СП 368 is for (its
    title then names what is asked of; СП 7.13130's smoke ventilation clause also gives
    distances between ducts). Unsaid, the shortened word is one the corpus never uses: a
    keyword the clause answering must hold. Real pages (tests/fixtures/norms/SOURCES.md)."""
    call_command("normagpt_ingest_dataset", str(SHORTENED))
    assert found(keywords) == [(*first, True)]


def test_a_skyscraper_and_an_expanded_clay_block_are_said_as_the_norms_say_them() -> None:
    """«Небоскрёб» is what СП 253.1325800.2016 calls «высотное здание» (the heating outage of
    a tall block of flats was found in СП 60 before), «керамзитоблок» a «керамзитобетонный»
    block (ГОСТ 33126-2014): words the corpus never uses."""
    for question, lay, norm in [
        ("Живём в жилом небоскрёбе. Какая температура в квартирах?", "небоскрёбе", "высотный"),
        ("Привезли керамзитоблоки. Какая прочность?", "керамзитоблоки", "керамзитобетонный"),
    ]:
        query = question_read([question])
        assert stem(norm) in query.said_as.get(stem(lay), ()), question


EVERYDAY = EXCERPTS.parent / "everyday"


def test_an_everyday_word_weighs_less_the_more_common_it_is_in_speech() -> None:
    """A whole question's word keeps the share of its corpus weight that its frequency in
    everyday Russian leaves (wordfreq's, `normagpt/everyday_words.txt`): «дом» (Zipf 5.5) in
    any form the least, «машина» (4.8) two thirds; a term of the field («распалубка»,
    «антресоль», «пандус») and a number keep all of it."""
    assert everyday_share("дом") == everyday_share("домов") == FLOOR
    assert 0.5 < everyday_share("машин") < 0.8
    for word in ("распалубка", "антресоли", "пандус", "проезд", "40"):
        assert everyday_share(word) == 1.0, word
    weights = {stem("дом"): 4.0, stem("проезд"): 4.0}
    everyday_weighed(weights, {stem("дом"): "дом", stem("проезд"): "проезд"})
    assert weights == {stem("дом"): 4.0 * FLOOR, stem("проезд"): 4.0}


def test_the_everyday_words_are_wordfreqs() -> None:
    """The shipped list is what `manage.py normagpt_everyday_words` writes from wordfreq: the
    most common words are all there, each with wordfreq's frequency."""
    wordfreq = pytest.importorskip("wordfreq")
    listed = zipf_listed()
    common = [w for w in itertools.islice(wordfreq.iter_wordlist("ru"), 300) if w.isalpha()]
    for word in [*common, "дом", "машина", "делать", "здание"]:
        assert listed[word] == wordfreq.zipf_frequency(word, "ru"), word
    assert min(listed.values()) >= COMMON


@pytest.mark.django_db(transaction=True)
def test_an_everyday_word_rare_in_norms_does_not_pick_the_answer() -> None:
    """«Строим жилой дом высотой около 40 метров. Какой ширины нужно делать проезд для
    пожарных машин вдоль него?» is answered by СП 4.13130.2013 п. 8.6 («Ширина проездов для
    пожарной техники в зависимости от высоты зданий …»), which says «зданий», not «дом».
    Norms seldom say «дом», so the corpus weighed it the most of the question's words, and
    СП 55.13330.2016 п. 7.5 («В двухэтажных домах … класс пожарной опасности … ширина»
    of a stair; «Дома жилые одноквартирные» its title) came first. Everyone says «дом»: it
    weighs little now. Real pages: СП 4's 181–184 (section 8, the fire engines' access) and
    СП 55's 13."""
    call_command("normagpt_ingest_dataset", str(EVERYDAY))
    question = (
        "Строим жилой дом высотой около 40 метров. Какой ширины нужно делать проезд для "
        "пожарных машин вдоль него?"
    )
    assert found([question]) == [("СП 4.13130.2013", "8.6", True)]


def test_the_lexicon_says_each_word_once() -> None:
    """A word given twice in the lexicon's data would keep only its last entry (YAML's
    loaders drop the first without a word: «машин» was given twice, with «автотранспорт»
    in the entry that did nothing): the lexicon's loader refuses it, naming the line."""
    assert lexicon_data(LEXICON.read_text(encoding="utf-8"))["synonyms"]
    twice = "synonyms:\n  баня: [постройка]\n  сарай: [постройка]\n  баня: [хозяйственный]\n"
    with pytest.raises(ValueError, match="line 4: «баня» is already a key"):
        lexicon_data(twice)
