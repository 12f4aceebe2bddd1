"""How the lines that open a norm's parts read, and the order their numbers follow.

«10.3.2 Текст», «10.3.2. Текст», «А.1.2 Текст», «п. 4.1 Текст», «2.7а Текст» open clauses
(«3.1 антресоль: …» too: a term defined); «10 Конструктивные требования» a section («Раздел
1. ОБЩИЕ ПРАВИЛА», «Глава 1.1. ОБЩАЯ ЧАСТЬ» as the ПУЭ number them, alike); «4.2»
alone on its line takes the next line as its text. «Таблица 5.1 — …», «Т а б л и ц а 3»,
«ТАБЛИЦА Б.2» open a table, «Продолжение таблицы 5.1» goes on with it; «Приложение А»
opens an appendix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from normagpt.parsing import number_normal

HEADING_MAX_CHARS = 160
SECTION_STEP_MAX = 3  # a level's number at most this far past the last one

_NUMBER = r"(?:[А-ЯЁA-Z]\s?\.\s?)?\d{1,2}(?:\.\d{1,3}){0,4}(?:[а-я](?![а-яё]))?"
_NUMBERED = re.compile(
    rf"^(?:п\.\s*|(?:Раздел|РАЗДЕЛ|Глава|ГЛАВА)\s+)?(?P<number>{_NUMBER})(?P<dot>\.)?(?:\s+|$|(?=_))(?P<rest>.*)$"
)
_OCR_THREE = re.compile(r"^([А-ЯЁA-Z]\s?\.\s?)З(?=[\s.])")
_PART = re.compile(r"^(\d+)([а-яё]?)$")
_LONE_REST = re.compile(r"^[\s_.]*$")  # «4.2», «3.8 ______»: the number alone on its line
_REST_START = re.compile(r"^[«\"(A-ZА-ЯЁa-zа-яё]")
# «5.1», «Б.2», «10.1а»; set letter-spaced as its caption is: «3 9», «Б. 1», «5 . 1»
_TABLE_NUMBER = (
    r"(?:[А-ЯЁA-Z]\s?\.\s?)?\d(?:\s?\d)?(?:\s?\.\s?\d(?:\s?\d){0,2}){0,3}(?:[а-я](?![а-яё]))?"
)
_CAPTION = re.compile(
    r"^(?:(?P<continued>(?:Продолжение|Окончание|ПРОДОЛЖЕНИЕ|ОКОНЧАНИЕ)\s+(?:таблицы|ТАБЛИЦЫ|табл\.))"
    r"|Т\s?а\s?б\s?л\s?и\s?ц\s?а|Т\sа\sб\sл\sи\sц\sе|ТАБЛИЦА)"  # «Т а б л и ц е»: OCR of «а»
    rf"\s*(?P<number>{_TABLE_NUMBER})?\.?(?P<rest>.*)$"
)
_CAPTION_REST = re.compile(r"^\s*(?:$|[—–\-.:]|\(|[А-ЯЁA-Z«\"])")
# «Т а б л и ц а !  — Коэффициент а»: the OCR's «!» for the «1» of a letter-spaced caption
# (seven documents of the public dataset: ГОСТ 18105, 30547, 30732, 14782, Р 53289, СП 64, 299)
_OCR_ONE = re.compile(r"^(Т\sа\sб\sл\sи\sц\sа\s*)!(?=\s|$)")
_APPENDIX = re.compile(
    r"^(?:Приложение|ПРИЛОЖЕНИЕ|П\s?р\s?и\s?л\s?о\s?ж\s?е\s?н\s?и\s?е)\s+"
    r"(?P<letter>[А-ЯЁA-Z]|\d{1,2})(?!\w)\.?(?P<rest>\s.*|)$"
)
_APPENDIX_REST = re.compile(r"^\s*(?:$|\(|[А-ЯЁA-Z«—–\-])")
_BIBLIOGRAPHY = re.compile(
    r"^(?:Библиография|БИБЛИОГРАФИЯ|Б\s?и\s?б\s?л\s?и\s?о\s?г\s?р\s?а\s?ф\s?и\s?я)$"
)
# a value stated («Степень перетира, мкм, не более»): a table's row, never a title
_VALUE = re.compile(r",\s*(?:мм|см|мкм|м|кг|г|%|МПа|кПа|Па|°С|ч|мин|сут)\b|\bне (?:более|менее)\b")
# words that follow a number in a reference, never a term defined
_REFERENCE_WORDS = set(
    "настоящего настоящих настоящей настоящему таблицы таблице табл приложения приложению "
    "пункта пунктов пункту раздела разделов рисунка рисунку формулы статьи части".split()
)
# words a wrapped sentence, never a title, ends with
_DANGLING = set("и в во на по для с со к о об от до из у за при не или а но что как".split())


@dataclass(frozen=True)
class Numbered:
    number: str  # as `number_normal` gives it
    key: tuple[float, ...]
    rest: str  # the line's text after the number ('' when alone on its line)
    depth: int  # 1 for a section («10»), 2 for «10.3» and «А.1» (under its appendix) …
    dot: bool = False  # written with a dot after it («8.», «1.1.»)


@dataclass(frozen=True)
class Caption:
    number: str  # '' for a table without one
    continued: bool  # «Продолжение таблицы 5.1»
    rest: str


def numbered(text: str) -> Numbered | None:
    """The number opening `text` and what follows it, when it could open a part; None for a
    value («1,5 — …», «20 мм»), a list item («1) …») or text."""
    if "З" in text[:6]:  # «А.З.2 …»: OCR read the digit 3 as the letter
        text = _OCR_THREE.sub(r"\g<1>3", text)
    match = _NUMBERED.match(text)
    if match is None:
        return None
    rest = match["rest"].strip()
    if _LONE_REST.match(rest):
        rest = ""
    elif not _REST_START.match(rest):
        return None
    number = number_normal(re.sub(r"\s", "", match["number"]))
    if number[-1:].isalpha() and "." not in number:
        return None  # «1й», «10а»: an ordinal, not a section
    return Numbered(number, number_key(number), rest, number.count(".") + 1, bool(match["dot"]))


def caption(text: str) -> Caption | None:
    """The table a caption line opens or goes on with; None for a line that only names one
    («Таблица 5.1 содержит …»)."""
    match = _CAPTION.match(_OCR_ONE.sub(r"\g<1>1", text))
    if match is None or not _CAPTION_REST.match(match["rest"]):
        return None
    number = number_normal(re.sub(r"\s", "", match["number"] or ""))
    return Caption(number, bool(match["continued"]), match["rest"].strip(" —–-.:"))


def appendix(text: str) -> tuple[str, str] | None:
    """(letter, the rest of the line) of a line opening an appendix («Приложение Б
    (обязательное)»)."""
    match = _APPENDIX.match(text)
    if match is None or not _APPENDIX_REST.match(match["rest"]):
        return None
    return number_normal(match["letter"]), match["rest"].strip()


def bibliography(text: str) -> bool:
    return bool(_BIBLIOGRAPHY.match(text))


def letter_rank(letter: str) -> int:
    """An appendix's place: «А» 1, «Б» 2 … (a numbered appendix «1» after the lettered)."""
    if letter.isdigit():
        return 40 + int(letter)
    return ord(letter[:1].upper()) - ord("А") + 1 if letter else 0


