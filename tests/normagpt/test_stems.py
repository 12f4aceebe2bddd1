"""Stems that are forms of one word (`stems_related`), or a noun and its adjective (`stems_kin`):
what the search's vocabulary relies on."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from normagpt.kin import fleeting_bases, stems_kin, stems_related

LETTERS = "абвгдежзийклмнопрстуфхцчшщъыьэюя0123456789"
stems = st.text(alphabet=LETTERS, min_size=1, max_size=12)
suffixes = st.sampled_from(["", "н", "ьн", "ан", "енн", "ов", "ск", "а", "ы", "ого", "ями"])


@given(start=stems, end_a=stems | suffixes, end_b=stems | suffixes)
def test_related_stems_share_their_first_three_letters(start: str, end_a: str, end_b: str) -> None:
    a, b = start + end_a, start + end_b  # most pairs share a start, as a word's forms do
    if a != b and stems_related(a, b):
        assert a[:3] == b[:3], (a, b)


@given(a=stems, b=stems)
def test_unrelated_starts_are_never_related(a: str, b: str) -> None:
    if a[:3] != b[:3]:
        assert not stems_related(a, b)


def test_a_last_consonant_after_a_vowel_is_another_root() -> None:
    """The stemmer keeps a root's last consonant: stems of one length that differ there are
    other words («признание» is not «признак», «пластина» not «пластик»); after a
    consonant the letter is a suffix (a noun and its adjective: «вытяжка»/«вытяжной»)."""
    for a, b in [("признан", "признак"), ("пластик", "пластин"), ("разрез", "разреш")]:
        assert not stems_related(a, b), (a, b)
    for a, b in [("вытяжк", "вытяжн"), ("площадк", "площадн"), ("утепля", "утеплен")]:
        assert stems_related(a, b), (a, b)


def two_words(pairs: list[tuple[str, str]]) -> None:
    """Each pair is two words: no form of the other, no kin either way."""
    for a, b in pairs:
        assert not stems_related(a, b), (a, b)
        assert not stems_kin(a, b), (a, b)
        assert not stems_kin(b, a), (a, b)


def one_word(pairs: list[tuple[str, str]]) -> None:
    """Each pair is forms of one word."""
    for a, b in pairs:
        assert stems_related(a, b), (a, b)


def test_a_longer_stem_with_another_consonant_after_the_vowel_is_another_root() -> None:
    """So too where the other stem is longer: «размещение» is no form of «размер» (a «длина»
    asked said as «размер» found every clause placing a thing), «напряжение» none of
    «напрямую», «перемешивать» none of «переменный»; a root's consonant alternating in its words
    stays one word («водосточный» of «водосток», «повреждать» of «повредить»)."""
    two_words(
        [
            ("размер", "размещен"),
            ("размер", "разметк"),
            ("напрям", "напряжен"),
            ("перемен", "перемешива"),
            ("погреб", "погрешн"),
            ("раздел", "раздевалк"),
            ("границ", "гранит"),
            ("границ", "гранитн"),
        ]
    )
    one_word(
        [
            ("водосток", "водосточн"),
            ("повред", "поврежда"),
            ("тревог", "тревожн"),
            ("предотврат", "предотвраща"),
            ("нагруз", "нагружен"),
            ("деформац", "деформативн"),
            ("подва", "подвальн"),
            ("утепля", "утеплен"),
            ("геодезист", "геодезическ"),
        ]
    )


def test_a_three_letter_stem_ending_in_a_vowel_makes_its_adjective_with_ov_or_ev() -> None:
    """A stem of three letters ending in a vowel with «-н», «-ск» is another word («кран»,
    «краска» beside «край»); «-ев» makes its adjective («краевой»). Other stems keep every
    adjective's suffix («детский», «лесной», «стальной»)."""
    two_words([("кра", "кран"), ("кра", "краск")])
    one_word(
        [("кра", "краев"), ("дет", "детск"), ("лес", "лесн"), ("стал", "стальн"), ("плит", "плитн")]
    )


