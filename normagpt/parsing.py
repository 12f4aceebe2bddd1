"""Pure functions: document codes, clause numbers, search terms, tolerant JSON (no I/O)."""

from __future__ import annotations

import bisect
import functools
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

import json_repair

from normagpt.split_words import letter_spaced_joined, words_rejoined

_stemmers = threading.local()
# «5.1.3 Толщину…», «8.3.2. Для…», «п. 10.3.2»: clause numbers with two to five parts that
# open a line (a heading or a numbered paragraph) and are followed by a word.
_CLAUSE = re.compile(r"^\s*(?:п\.\s*)?(\d{1,2}(?:\.\d{1,3}){1,4})\.?\s+(?=[А-ЯЁA-Zа-яё(«])", re.M)
_WORD = re.compile(r"[0-9a-zа-яё]+(?:[.\-][0-9a-zа-яё]+)*", re.I)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_STOP = set("и в во на по для с со к ко о об от до из у за при не что как или а но".split())
_TOKEN = re.compile(r"[0-9a-zа-яё]+")
_DIGIT = re.compile(r"\d")
_HYPHENATED = re.compile(r"([а-яёa-z])-\s*\n\s*([а-яёa-z])")


# pdfium marks a word hyphenated at a line's end with U+0002 (where the PDF drew «-»);
# typesetters leave soft hyphens (U+00AD). Either, at a line's end, joins the word's halves.
_LINE_HYPHEN = re.compile(r"[\u0002\u00ad][ \t]*\r?\n[ \t]*")
_STRAY = re.compile(r"[\u0000-\u0008\u000b\u000c\u000e-\u001f\u00ad\ufeff]")


def text_clean(text: str) -> str:
    """A page's text as a reader sees it: words hyphenated at a line's end by pdfium's mark
    (U+0002) or a soft hyphen joined («наи\\u0002\\nменование» → «наименование»), words
    its text layer split by a space joined (`words_rejoined`), other control characters and
    soft hyphens removed, line ends as «\\n»."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\u0002" in text or "\u00ad" in text:
        text = _LINE_HYPHEN.sub("", text)
    return words_rejoined(_STRAY.sub("", text))


# Clause numbers as stored and compared: an appendix's letter upper case and Cyrillic
# («A.1» typed in Latin → «А.1»), a clause's added letter lower case Cyrillic («2.7a» →
# «2.7а»), and «З» read by OCR where a digit stands («А.З.2» → «А.3.2»).
_LATIN_LOOKALIKE = str.maketrans("ABCEHKMOPTXaceopxy", "АВСЕНКМОРТХасеорху")


# A law's article is stored as it is cited: «ст. 26», «ст. 15.1», «ст. 55.16-1» («Статья 26»,
# «статьи 26», «ст.26» read alike): a number of its own kind, never a clause «26».
ARTICLE_NUMBER = r"\d{1,3}(?:\.\d{1,2})?(?:-\d{1,2})?"
_ARTICLE = re.compile(rf"^(?:ст\.?|стать[а-яё]*)\s*({ARTICLE_NUMBER})\.?$", re.I)


def article_number(number: str) -> str:
    """The stored form of a law's article: «26» → «ст. 26»."""
    return f"ст. {number}"


def clause_label(number: str, *, table: bool = False) -> str:
    """A clause as a person cites it: «п. 5.8», «табл. 9.1», a law's article as it is
    («ст. 26»); «п. —» for a text without a number."""
    if table:
        return f"табл. {number or '—'}"
    return number if number.startswith("ст.") else f"п. {number or '—'}"


def number_normal(number: str) -> str:
    """A clause or table number in the one form stored and compared (see above)."""
    if number[:1] in "сСcC" and (article := _ARTICLE.match(" ".join(number.split()))):
        return article_number(article.group(1))
    parts = " ".join(number.split()).translate(_LATIN_LOOKALIKE).split(".")
    for i, part in enumerate(parts):
        if i and part in ("З", "з"):
            parts[i] = "3"
        elif part[:1].isdigit():
            parts[i] = part.lower()
        else:
            parts[i] = part.upper()
    return ".".join(parts)


