"""The words and numbers of a clause's or a claim's text a condition is told by (pure):
stems without the words of an answer about norms, numbers with their side («до 50 м»),
values with where they are, a number bounding a condition («в балках высотой 150 мм и
более»)."""

from __future__ import annotations

import functools
import re
from collections import Counter

from core.russian import morphology
from normagpt import claims as c
from normagpt.parsing import search_stems

# words of an answer about norms, not of what a norm says (stemmed on first use: the
# stemmer stays off the MCP server's start-up)
GENERIC_WORDS = """требование требования норма нормы пункт пункта пункте документ документа согласно
        соответствии значение значения величина принимать принимается принимают следует
        необходимо нужно требуется должна должен должно должны допускается составляет
        указано указанный установлено устанавливает предусматривать обеспечивать ответ
        вопрос случае случаях также таблица таблице таблицы данным данные свод правил
        стандарт применяется применять является являются мин макс минимальный максимальный
        минимальная максимальная минимальное максимальное условие условия более менее
        ниже выше больше меньше также который которая которые которых этого этой этом этих
        только может могут быть было были будет если чтобы этот эта этих всех всего своих
        здесь тогда поэтому однако например именно равна равен равно составлять количество
        количества количестве"""
# words that name no condition: a part for the cases the other parts leave («а в других
# подрайонах — 2,5 м»), pronouns and prepositions the stop list lacks
PLAIN_WORDS = """других остальных прочих иных под над ним них его нее они оно она это все всех
    без так где когда можно нельзя том той тех чем иметь имеет имеют числе"""
# numbers written as words name conditions as digits do: «высотой два-три этажа», «сто
# двадцать миллиметров» (a number's words follow one another: summed)
NUMBER_WORDS = {
    word: number * scale
    for scale, forms in [
        (1, ["", "один одна одно одного одной одному", "два две двух двум", "три трех трем",
             "четыре четырех четырем", "пять пяти", "шесть шести", "семь семи",
             "восемь восьми", "девять девяти", "десять десяти",
             "одиннадцать одиннадцати", "двенадцать двенадцати", "тринадцать тринадцати",
             "четырнадцать четырнадцати", "пятнадцать пятнадцати", "шестнадцать шестнадцати",
             "семнадцать семнадцати", "восемнадцать восемнадцати",
             "девятнадцать девятнадцати"]),
        (10, ["", "", "двадцать двадцати", "тридцать тридцати", "сорок сорока",
              "пятьдесят пятидесяти", "шестьдесят шестидесяти", "семьдесят семидесяти",
              "восемьдесят восьмидесяти", "девяносто девяноста"]),
        (100, ["", "сто ста", "двести двухсот", "триста трехсот", "четыреста четырехсот",
               "пятьсот пятисот", "шестьсот шестисот"]),
    ]
    for number, words in enumerate(forms)
    for word in words.split()
} | {"полтора": 1.5, "полутора": 1.5}  # fmt: skip
# «шести тысячах»: the number before it, in thousands
THOUSANDS = frozenset({"тысяча", "тысячи", "тысяч", "тысячах", "тысячам", "тысячу", "тысячей"})
# a category, class, degree or zone is numbered in Roman numerals: «четвертой категории» is «IV»
_ORDINAL = re.compile(
    r"^(перв|втор|трет|четверт|пят)(?:ый|ой|ая|ое|ого|ому|ым|ую|ий|ья|ье|ьей|ьего|ьих|ых)$"
)
ORDINALS = {"перв": "i", "втор": "ii", "трет": "iii", "четверт": "iv", "пят": "v"}
_NUMBERED_BY_ROMAN = re.compile(r"^\s*(?:категор|класс|степен|зон|район|подрайон|групп|тип)", re.I)
PREPOSITIONS = {"в", "во", "при", "для", "на", "с", "со", "у", "от", "до", "по", "из", "к"}
_LATIN = str.maketrans("abcehkmoptxy", "абсенкмортху")  # «IA» typed in Latin is «IА»
_WORD = re.compile(r"[0-9a-zа-яё]+(?:-[0-9a-zа-яё]+)*", re.I)


@functools.cache
def generic() -> frozenset[str]:
    """The stems of `GENERIC_WORDS`."""
    return frozenset(search_stems(GENERIC_WORDS))


@functools.cache
def _plain() -> frozenset[str]:
    """The stems that name no condition: `generic` and `PLAIN_WORDS`."""
    return generic() | frozenset(search_stems(PLAIN_WORDS))


