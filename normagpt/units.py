"""Units as quantities (pure functions, no I/O): a unit as the norms write it («кН/м²»,
«кгс/см2», «Вт/(м·°С)», «м2·°С/Вт», «кв. м», «л/(с·га)») read into a factor and a
dimension, so that one quantity written two ways compares equal (1 кН/м² = 1 кПа,
1 т/м³ = 1 г/см³, 1 м³/ч = 1000/3600 л/с) and two quantities never do (кН/м² ≠ кН/м ≠ кН).

A dimension is a tuple of exponents over the base units of `_BASES`; every other unit is a
row of `_TABLE`: a factor times a product of units defined above it, with the prefixes it
takes. Why a table of thirty rows and not pint: the norms' spellings are Russian («кгс»,
«сут», «кв. м», «°С» with a Cyrillic С, «х» and «•» as multiplication), pint would need
all of them defined anyway, and it brings offsets and contexts we do not want: °С has no
offset here (an absolute «20 °С» and the difference in «Вт/(м·°С)» are both °С, factor 1),
and «К» is read only inside a compound, where it is a difference equal to °С.

How a compound is read: a factor is a unit with its power («м2», «м²», «м 2» before
punctuation, «кв. м»); «·», «*», «×», «х», «•» multiply; everything after «/» is the
denominator, bracketed or not, as the norms mean «Вт/м·°С» (= Вт/(м·°С)).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

# symbol, factor, the same in units above it ('' for a base unit, '1' for a pure number),
# prefixes it takes (М and Г before м: «мпа» read case-blind is МПа, as the norms mean)
_TABLE: tuple[tuple[str, float, str, str], ...] = (
    ("м", 1.0, "", "мк м с д к"), ("кг", 1.0, "", ""), ("с", 1.0, "", ""),
    ("°С", 1.0, "", ""), ("А", 1.0, "", "к м"), ("кд", 1.0, "", ""), ("лк", 1.0, "", ""),
    ("°", 1.0, "", ""), ("дБ", 1.0, "", ""),
    # counted things: «50 чел» is not «50 этажей»; «на человека» is context (Unit.dimension)
    ("чел", 1.0, "", ""), ("этаж", 1.0, "", ""), ("балл", 1.0, "", ""), ("шт", 1.0, "", ""),
    ("место", 1.0, "", ""), ("раз", 1.0, "", ""), ("квартира", 1.0, "", ""),
    ("г", 0.001, "кг", "мк м"), ("т", 1000.0, "кг", ""),
    ("мин", 60.0, "с", ""), ("ч", 3600.0, "с", ""), ("сут", 86400.0, "с", ""),
    ("нед", 7 * 86400, "с", ""), ("мес", 365.25 / 12 * 86400, "с", ""),
    ("год", 365.25 * 86400, "с", ""),
    ("К", 1.0, "°С", ""),
    ("л", 0.001, "м³", "м"), ("га", 1e4, "м²", ""),
    ("Н", 1.0, "кг·м/с²", "М к"), ("Па", 1.0, "Н/м²", "М Г к"), ("Дж", 1.0, "Н·м", "М Г к"),
    ("Вт", 1.0, "Дж/с", "М Г к"), ("кгс", 9.80665, "Н", ""), ("тс", 9806.65, "Н", ""),
    ("кал", 4.1868, "Дж", "Г к"), ("кВ", 1000.0, "Вт/А", ""), ("Ом", 1.0, "Вт/А²", "к М"),
    ("дБА", 1.0, "дБ", ""),
    ("%", 0.01, "1", ""), ("‰", 0.001, "1", ""),
)  # fmt: skip
_BASES = tuple(symbol for symbol, _, made_of, _ in _TABLE if made_of == "")
_COUNTED = frozenset(range(_BASES.index("чел"), len(_BASES)))
_RATIO = ":"
_PREFIXES = {"Г": 1e9, "М": 1e6, "к": 1e3, "д": 0.1, "с": 0.01, "м": 1e-3, "мк": 1e-6}
# other spellings of a symbol (lower case)
_ALIASES = {
    "°c": "°С", "ºс": "°С", "ºc": "°С", "° с": "°С", "° c": "°С", "℃": "°С", "град": "°",
    "дб(а)": "дБА", "этажа": "этаж", "этажей": "этаж", "этажах": "этаж", "баллов": "балл",
    "балла": "балл", "человек": "чел", "человека": "чел", "мест": "место", "места": "место",
    "квартиру": "квартира", "квартир": "квартира", "квартиры": "квартира",
    "сутки": "сут", "суток": "сут", "час": "ч", "часа": "ч", "часов": "ч", "сек": "с",
    "день": "сут", "дня": "сут", "дней": "сут", "дн": "сут", "неделя": "нед", "недели": "нед",
    "недель": "нед", "месяц": "мес", "месяца": "мес", "месяцев": "мес", "лет": "год",
    "года": "год",
    # a durability test's years (ГОСТ 30973): «40 условных лет эксплуатации»
    "условных лет": "год", "условных года": "год", "условного года": "год",
    "условный год": "год",
    "метр": "м", "метра": "м", "метров": "м", "миллиметр": "мм", "миллиметра": "мм",
    "миллиметров": "мм", "сантиметр": "см", "сантиметра": "см", "сантиметров": "см",
    "километр": "км", "километра": "км", "километров": "км",
    # a multiple: «в 1,5 раза», «3-кратного суточного притока»
    "раза": "раз", "-кратный": "раз", "-кратного": "раз", "-кратное": "раз", "-кратная": "раз",
    "-кратной": "раз", "-кратным": "раз", "-кратному": "раз", "-кратную": "раз",
}  # fmt: skip
# spellings read as a unit only inside a compound: alone they are a letter or a word
# («а»), or a temperature with an offset («К») or a year («год»); the volt is only «кВ»
# («в» is a word, and «1 в/мл» counts fibres)
_NOT_ALONE = frozenset({"к", "а", "год"})
_POWER_WORDS = {"кв": 2, "куб": 3}
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_PLAIN = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")

Dims = tuple[int, ...]
Known = dict[str, tuple[str, float, Dims]]  # spelling (lower case) → symbol, factor, dims


@dataclass(frozen=True)
class Unit:
    """A unit read: its canonical spelling, its factor to the base units and its dimension."""

    text: str
    factor: float
    dims: Dims

    def alike(self, other: Unit) -> bool:
        """Whether the two measure one quantity, or would but for powers a text lost («м» for
        «м²», «м·°С/Вт» for «м²·°С/Вт»): the same dimension, the same base units whatever
        their powers, or the same units written."""
        return (
            self.dimension == other.dimension
            or self._bases == other._bases
            or self._written == other._written
        )

    @property
    def _bases(self) -> frozenset[int]:
        return frozenset(i for i, e in enumerate(self.dims) if e and not (i in _COUNTED and e < 0))

    @property
    def _written(self) -> frozenset[str]:
        return frozenset(f.rstrip("²³⁻¹") for f in re.split(r"[·/()]", self.text) if f)

    @property
    def dimension(self) -> str:
        """The name of what it measures, per counted thing left out («м²/чел» is an area, as
        «6 м² на человека» is): a rate per person is still a rate, and a claim rarely writes
        the «/чел» its clause has."""
        dims = tuple(0 if i in _COUNTED and e < 0 else e for i, e in enumerate(self.dims))
        return _NAMES.get(dims) or _formula(dims)


def _spellings() -> Known:
    """Every spelling of every row with its prefixes, and the aliases; a spelling two rows
    give keeps the first (the table's order decides)."""
    known: Known = {}
    for symbol, factor, made_of, prefixes in _TABLE:
        if made_of == "":
            dims = tuple(int(base == symbol) for base in _BASES)
        else:
            inner, dims = _product(_made_of(made_of), known)
            factor *= inner
        for prefix in ["", *prefixes.split()]:
            scale = _PREFIXES[prefix] if prefix else 1.0
            known.setdefault((prefix + symbol).lower(), (prefix + symbol, factor * scale, dims))
    for alias, symbol in _ALIASES.items():
        known[alias] = known[symbol.lower()]
    return known


def _made_of(text: str) -> list[tuple[str, int]]:
    """The factors of a definition in `_TABLE` («кг·м/с²»): plain symbols and powers."""
    above, _, below = text.partition("/")
    out = []
    for part, sign in ((above, 1), (below, -1)):
        for factor in filter(None, part.split("·")):
            symbol = factor.rstrip("²³")
            power = int(factor[len(symbol) :].translate(_PLAIN) or 1)
            out.append((symbol, 0 if symbol == "1" else sign * power))
    return [(symbol, power) for symbol, power in out if power]


def _product(factors: list[tuple[str, int]], known: Known) -> tuple[float, Dims]:
    """The factor and dimension of a product of (symbol, power)."""
    factor, dims = 1.0, (0,) * len(_BASES)
    for symbol, power in factors:
        _, unit_factor, unit_dims = known[_key(symbol)]
        factor *= unit_factor**power
        dims = tuple(d + power * u for d, u in zip(dims, unit_dims, strict=True))
    return factor, dims


def _key(symbol: str) -> str:
    """A symbol as written, as `SPELLINGS` keys it: lower case, one space at most."""
    return " ".join(symbol.split()).lower()


SPELLINGS = _spellings()
_LENGTHS = [s for s, (_, _, dims) in SPELLINGS.items() if dims == SPELLINGS["м"][2]]
_POWERED = frozenset(_LENGTHS)


def _alternation(words: list[str]) -> str:
    """Longest first, so «мм» is not read as «м»; a space in a spelling may be missing."""
    ordered = sorted(words, key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"[ \u00a0]?") for w in ordered)