def code_key(code: str) -> str:
    """How a document code is compared: casefolded, ё→е, no spaces: «СП 63» → «сп63»."""
    return "".join(code.split()).casefold().replace("ё", "е")


def alias_key(alias: str) -> str:
    """How a short document name is compared: its code key without edge punctuation:
    «СП 63» and «сп63» → «сп63», «63.13330.» → «63.13330»."""
    return code_key(alias).strip(".,;:-–—()«»\"'")


# the series a norm's code opens with («СП 63.13330.2018», «ГОСТ Р 53292», «СНиП 2.01.07-85»,
# «Пособие 2.02.01-83», «ВСН 58-88»): a text names a document by it and a number
DOCUMENT_SERIES = r"СП|ГОСТ(?:\s*Р)?|СНиП|СанПиН|СТО|ВСН|МДС|РД|ТСН|МГСН|НПБ|Пособие"
_CODE_PARTS = re.compile(r"^\s*([^\W\d_]+(?:\s+Р)?)\s*(\d.*?)\s*$", re.I)
_YEAR = re.compile(r"[.\-–](?:19|20)\d\d$|-\d\d$")


# a document known by its name: a law by its number («Федеральный закон 123-», as the dataset
# cuts «123-ФЗ»), rules by their abbreviation («Правила ПУЭ»)
_LAW_CODE = re.compile(r"^Федеральный\s+закон\s+(?:№\s*)?(\d{1,3})(?:\s*-\s*(?:ФЗ)?)?$", re.I)
_ABBREVIATED = re.compile(r"^(?:Правила|Правил)\s+([А-ЯЁ]{2,6})$")


def code_aliases(code: str) -> list[str]:
    """The short names a document's code is known by: «СП 63.13330.2018» → «СП 63.13330»,
    «СП 63», «63.13330», «63.13330.2018»; «ГОСТ 10180-2012» → «ГОСТ 10180», «10180-2012»;
    «СНиП 52-01-2003» → «СНиП 52-01», «52-01-2003»; «Федеральный закон 123-» → «123-ФЗ»;
    «Правила ПУЭ» → «ПУЭ» (and the code itself). `normagpt.claims` names these documents by
    the same short names."""
    code = " ".join(code.split())
    if law := _LAW_CODE.match(code):
        return [code, f"{law.group(1)}-ФЗ"]
    if rules := _ABBREVIATED.match(code):
        return [code, rules.group(1)]
    match = _CODE_PARTS.match(code)
    if match is None:
        return [code]
    kind, number = match.group(1), match.group(2)
    base = _YEAR.sub("", number)
    names = [code, f"{kind} {base}", number, base]
    if kind_from_code(kind) == "sp" and "." in base:
        names.append(f"{kind} {base.split('.')[0]}")
    unique = {alias_key(name): name for name in names if len(alias_key(name)) >= 3}
    return list(unique.values())


# the codes of law a norm question meets, by their adjective's stem: (the adjective as the
# title writes it, the abbreviation a citation uses: «ЖК РФ», «ГрК РФ»)
_CODEXES = {
    "жилищн": ("Жилищный", "ЖК"),
    "градостроительн": ("Градостроительный", "ГрК"),
    "земельн": ("Земельный", "ЗК"),
    "гражданск": ("Гражданский", "ГК"),
    "водн": ("Водный", "ВК"),
    "лесн": ("Лесной", "ЛК"),
}
_CODEX_TITLE = re.compile(r"^\W*([А-ЯЁа-яё]+)\s+кодекс\s+Российской\s+Федерации", re.I)
# a code named in a text: «Жилищный кодекс», «Жилищного кодекса РФ», «ЖК РФ», «ГрК»
CODEX_PATTERN = (
    rf"(?P<codex>(?:{'|'.join(_CODEXES)})[а-яё]*\s+кодекс[а-яё]*"
    r"(?:\s+(?:Российской\s+Федерации|РФ))?"
    rf"|(?:{'|'.join(a for _, a in _CODEXES.values())})\s*РФ|ГрК)"
)