def _stem_of(word: str) -> str:
    """A word's stem; a code's («IA», «1Б», «С1») in one spelling: Cyrillic letters, «1»
    read as «I» before a letter (as OCR reads «IБ»)."""
    stems = search_stems(word)
    stem = stems[0] if len(stems) == 1 else ""
    if re.search(r"\d|^[iv]", stem) and len(stem) <= 5:  # «IА», «1Б», «С1»: codes
        return re.sub(r"^1(?=[а-я])", "i", stem.translate(_LATIN))
    return stem


def _telling(stem: str) -> bool:
    """Whether a stem may name a condition: not a bare number, not a word of `_plain`, three
    letters or more unless a code («iа», «1г»)."""
    if not stem or stem in _plain() or stem.isdigit():
        return False
    return len(stem) >= 3 or bool(re.search(r"\d|^[iv]", stem))


def words_of(text: str) -> list[tuple[int, str]]:
    """The telling words of `text` (values, references and codes left out): position and
    stem each. A hyphenated word is its parts («кухни-ниши»: кухн, ниш); a number written
    in words is a number («сто двадцать»: #120), so is a thickness in bricks («в полкирпича»:
    #120); «I А» read apart is «IА», «Г азоснабжение» «Газоснабжение»; a negated adjective is
    one word («не защищенной»: незащищен)."""
    bare = _SPACED_CODE.sub(lambda m: f"{m[1].replace('1', 'I')}{m[2]} ", bare_text(text))
    bare = _SPLIT_CAPITAL.sub(lambda m: f"{m[1]}{m[2]} ", bare)
    bare = _NEGATED.sub(r"\1-", bare)  # «не защищенной»: one word, the other condition
    bare = _GLUED_AND.sub("и ", bare)  # «3 и4»: the typesetter's lost space
    out = [(m.start(), f"#{bricks_thickness(m['bricks'])}") for m in BRICK_THICKNESS.finditer(bare)]
    bare = BRICK_THICKNESS.sub(lambda m: " " * len(m.group(0)), bare)
    number: list[float] = []  # a number's words so far: where they begin and end, their values
    for match in _WORD.finditer(bare):
        if number and bare[int(number[1]) : match.start()].strip():  # «тысяча, две …»
            out += _number_word(bare, number)
            number = []
        written = match.group(0).lower().replace("ё", "е")
        for part in re.sub(r"^не-", "не", written).split("-"):
            if part in THOUSANDS:  # «шести тысячах»: 6000; «тысяча» alone: 1000
                start = int(number[0]) if number else match.start()
                number = [start, match.end(), (sum(number[2:]) if number else 1) * 1000]
                continue
            value = NUMBER_WORDS.get(part)
            if value is not None and number and value < number[-1] and number[-1] % 10 == 0:
                number += [value]  # «сто» «двадцать»: one number
                number[1] = match.end()
                continue
            if number:
                out += _number_word(bare, number)
                number = []
            if value is not None:
                number = [match.start(), match.end(), value]
            elif code := _roman(part, bare[match.end() :]):
                out.append((match.start(), code))
            elif _telling(stem := _stem_of(part)):
                out.append((match.start(), stem))
    if number:
        out += _number_word(bare, number)
    return sorted(out)


# a negated adjective or participle names the other condition: «не защищенной» is not
# «защищенной» («не более», «не менее» are a bound's words)
_NEGATED = re.compile(
    r"\b(не) (?!более|менее|ниже|выше|больше|меньше)(?=[а-яё]{3,}(?:ой|ый|ий|ая|яя|ое|ее|ые|ие"
    r"|ых|их|ого|его|ому|ему|ым|им|ыми|ими|ую|юю)\b)",
    re.I,
)
# a wall's or a layer's thickness in bricks (a brick is 250 × 120 × 65 мм, joints 10 мм)
BRICKS = {"полкирпича": 120, "кирпич": 250, "полтора кирпича": 380, "два кирпича": 510}
BRICK_THICKNESS = re.compile(
    r"\bв\s+(?P<bricks>полкирпича|(?:один\s+)?кирпич|полтора\s+кирпича|два\s+кирпича)\b", re.I
)


def bricks_thickness(written: str) -> int:
    """The thickness, in millimetres, of a wall or a layer in so many bricks as written («в
    полкирпича»: 120)."""
    return BRICKS[" ".join(w for w in written.lower().split() if w != "один")]


def _number_word(bare: str, number: list[float]) -> list[tuple[int, str]]:
    """A number written in words as a mark with its side («до семи лет»: #7-); a number of
    thousands in thousands too, as a table counts them («одной тысячи»: #1000 and #1 of «Число
    жителей, тыс. чел.»)."""
    start, end = int(number[0]), int(number[1])
    side = _side(bare[max(0, start - 25) : start], bare[end : end + 12])
    total = sum(number[2:])
    marks = [(start, f"#{total:g}{side}")]
    if re.search(r"тысяч\w*$", bare[start:end], re.I) and total % 1000 == 0:
        marks.append((start, f"#{total / 1000:g}{side}"))
    return marks