def _factor(words: list[str], *, named: bool = False, powered: frozenset[str] = _POWERED) -> str:
    """One factor: a symbol and its power. Only the `powered` take one, lengths (and the
    second in a compound: «м/с2»): «м2», «м²», «м 2» before punctuation only («5 м 2
    этажа» is two values), «кв. м»; «2,0Н2» is 2,0·H₂, not newtons squared. Any unit may
    be inverse («град-1»)."""
    plain = [w for w in words if w not in powered]
    power = r"\^?[234](?!\d|[.,]\d)|[²³⁴]|[ \u00a0][23](?![.,]\d)(?=[ \t]*(?:$|[.,;:/»]))"
    inverse = r"[-−]1(?!\d)|⁻¹"
    square = rf"(?:кв|куб)\.?[ \u00a0]?(?=(?:{_alternation(_LENGTHS)})(?![а-яё]))"
    if named:  # for reading a unit already matched: every symbol, every power
        symbols, powers = _alternation(words), f"{power}|{inverse}"
        return rf"(?:(?P<square>{square}))?(?P<symbol>{symbols})(?P<power>{powers})?"
    one = rf"(?:{_alternation([w for w in words if w in powered])})(?:{power}|{inverse})?"
    return rf"(?:{square})?(?:{one}|(?:{_alternation(plain)})(?:{inverse})?)"