def test_a_noun_s_fleeting_vowel_goes_in_its_forms_only() -> None:
    """«участок», «образец», «козырёк» drop their vowel in their forms («участков»,
    «образцов», «козырька»); a stem going on with another letter there is another word
    («участник», «образование», «коробление» beside «коробок»)."""
    two_words([("участок", "участник"), ("образец", "образован"), ("коробок", "короблен")])
    one_word([("участок", "участков"), ("образец", "образцов"), ("козырек", "козырьк")])


def test_a_doer_s_or_a_device_s_ending_makes_another_word() -> None:
    """A stem and the same with a doer's or a device's ending name two things («защита»/
    «защитник», «проект»/«проектор», «тепловой»/«тепловоз», «кабина»/«кабинет»; «техника»
    said for a machine is no «технический», which norms write everywhere); a
    noun made of its adjective by «-ик» names the same («холодильный»/«холодильник»)."""
    two_words(
        [
            ("защит", "защитник"),
            ("камен", "каменщик"),
            ("проект", "проектор"),
            ("транспорт", "транспортер"),
            ("теплов", "тепловоз"),
            ("кабин", "кабинет"),
            ("техник", "техническ"),
        ]
    )
    one_word([("холодильн", "холодильник"), ("проект", "проектн"), ("кабин", "кабинк")])


def test_stems_sharing_a_prefix_and_a_letter_are_two_words() -> None:
    """Stems that part before the shorter's end share three letters of their root past a
    word-forming prefix: «перекрытие» is no form of «перекат» or «перекрёсток», «водопровод»
    none of «водопад», «автомобиль» none of «автомат», «внутренний» none of «внутривенный»
    (the longer's prefix), «контроль» none of «контракт»; «передвигать»/«передвижение» and
    «нагрузка»/«нагружение» are one word."""
    two_words(
        [
            ("перекрыт", "перекат"),
            ("перекрыт", "перекрест"),
            ("перепад", "переплав"),
            ("перегородк", "перегиб"),
            ("водопровод", "водопад"),
            ("автомобил", "автомат"),
            ("внутрен", "внутривен"),
            ("контрол", "контракт"),
            ("интерес", "интернет"),
        ]
    )
    one_word(
        [
            ("передвига", "передвижен"),
            ("перегрузк", "перегружател"),
            ("нагруз", "нагружен"),
            ("выдержан", "выдержива"),
            ("располаг", "расположен"),
            ("заземлен", "заземлител"),
        ]
    )


def test_after_a_consonant_only_a_suffix_s_letter_or_a_vowel_keeps_one_word() -> None:
    """Stems of one length past a consonant, differing in the shorter's last letter: a
    suffix's consonants («вытяжка»/«вытяжной», «доставка»/«доставлен», «застройка»/
    «застройщик») or a vowel («закладка»/«закладывать») keep one word; other letters are
    two words («отделка»/«отдельный», «поверка»/«поверхность», «участвовать»/«участок»,
    «примерный»/«примерзание», «организм»/«организация»); a vowel put before the last
    letter keeps one («медсестра»/«медсестёр»)."""
    two_words(
        [
            ("отделк", "отдельн"),
            ("поверк", "поверх"),
            ("поверк", "поверхн"),
            ("участв", "участк"),
            ("примерн", "примерзан"),
            ("продолж", "продольн"),
            ("участв", "участок"),
            ("организм", "организац"),
            ("отдела", "отдельн"),
        ]
    )
    one_word(
        [
            ("вытяжк", "вытяжн"),
            ("доставк", "доставлен"),
            ("застройк", "застройщик"),
            ("закладк", "закладыва"),
            ("утверд", "утвержден"),
            ("площадк", "площадок"),
            ("медсестр", "медсестер"),
        ]
    )