def title_aliases(title: str) -> list[str]:
    """The names a code of law is known by, read from its title: «Жилищный кодекс Российской
    Федерации» → «Жилищный кодекс», «Жилищный кодекс РФ», «ЖК РФ» (a known code's
    abbreviation; «ГрК» alone too, three letters); [] for other titles."""
    match = _CODEX_TITLE.match(" ".join(title.split()))
    if match is None:
        return []
    adjective = match.group(1).capitalize()
    known = next((v for k, v in _CODEXES.items() if adjective.lower().startswith(k)), None)
    names = [f"{adjective} кодекс Российской Федерации", f"{adjective} кодекс"]
    names.append(f"{adjective} кодекс РФ")
    if known is not None:
        names += [f"{known[1]} РФ", *([known[1]] if len(known[1]) >= 3 else [])]
    return names


def codex_name(written: str) -> str:
    """The short name of a code of law as written in a text («Жилищного кодекса РФ», «ЖК
    РФ», «ГрК»): «ЖК РФ», «ГрК РФ» (an alias `title_aliases` gives it)."""
    low = written.lower()
    for stem, (_, abbreviation) in _CODEXES.items():
        if low.startswith((stem, abbreviation.lower())):
            return f"{abbreviation} РФ"
    return written


def code_matches(named: str, code: str) -> bool:
    """Whether a code a person or model named («СП 63.13330») denotes `code` (prefix either way)."""
    a, b = code_key(named), code_key(code)
    return bool(a) and (a == b or b.startswith(a) or a.startswith(b))


def kind_from_code(code: str) -> str:
    """The document kind its code names: gost, sp, snip or other."""
    head = code_key(code)
    for prefix, kind in (("снип", "snip"), ("гост", "gost"), ("сп", "sp")):
        if head.startswith(prefix):
            return kind
    return "other"


def clauses_find(text: str) -> list[str]:
    """Clause numbers that open a line of the page, in order, each once."""
    return list(dict.fromkeys(match.group(1) for match in _CLAUSE.finditer(text)))


def search_normalize(text: str) -> str:
    """Lower case, ё→е, one space: the form search indexes and queries share."""
    return " ".join(text.split()).lower().replace("ё", "е")


def stem(word: str) -> str:
    """The word's Russian stem (Snowball, the algorithm of PostgreSQL's `russian`
    dictionary): «помещении», «помещениях» → «помещен»."""
    return _stem(search_normalize(word))


def word_stem(word: str) -> str:
    """One word's stem as `search_stems` makes it (a word of letters only: no tokenizing)."""
    return _stem(word.lower().replace("ё", "е"))


@functools.lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    if not word.isalpha():
        return word
    stemmer = getattr(_stemmers, "russian", None)
    if stemmer is None:  # a stemmer keeps state while it works: one per thread
        stemmer = _stemmers.russian = _stemmer()
    stemmed: str = stemmer.stemWord(word)
    return stemmed if len(stemmed) >= 2 else word


def _stemmer() -> Any:
    """Snowball's Russian stemmer: PyStemmer's, in C, where it is installed (a word the
    process has not stemmed yet costs 3 µs, not 50: a question's noun forms, a corpus's
    ingestion); the pure-Python one of the same Snowball release elsewhere. They stem the
    dataset's 107,207 distinct words alike (tests/normagpt/test_stems.py checks a sample)."""
    try:
        import Stemmer  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        # Imported on first use: the package loads all its 30 languages (50 ms of a start).
        from snowballstemmer.russian_stemmer import RussianStemmer

        return RussianStemmer()
    return Stemmer.Stemmer("russian")


# numbers in words, in the forms norms and questions write them («от трех до семи лет»)
NUMERALS = (
    "один одного одной два двух двум три трех трем четыре четырех пять пяти шесть шести семь "
    "семи восемь восьми девять девяти десять десяти двадцать двадцати тридцать тридцати "
    "сорок сорока сто ста тысяча тысячи полтора половина"
)


def search_terms(keywords: list[str]) -> list[str]:
    """The distinct stems of the words of `keywords`, stop words left out."""
    terms: list[str] = []
    for keyword in keywords:
        for word in _WORD.findall(search_normalize(keyword)):
            if word in _STOP or len(word) < 2:
                continue
            terms.append(stem(word))
    return list(dict.fromkeys(terms))