def _unit_pattern() -> str:
    """The regex of one whole unit, simple or compound, as `values_find` reads it."""
    every = _factor([s for s in SPELLINGS if s != _RATIO], powered=_POWERED | {"с"})
    alone = _factor([s for s in SPELLINGS if s not in _NOT_ALONE | {_RATIO}])
    gap = r"[ \t\u00a0]*"
    times = rf"{gap}[·⋅∙•■*×хx]{gap}"  # ■: OCR's dot
    # in brackets a hyphen, a space or a line break multiplies too: «Вт/(м-°С)», «(м2 ч)»
    within = r"\s*[-·⋅∙•■*×хx]\s*|\s+"
    denominator = rf"(?:\(\s*{every}(?:(?:{within}){every})*\s*\)|{every})"
    compound = rf"{every}(?:{times}{every}|{gap}/{gap}{denominator})+"
    # never a unit cut short: not before a letter or a digit (a power it may not take:
    # «м3/унитаз» is no «м»), nor before a «/» it could not read
    tail = rf"(?![а-яёa-z\d])(?!{gap}/{gap}[(а-яёa-z°%])"
    return rf"(?:{compound}|{alone}){tail}"


UNIT_PATTERN = _unit_pattern()
_TOKEN = re.compile(rf"(?P<div>/)|{_factor(list(SPELLINGS), named=True)}", re.I)