def _roman(word: str, after: str) -> str:
    """The Roman numeral an ordinal names before a category's, class's or zone's word
    («четвертой категории»: «iv», as `_stem_of` spells «IV»), else ''."""
    ordinal = _ORDINAL.match(word)
    if ordinal is None or not _NUMBERED_BY_ROMAN.match(after):
        return ""
    return ORDINALS[ordinal.group(1)]


# a capital OCR set apart from its word («Г азоснабжение»): not a word of one letter
_SPLIT_CAPITAL = re.compile(r"\b([БГДЕЁЖЗЙЛМНПРТФХЦЧШЩЭЮ]) ([а-яё]{3,})")
_GLUED_AND = re.compile(r"(?<=\d )и(?=\d)")
_SPACED_CODE = re.compile(r"\b([IV1]{1,3}) ([А-Д])\b")  # climatic subregions OCR spaced


def bare_text(text: str) -> str:
    """`text` with its values, references, codes and grades blanked (same length)."""
    masked = c.masked_text(text)
    for start, end in c.value_spans(text):
        masked = masked[:start] + " " * (end - start) + masked[end:]
    return masked


def stems_of(text: str) -> frozenset[str]:
    """The stems of `text`'s telling words (`words_of`)."""
    return frozenset(stem for _, stem in words_of(text))


_ABBREVIATION = re.compile(r"(?<![А-ЯЁа-яё])([А-ЯЁ]{3,6})(?![А-ЯЁа-яё])")
_CLAIM_WORD = re.compile(r"[А-ЯЁа-яё]+")


def abbreviated(claim: str, source: str) -> dict[str, list[str]]:
    """The abbreviations of `source` a claim writes out, each with the claim's words spelling
    it: a run of words (a hyphenated word's parts each) whose first letters make up a
    capitalised word of the source («ОСП»: ориентированно, стружечных, плит)."""
    abbreviations = {a.lower() for a in _ABBREVIATION.findall(source)}
    words = [m.group(0).lower() for m in _CLAIM_WORD.finditer(claim)]
    out: dict[str, list[str]] = {}
    for start in range(len(words)):
        initials = ""
        for end in range(start, min(len(words), start + 6)):
            initials += words[end][0]
            if len(initials) >= 3 and initials in abbreviations:
                out.setdefault(initials, []).extend(words[start : end + 1])
    return out


# --- values where they are -------------------------------------------------------------------


_RANGE = re.compile(r"\d\s*(?:[а-яё]+\.?\s+)?(?:до|–|—|-|\.\.\.|…)\s*[-−]?\d")  # «13 м до 46 м»


def values_located(text: str) -> list[tuple[int, int, c.Value]]:
    """The values of `text` with their spans, in order (the two ends of a range share one)."""
    masked = c.masked_text(text)
    out: list[tuple[int, int, c.Value]] = []
    previous: tuple[int, int, c.Value] | None = None
    for value in c.values_find(text):
        if (
            previous
            and (previous[2].text, previous[2].bound, value.bound) == (value.text, "min", "max")
            and _RANGE.search(value.text)
        ):
            out.append((previous[0], previous[1], value))
            previous = None
            continue
        found = _free(masked, value.text, out)
        if found is not None:
            previous = (*found, value)
            out.append(previous)
    return sorted(out, key=lambda x: x[0])


def _free(
    masked: str, written: str, taken: list[tuple[int, int, c.Value]]
) -> tuple[int, int] | None:
    """Where `written` stands in `masked` first outside the values found already (the «5 м»
    of «2—5 м» is the range's; «одежде……115 кН»: after a leader's dots too)."""
    pattern = re.compile(rf"(?<![\d,:])(?<!\d\.){re.escape(written)}(?![\d]|[,.:]\d)")
    for match in pattern.finditer(masked):
        if not any(s < match.end() and match.start() < e for s, e, _ in taken):
            return match.start(), match.end()
    return None


def value_fits(value: c.Value, dimension: str, unitless: bool) -> bool:
    """Whether a value of the clause is one of the claim's kind: the same dimension, or a
    number without a unit where the clause gives the unit once (a table's heading, «…, м,
    не менее:»), or whose unit OCR damaged."""
    if value.dimension == dimension or (unitless and not value.unit):
        return True
    # a unit OCR dropped the power of («140 Вт/м» for Вт/м²) is read as none: its number
    # is a value of the claim's kind when the unit with a power is of that kind
    written = re.search(r"\d\s*([^\W\d_].*)$", value.text)
    if value.unit or written is None:
        return False
    return any(_dimension(f"1 {written.group(1).strip()}{power}") == dimension for power in "²³")