@given(start=stems, end_a=stems | suffixes, end_b=stems | suffixes)
def test_kin_stems_start_where_the_vocabulary_looks(start: str, end_a: str, end_b: str) -> None:
    """The vocabulary tries a query's noun against the stems starting as it does or as the
    adjective its `fleeting_bases` open."""
    a, b = start + end_a, start[:-1] + end_b if len(start) > 3 else start + end_b
    short, long = sorted((a, b), key=len)
    if a != b and stems_kin(a, b):
        assert long[:3] in {short[:3], *(base[:3] for base in fleeting_bases(short))}, (a, b)


def test_a_noun_s_adjective_with_a_vowel_put_in_is_its_kin() -> None:
    """«окно»/«оконный», «кровля»/«кровельный», «сутки»/«суточный» (к before «н» is ч): one
    thing to a search and a claim's word check, not to a condition (`stems_related`)."""
    for noun, adjective in [("окн", "окон"), ("кровл", "кровельн"), ("сутк", "суточн"),
                            ("плитк", "плиточн"), ("стекл", "стекольн"), ("выемк", "выемок")]:  # fmt: skip
        assert stems_kin(noun, adjective), (noun, adjective)
        assert stems_kin(adjective, noun), (noun, adjective)
        assert not stems_related(noun, adjective), (noun, adjective)
    # a root shared is not enough: the vowel goes between the noun's last two consonants
    for a, b in [("пробк", "пробел"), ("окн", "окунев"), ("сутк", "сутолок"), ("метр", "метод")]:
        assert not stems_kin(a, b), (a, b)


def test_the_c_stemmer_stems_the_real_clauses_words_as_the_python_one() -> None:
    """The search stems with PyStemmer (C) where it is installed and with snowballstemmer
    (pure Python) elsewhere: an index built by one is read by the other, so every word of
    the real clauses kept as material must stem alike (the whole dataset's 107,207 distinct
    words did, when the C one was taken)."""
    import re

    import Stemmer
    from snowballstemmer.russian_stemmer import RussianStemmer

    from normagpt.parsing import word_stem
    from tests.normagpt.material import material

    text = " ".join(
        clause["text"]
        for name in ("conditions.json", "reading.json")
        for clause in material(name)["clauses"]
    )
    words = sorted(set(re.findall(r"[а-я]+", text.lower().replace("ё", "е"))))
    assert len(words) > 2500
    python, c = RussianStemmer(), Stemmer.Stemmer("russian")
    assert [python.stemWord(w) for w in words] == c.stemWords(words)
    assert type(_stemmer_of_this_thread()).__module__ == "Stemmer"  # the search's is the C one
    assert word_stem("архива") == "архив"


def _stemmer_of_this_thread() -> object:
    from normagpt import parsing

    parsing.word_stem("дом")
    return parsing._stemmers.russian


def test_a_noun_s_adjective_made_with_a_suffix_of_its_own_is_its_kin_not_its_form() -> None:
    """«Сколько пыли и глины в щебне?» is answered by «Содержание пылевидных и глинистых
    частиц в щебне …» (ГОСТ 26633-2015 п. 4.7.11): a search and a claim's word check take
    the adjective for the noun; a condition does not («глины» are one row of «глинистые
    грунты»)."""
    for noun, adjective in [("глин", "глинист"), ("пыл", "пылевидн"), ("климат", "климатическ"),
                            ("пор", "порист"), ("зерн", "зернист")]:  # fmt: skip
        assert stems_kin(noun, adjective), (noun, adjective)
        assert stems_kin(adjective, noun), (noun, adjective)
        assert not stems_related(noun, adjective), (noun, adjective)
    # the suffix follows the whole noun: a shorter root is another word
    for a, b in [("глин", "глиняст"), ("клим", "климатическ"), ("пыл", "пылесос")]:
        assert not stems_kin(a, b), (a, b)