# a distance between two things: «от уровня перекрытия (…натяжного потолка) до
# воздухозаборного отверстия»; not a range («от 3 до 5 м»: digits in its near end)
FROM_TO = re.compile(
    r"(?<![а-яё])от\s+(?P<near>[^.;:\d]{3,90}?)\s+до\s+(?P<far>[а-яё]+(?:[\s-]+[а-яё]+){0,2})",
    re.I,
)


def search_stems(text: str) -> list[str]:
    """The stems of the words of `text`, in order, stop words and one-letter words left
    out; words hyphenated across a line break joined, and those set letter-spaced
    (`letter_spaced_joined`). What clause search indexes (a space-separated string of them)
    and how a query is read, on every database alike."""
    return [_stem(word) for word in search_stems_words(text)]


# Words of a question, not of the norm asked about: left out of the search.
_QUESTION = set(
    """
    какой какая какое какие каков какова каково каковы какую каким каких сколько нужно надо
    ли можно нельзя где когда почему зачем чем должен должна должно должны является
    являются требуется требуются ответ вопрос норма нормы нормам согласно указать укажите
    """.split()
)
# «п. 10.3.2», «пункт 10.3.2», «пунктом 5.2», «пп. 4.1, 4.2»; «табл. 5.1», «таблица Б.2»
_CLAUSE_REF = re.compile(
    r"\b(?:пп?\.|пункт[а-я]*|п)\s*((?:[А-ЯЁA-Z]\.)?\d{1,2}(?:\.\d{1,3}){1,4})(?!\.?\d)",
    re.I,
)
_TABLE_REF = re.compile(
    r"\b(?:табл\.|таблиц[а-я]*)\s*((?:[А-ЯЁA-Z]\.?)?\d{1,2}(?:\.\d{1,3}){0,3})(?!\.?\d)", re.I
)
# «10.3.2» alone (three or more parts: not a decimal value, not a code's «63.13330»)
_BARE_CLAUSE = re.compile(r"(?<![\d.])(\d{1,2}\.\d{1,3}\.\d{1,3}(?:\.\d{1,3})?)(?![\d]|\.\d)")
# «СП 63.13330.2018», «СП 63», «сп63», «ГОСТ Р 53292», «СНиП 2.01.07-85»; «63.13330» alone
_DOCUMENT_REF = re.compile(
    rf"\b(?:{DOCUMENT_SERIES}|ТУ)\s*\d[\d.\-–]*\d|\b\d{{1,3}}\.\d{{5,7}}(?:\.\d{{4}})?\b", re.I
)


# a law's article cited, with the part and item it names: «ст. 26», «статья 26», «статьи 51»,
# «ч. 2 ст. 26», «п. 3 ч. 1 ст. 51» (the article is what is looked up: one clause holds it)
ARTICLE_REF = re.compile(
    r"(?:\b(?:пп?\.|пункт[а-я]*)\s*\d{1,3}(?:\.\d{1,2})?\)?\s*,?\s*)?"
    r"(?:\b(?:ч\.|част[а-я]*)\s*\d{1,3}(?:\.\d{1,2})?\s*,?\s*)?"
    rf"\b(?:ст\.|стать[а-яё]*)\s*({ARTICLE_NUMBER})(?![\d.]*\d|[а-яёa-z])",
    re.I,
)
_CODEX_REF = re.compile(rf"\b{CODEX_PATTERN}(?!\w)", re.I)


@dataclass(frozen=True)
class ClauseRef:
    kind: str  # "clause" or "table"
    number: str