def number_key(number: str) -> tuple[float, ...]:
    """«10.3.2» → (0, 10, 3, 2); «Б.1.2» → (2, 1, 2) with the appendix letter's rank first
    (main text 0); «2.7а» → (0, 2, 7.01); a law's article «ст. 15.1» → (0, 15, 1), «ст. 55.16-1»
    → (0, 55, 16.01): the order in which numbers follow each other."""
    if number.startswith("ст. "):
        number = re.sub(r"-(\d+)$", lambda m: chr(ord("а") + int(m.group(1)) - 1), number[4:])
    parts = number.split(".")
    head = 0
    if parts and parts[0] and not parts[0][:1].isdigit():
        head, parts = letter_rank(parts[0]), parts[1:]
    key: list[float] = [head]
    for part in parts:
        match = _PART.match(part)
        if match is None:
            break
        digits, letter = match.groups()
        key.append(int(digits) + (letter_rank(letter.upper()) / 100 if letter else 0))
    return tuple(key)


def follows(key: tuple[float, ...], last: tuple[float, ...], most: int = SECTION_STEP_MAX) -> bool:
    """Whether `key` can be the next number after `last`: one level's number a little past
    the last's (at most `most`: a gap of a clause or two is tolerated), the levels below it
    starting again (10.3.4 → 10.3.5, 10.4, 10.4.1, 11.1.1; 2.7 → 2.7а; not 12.5 or 10.3.40)."""
    if not last:
        return not key[0] and all(part <= 2 for part in key[2:])
    if key[0] != last[0]:
        return key[0] > last[0] and all(part <= 2 for part in key[1:])
    low = 2 if most > 1 else 1
    for level in range(1, len(key)):
        if key[:level] != last[:level]:
            return False
        if level < len(last) and key[level] != last[level]:
            step = key[level] - last[level]
            return 0 < step <= most and all(p <= low for p in key[level + 1 :])
    return len(key) > len(last) and all(part <= low for part in key[len(last) :])


def continues_sentence(rest: str) -> bool:
    """Whether the words after a number go on a sentence rather than open a clause or
    define a term: «5.2 и 5.3, второй группы …», «4.2.3 настоящего свода», «5.1 таблицы»."""
    first = rest.split(maxsplit=1)[0].lower().strip(",;:") if rest.split() else ""
    return first in _DANGLING or first in _REFERENCE_WORDS


def title_like(text: str) -> bool:
    """Whether `text` reads as a title: short, from a capital, not ending a sentence or in a
    value («Глины 300», a contents entry's page), stating no value («…, мм, не более»), not
    a preface item («РАЗРАБОТАН Техническим комитетом …») nor a sentence wrapped at a
    preposition («… метрологии от»)."""
    words = text.split()
    if not words or len(text) > HEADING_MAX_CHARS or text[-1].isdigit():
        return False
    if text.endswith((",", ";", ":")) or (text.endswith(".") and not text.isupper()):
        return False
    first = words[0].strip('«("')
    if not first[:1].isupper() or (len(first) >= 3 and first.isupper() and not text.isupper()):
        return False
    return words[-1].lower() not in _DANGLING and not _VALUE.search(text)