@functools.lru_cache(maxsize=256)
def _dimension(text: str) -> str:
    found = c.values_find(text)
    return found[0].dimension if len(found) == 1 else ""


# a number that bounds a condition, not a value stated: «в балках высотой 150 мм и более»,
# «при толщине до 40 мм» («высотой не менее 0,9 м» states one)
_THRESHOLD_BEFORE = re.compile(
    r"\b(?:в|при|для|на)\s+(?:[а-яё(),]+\s+){0,8}(?:высот|толщин|длин|ширин|диаметр|глубин)\w*\s+"
    r"(?:(?!не\b)[а-яё]+\s+){0,3}(?:(?:более|менее|свыше|до|от)\s+)?$",
    re.I,
)
_THRESHOLD_AFTER = re.compile(r"^\s*и\s+(?:более|менее|выше|ниже|свыше)\b", re.I)
# «на высоте 0,8 м», «на глубине 1,2 м»: where a thing stands, the value stated
_STATED_AT = re.compile(r"\bна\s+(?:высот|глубин|расстояни)\w*\s+(?:(?:не\s+)?[а-яё]+\s+)?$", re.I)


def is_threshold(text: str, start: int, end: int) -> bool:
    """Whether the value at `start`–`end` of `text` bounds a condition rather than states a
    value («в балках высотой 150 мм и более»): it is a condition's number, not a candidate.
    Where a thing stands («на высоте 800 мм от пола») and what is made that size («в ямы
    глубиной 50 см», `_made`) are the value stated."""
    before, after = text[max(0, start - 120) : start], text[end : end + 15]
    if _STATED_AT.search(before):
        return False
    if _THRESHOLD_AFTER.match(after):
        return True
    found = _THRESHOLD_BEFORE.search(before)
    return found is not None and not _made(found.group(0))


def _made(lead: str) -> bool:
    """Whether a lead «в <noun> глубиной» puts the thing into what is made of that size,
    the value stated («высаживать в ямы и траншеи глубиной 50 см»: the accusative), not
    where a condition holds («в балках высотой 150 мм»: the locative)."""
    words = lead.split()
    if words[0].lower() != "в" or len(words) < 2:
        return False
    # after «в» a noun is accusative or locative: a form that can only be the accusative
    tags = [p.tag for p in morphology().parse(words[1].strip("(),")) if p.tag.POS == "NOUN"]
    return any("accs" in t for t in tags) and not any({"loct", "loc2"} & t.grammemes for t in tags)


def marks_of(text: str) -> frozenset[str]:
    """The numbers of `text`, each with the side its words put it on («до 50 м»: #50-,
    «более 50 м»: #50+), and its grades («III степени»): a part and a claim name conditions
    by them too."""
    grade_sides = {"to": "-", "max": "-", "from": "+", "min": "+"}
    marks = {f"#{g.kind}{g.number}{grade_sides.get(g.bound, '')}" for g in c.grades_find(text)}
    located = values_located(text)
    spans = Counter((start, end) for start, end, _ in located)
    for start, end, value in located:
        if spans[start, end] > 1:  # a range's ends: «от 13 до 46 м» is above 13, below 46
            side = "+" if value.bound == "min" else "-"
        else:
            side = _side(text[max(0, start - 25) : start], text[end : end + 12])
        marks.add(f"#{value.number:g}{side}")
    return frozenset(marks)


_ABOVE = re.compile(
    r"(?:не\s+(?:менее|ниже|меньше)|(?<!\bне\s)\b(?:более|свыше|св\.|выше|больше|от))\s*$", re.I
)
_BELOW = re.compile(
    r"(?:не\s+(?:более|выше|больше|превыша\w*)|(?<!\bне\s)\b(?:до|менее|ниже|меньше))\s*$", re.I
)
_ABOVE_AFTER = re.compile(r"^\s*и\s+(?:более|выше|свыше)", re.I)
_BELOW_AFTER = re.compile(r"^\s*и\s+(?:менее|ниже)", re.I)


def _side(before: str, after: str) -> str:
    """'+' for a number its words put above («более 50 м», «150 мм и более»), '-' below
    («до 50 м»), '' when they say neither."""
    if _ABOVE.search(before) or _ABOVE_AFTER.match(after):
        return "+"
    return "-" if _BELOW.search(before) or _BELOW_AFTER.match(after) else ""