@dataclass
class Query:
    """Search keywords read: the documents and clauses they name, and the stems of the rest,
    phrase by phrase (a phrase's neighbouring stems count more when they are neighbours in a
    clause too)."""

    phrases: list[list[str]]
    documents: list[str]
    clauses: list[ClauseRef]
    words: dict[str, str] = field(default_factory=dict)  # each stem as first written
    quantity: str = ""  # the stem of the quantity asked («высот»), '' when none
    # every quantity the asking words name, the first `quantity` («прочность … соединений»,
    # «значение разрушающей нагрузки»: a clause on either says what is asked)
    quantities: tuple[str, ...] = ()
    # the stems norms use for a stem of the query (a lay word's, a quantity's): each counts
    # as the stem itself (`normagpt.questions`)
    said_as: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # stems only the story around a question holds, not its asking sentence: they weigh less
    context: frozenset[str] = frozenset()
    sentence: bool = False  # a keyword is a whole question, not the norms' words
    # a distance asked between two things («расстояние от перекрытия до натяжного потолка»):
    # the stems of each end (`normagpt.quantities_told.distance_ends`)
    ends: tuple[tuple[frozenset[str], frozenset[str]], ...] = ()
    # the quantities another is asked per («мощность котла на площадь дома»: «площад»)
    per: tuple[str, ...] = ()
    # stems kin to another of the query's (`stems_kin`) that are another word («площадк» of
    # «площадка» beside «площад» of «площадь»): each its own, no variant of the other
    apart: frozenset[str] = frozenset()
    # what a whole question asks about: the stems of the nouns its asking sentence names as
    # the subject, the object or the owner of the quantity asked (`questions._things_asked`)
    things: frozenset[str] = frozenset()
    # the actions a whole question asks the time of («Как часто … чистить водостоки?»): for
    # each, the stems of the words norms name it by (the lexicon's `actions`)
    actions: tuple[frozenset[str], ...] = ()
    # a thing's owner a whole question names after it, in the genitive («наружный блок
    # кондиционера»): a clause names the thing only with its owner (`judging.Judge`)
    owners: dict[str, str] = field(default_factory=dict)
    # of `things`, the owners of a quantity asked («лет гарантии», «концентрация радона»):
    # what the question asks the quantity of, named where any of them is asked
    of_quantity: frozenset[str] = frozenset()
    # the events a time asked is counted from («Через сколько лет после постройки …»), each
    # as the stems norms name it by: a clause said to answer names each (`judging.Judge`)
    events: tuple[frozenset[str], ...] = ()

    @property
    def terms(self) -> list[str]:
        return list(dict.fromkeys(t for phrase in self.phrases for t in phrase))


def query_parse(keywords: list[str]) -> Query:
    """`keywords` read as a search: document codes and aliases, clause and table numbers,
    and the remaining words' stems (question words and stop words left out)."""
    phrases: list[list[str]] = []
    documents: list[str] = []
    clauses: list[ClauseRef] = []
    words: dict[str, str] = {}
    for keyword in keywords:
        text = " ".join(keyword.split())
        if _DIGIT.search(text):  # every reference holds a number: most keywords hold none
            if "ст" in text.lower():  # a law's article, of a code named by its name
                clauses += [ClauseRef("clause", number_normal(f"ст. {m.group(1)}"))
                            for m in ARTICLE_REF.finditer(text)]  # fmt: skip
                text = ARTICLE_REF.sub(" ", text)
                documents += [codex_name(m.group(0)) for m in _CODEX_REF.finditer(text)]
                text = _CODEX_REF.sub(" ", text)
            for pattern, kind in ((_TABLE_REF, "table"), (_CLAUSE_REF, "clause")):
                clauses += [ClauseRef(kind, m.group(1).upper()) for m in pattern.finditer(text)]
                text = pattern.sub(" ", text)
            documents += [m.group(0) for m in _DOCUMENT_REF.finditer(text)]
            text = _DOCUMENT_REF.sub(" ", text)
            clauses += [ClauseRef("clause", m.group(1)) for m in _BARE_CLAUSE.finditer(text)]
            text = _BARE_CLAUSE.sub(" ", text)
        stems = []
        for word in search_stems_words(text):
            if word not in _QUESTION:
                stems.append(_stem(word))
                words.setdefault(stems[-1], word)
        if stems:
            phrases.append(stems)
    return Query(phrases, list(dict.fromkeys(documents)), list(dict.fromkeys(clauses)), words)


_DOTTED = re.compile(r"\d+(?:\.\d+)+")  # clause numbers and codes: searched otherwise
_GRADE = re.compile(r"\b([а-яa-z]{1,4})(\d+)\.(\d+)\b")  # «Ф1.3» → «ф13»: one word
_ROMAN = {"i", "v", "x"}  # «I степени», «категории V»