_POWER_LOST = re.compile(
    rf"(?<![а-яё])(?:{_alternation(_LENGTHS)})"
    r"(?:[ \t]+(?:[/),;]|[·•](?![ \t]))|[ \t]*\n[ \t]*[/),;.·•])"
    rf"|/(?:{_alternation(_LENGTHS)})(?:[ \t]+\.|[ \t]*\n)",
    re.I,
)


def power_lost(written: str) -> bool:
    """Whether a unit as written (and a few characters after it) shows a superscript that
    OCR dropped, leaving a gap where it stood: a length, then a space or a line break
    before «/», «)», «,», «;» or a dot that multiplies («1,4 т/м ,» for т/м³, «л/(с·м )»,
    «1 м /ч», «800 кг/м⏎,», «0,40 м⏎·°С/Вт», «Вт/(м ·°С)»; but «Вт/(м · °С)» is typeset
    so), or a denominator's length before a gap and a full stop or at a line's end («1,65
    т/м .», «140 Вт/м⏎на постоянных» for Вт/м²; «1 м .» is taken as written). Its power,
    and so the unit, is unknown."""
    return bool(_POWER_LOST.search(written))


@lru_cache(maxsize=1024)
def unit_read(text: str) -> Unit | None:
    """The unit `text` spells, as written or canonical; None when it spells none. After
    «/» every factor is the denominator."""
    if text == _RATIO:
        return Unit(_RATIO, 1.0, (0,) * len(_BASES))
    factors: list[tuple[str, int]] = []
    divide = False
    for match in _TOKEN.finditer(text):
        if match.group("div"):
            divide = True
            continue
        square = (match.group("square") or "").lower().rstrip(". \u00a0")
        written = (match.group("power") or "").strip(" \u00a0^").translate(_PLAIN)
        power = _POWER_WORDS.get(square, 1) * int(written or 1)
        factors.append((match.group("symbol"), -power if divide else power))
    if not factors:
        return None
    factor, dims = _product(factors, SPELLINGS)
    return Unit(_canonical(factors), factor, dims)


def _canonical(factors: list[tuple[str, int]]) -> str:
    """«кг/(м²·ч)»: each symbol as the table writes it, powers as superscripts, the
    denominator after one «/», bracketed when it has more than one factor."""

    def written(symbol: str, power: int) -> str:
        return SPELLINGS[_key(symbol)][0] + _superscript(power)

    above = "·".join(written(s, p) for s, p in factors if p > 0)
    below = [written(s, -p) for s, p in factors if p < 0]
    if not below:
        return above
    denominator = below[0] if len(below) == 1 else f"({'·'.join(below)})"
    return f"{above or '1'}/{denominator}"


def _superscript(power: int) -> str:
    return str(power).translate(_SUPERSCRIPT) if power != 1 else ""


def _formula(dims: Dims) -> str:
    """A dimension without a name, in base units: «м⁻¹·кг·с⁻²»."""
    parts = [base + _superscript(e) for base, e in zip(_BASES, dims, strict=True) if e]
    return "·".join(parts) or "1"


def _named() -> dict[Dims, str]:
    names = {
        "м": "length", "м²": "area", "м³": "volume", "кг": "mass", "с": "time",
        "°С": "temperature", "Н": "force", "Па": "pressure", "м/с": "speed",
        "м³/с": "flow", "кг/м³": "density", "Вт": "power", "Дж": "energy", "%": "share",
        "°": "angle", "дБ": "sound", "лк": "light", "чел": "people", "этаж": "storeys",
        "балл": "points", "шт": "pieces", "место": "places", "раз": "times",
        "квартира": "apartments",
    }  # fmt: skip
    return {_product(_made_of(spelled), SPELLINGS)[1]: name for spelled, name in names.items()}


_NAMES = _named()


def is_close(a: float, a_step: float, b: float, b_step: float, tolerance: float) -> bool:
    """Whether two numbers, each written to the place value `step` (0.1 for «0,3»; 0 for
    exact), state the same: within half a step of the finer one («9,81 кПа» is
    «0,1 кгс/см²», «0,28 л/с» is «1 м³/ч»; «20 мм» is not «2,1 см»), else within
    `tolerance` relative (float noise)."""
    return math.isclose(a, b, rel_tol=tolerance, abs_tol=min(a_step, b_step) / 2)