def search_stems_words(text: str) -> list[str]:
    """The words `search_stems` stems, before stemming: numbers («7 баллов») and grades
    («Ф1.3», «IА») kept, clause numbers and codes left out."""
    text = text.lower().replace("ё", "е")
    if "-" in text:
        text = _HYPHENATED.sub(r"\1\2", text)
    text = letter_spaced_joined(text)
    if _DIGIT.search(text):  # clause numbers, codes and grades hold digits
        text = _DOTTED.sub(" ", _GRADE.sub(r"\1\2\3", text))
    return [
        w
        for w in _TOKEN.findall(text)
        if (len(w) > 1 or w.isdigit() or w in _ROMAN) and w not in _STOP and len(w) <= 40
    ]


_TABLE_POINTER = re.compile(
    r"\b(?:по|в|из)\s+таблиц[еаы]\s+((?:[А-ЯЁA-Z]\.?)?\d{1,2}(?:\.\d{1,3}){0,3})(?![\d.]*\d)"
)


# a table of the same document named anyhow («по таблице Г. 1», «приведены в таблице 5.11»,
# «см. табл. 8.3»; not «таблицы 5.1 СП 20.13330»): `table_refs` takes only those a clause
# brings («по таблице 5.3»)
TABLE_MENTION = re.compile(
    r"табл(?:\.|иц[аеуы]\w*)\s*(?P<number>(?:[А-ЯЁA-Z]\s?\.\s?)?\d{1,2}(?:\s?\.\s?\d{1,3}){0,3})"
    rf"(?![\dа-яёa-z]|[.,]\d|\s*(?:{DOCUMENT_SERIES})\b)",
    re.I,
)


def table_refs(text: str) -> list[str]:
    """The tables a clause points to: «… принимают по таблице 5.3» → ["5.3"]."""
    if "таблиц" not in text:  # most clauses: no regex run over a long text
        return []
    return list(dict.fromkeys(_TABLE_POINTER.findall(text)))


def snippet(text: str, terms: list[str], width: int = 240) -> str:
    """About `width` characters of `text` around the place where most of the terms occur
    within `width` characters: the earliest such start of a term's occurrence."""
    flat = " ".join(text.split())  # the regex `\s+` is slower on Cyrillic than split
    low = flat.lower().replace("ё", "е")
    if len(flat) <= width:  # every window from the first term found holds all found
        first = [at for term in terms if term and (at := low.find(term)) >= 0]
        start = max(0, min(first) - width // 4) if first else 0
        return ("…" if start else "") + flat[start:]
    every: dict[str, list[int]] = {}  # each term's occurrences, overlapping ones too
    starts: list[int] = []  # the windows tried: where a term starts, left to right
    for term in dict.fromkeys(t for t in terms if t):
        found, at = [], low.find(term)
        while at >= 0:
            found.append(at)
            at = low.find(term, at + 1)
        if found:
            every[term] = found
            after = -1
            for at in found:  # the occurrences a left-to-right scan finds
                if at >= after:
                    starts.append(at)
                    after = at + len(term)
    start = 0
    if starts:

        def held(p: int) -> int:  # the terms wholly inside the window from p
            end = p + width
            count = 0
            for term, found in every.items():
                i = bisect.bisect_left(found, p)
                count += i < len(found) and found[i] + len(term) <= end
            return count

        best, most = 0, -1  # the earliest window holding the most: none holds more than all
        for p in sorted(starts):
            if (count := held(p)) > most:
                best, most = p, count
                if count == len(every):
                    break
        start = max(0, best - width // 4)
    piece = flat[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")


class JsonParseError(ValueError):
    """The model's reply holds no JSON object."""


def parse_json(reply: str) -> dict[str, Any]:
    """The JSON object in a model's reply: fenced or bare, repaired (trailing commas, quotes).

    Raises JsonParseError when nothing resembling an object can be read.
    """
    text = reply.strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    elif "{" in text:
        text = text[text.index("{") : text.rindex("}") + 1 if "}" in text else len(text)]
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = json_repair.loads(text) if "{" in text else None
    if not isinstance(value, dict) or not value:
        raise JsonParseError("the reply holds no JSON object")
    return value
