"""Which stems are forms of one word (`stems_related`) or kin (`stems_kin`: a noun and its
adjective): what a search's vocabulary takes as a query stem's variants, and what a claim's
word check and a condition's words accept. Pure functions, on the stems `normagpt.parsing`
makes."""

from __future__ import annotations

import functools
from collections.abc import Collection

VARIANT_MIN = 5  # stems this long or longer match their variants
_ADJECTIVE = {"н", "ьн", "ан", "ян", "енн", "ов", "ев", "ск"}  # a noun's adjective
# a stem of three letters ending in a vowel and one of these is another word: «кра» (край)
# and «кран», «краск»; its adjective is «краев» («дет»/«детск», «лес»/«лесн» are one word)
_SHORT_ADJECTIVE = _ADJECTIVE - {"н", "ск", "ан", "енн"}
# an adjective saying what a thing is made of, has or looks like, made of the noun with its
# own suffix: «глина»/«глинистый», «климат»/«климатический», «пыль»/«пылевидный»
_DERIVED = ("ист", "ическ", "евидн", "овидн")


def _suffixed(short: str, long: str, suffixes: Collection[str]) -> bool:
    """Whether `long` is the stem `short` (three letters at least) and one of `suffixes`."""
    return len(short) >= 3 and long.startswith(short) and long[len(short) :] in suffixes


def stems_related(term: str, stem: str) -> bool:
    """Whether two stems are forms of one word: equal, or sharing VARIANT_MIN letters and
    all but the last two of the shorter («подва»/«подвальн», «утепля»/«утеплен»; not
    «противопожарн»/«противодымн»), the longer at most three letters longer; not where the
    letters they part at tell two roots or another thing (each rule below with its example:
    a doer's ending, a prefix and a letter, two roots' consonants, a fleeting vowel kept).
    Related stems that differ share their first three letters (the search's vocabulary
    relies on it)."""
    if term == stem:
        return True
    short, long = sorted((term, stem), key=len)
    short_open = len(short) == 3 and short[-1] in _VOWELS
    if _suffixed(short, long, _SHORT_ADJECTIVE if short_open else _ADJECTIVE):
        return True  # «стал»/«стальн», «плит»/«плитн», «стен»/«стенов»
    if len(short) < VARIANT_MIN or len(long) - len(short) > 3:
        return False
    common = next(
        (i for i, (a, b) in enumerate(zip(short, long, strict=False)) if a != b), len(short)
    )
    if common == len(short) and long[common:] in _ANOTHER_THING:
        return False  # «защит»/«защитник», «проект»/«проектор», «кабин»/«кабинет»
    if short.endswith("ик") and long.startswith(short[:-1] + "ческ"):
        return False  # «техника» is no «технический» (norms write it everywhere)
    if short.endswith("ц") and long.startswith(short[:-1] + "тив"):
        return True  # a Latin word's «-ция» and «-тивный»: «деформац»/«деформативн»
    if common < len(short) and common - _prefix_length(short, long) < ROOT_SHARED:
        return False  # «перекрыт»/«перекат», «перегородк»/«перегиб», «автомобил»/«автомат»
    if common == len(short) - 1 and _another_root(short, long):
        return False  # «граница»/«гранит» too
    if (
        common == len(short) - 2
        and _two_roots(short[common], long[common])
        and not _derived_alike(short, long)
    ):
        return False  # «распорн»/«расположен», «примерн»/«применим»
    if common == len(short) - 2 and short[-2:] in _FLEETING:
        # a noun's fleeting vowel: its other forms drop it («участок»/«участков»,
        # «образец»/«образцов», «козырек»/«козырьк»), another word keeps another letter
        # («участник», «образован», «короблен»)
        return long[common:].lstrip("ь").startswith(short[-1])
    return common >= max(VARIANT_MIN, len(short) - 2)


_FLEETING = frozenset({"ок", "ек", "ец"})  # a noun's last letters whose vowel goes in its forms
# stems that part before the shorter's end share this many letters of their root past a
# prefix («передвига»/«передвижен», «нагруз»/«нагружен»)
ROOT_SHARED = 3
# word-forming prefixes: two stems sharing one and a letter or two are two words
_PREFIXES = sorted(
    """электро противо тепло гидро внутри интер контр транс водо авто пере пред пре при про
    под над раз рас воз вос без бес низ нис вы за на об от до по из ис со вз вс""".split(),
    key=len,
    reverse=True,
)


def _prefix_length(*stems: str) -> int:
    """The length of the longest prefix (`_PREFIXES`) one of `stems` opens with, 0 for none
    («внутри» of «внутривен» beside «внутрен»)."""
    return max(next((len(p) for p in _PREFIXES if stem.startswith(p)), 0) for stem in stems)


# endings that make a stem another thing's name: a doer or a device («защитник»,
# «каменщик», «транспортер», «проектор», «тепловоз»), another thing («кабинет», «бетонит»)
_ANOTHER_THING = frozenset("ник щик чик ер ор оз озн ет ит".split())
_VOWELS = frozenset("аеиоуыэюяё")
_BEFORE_N = {"к": "ч"}  # a consonant as it stands before the adjective's «н» («сутки», «суточный»)


@functools.lru_cache(maxsize=65_536)  # a search tries its words against hundreds of stems
def stems_kin(term: str, stem: str) -> bool:
    """Whether two stems are forms of one word (`stems_related`), a noun and its adjective
    that puts a vowel in its stem (`_fleeting_adjective`) or one made with a suffix of its
    own (`_DERIVED`: «глин»/«глинист»): what a search and a claim's word check accept (a
    condition's words are told apart by their forms only: a claim's subject said in another
    form there would tie it to a neighbouring value's condition; «глины» are one row of
    «глинистые грунты»). Kin stems share their first three letters or those of one of the
    noun's `fleeting_bases`."""
    if stems_related(term, stem):
        return True
    short, long = (term, stem) if len(term) <= len(stem) else (stem, term)
    if _suffixed(short, long, _DERIVED):
        return True
    # (the bases keep all but the noun's last letter: most stems fail that at once)
    return long.startswith(short[:-1]) and _fleeting_adjective(short, long)


def _fleeting_adjective(short: str, long: str) -> bool:
    """Whether `long` is the adjective of the noun `short` (a stem ending in two consonants)
    that puts a vowel between them («окно», «оконный»; «кровля», «кровельный»; «сутки»,
    «суточный»)."""
    return any(
        long.startswith(base) and (long == base or long[len(base) :] in _ADJECTIVE)
        for base in fleeting_bases(short)
    )  # («оконный» is stemmed «окон», as «окон» of «окно» is)


@functools.lru_cache(maxsize=4096)
def fleeting_bases(stem: str) -> tuple[str, ...]:
    """What the adjective of a noun whose stem ends in two consonants starts with: a vowel
    put between them, the last one as it stands before «н» («сутк»: «суток», «суточ»,
    «сутек», «сутеч»); () for another stem."""
    if len(stem) < 3 or stem[-1] in _VOWELS or stem[-2] in _VOWELS:
        return ()
    last = stem[-1]
    return tuple(
        stem[:-1] + vowel + consonant
        for vowel in "ое"
        for consonant in dict.fromkeys([last, _BEFORE_N.get(last, last)])
    )


def _derived_alike(short: str, long: str) -> bool:
    """Whether two stems are one stem with two suffixes of `_DERIVED` («геодезист»,
    «геодезическ»)."""
    return any(
        short.endswith(a) and long.startswith(short[: -len(a)] + b)
        for a in _DERIVED
        for b in _DERIVED
        if a != b
    )


def _two_roots(a: str, b: str) -> bool:
    """Whether two stems' first letters that differ are two roots' consonants: neither a
    vowel nor one alternating with the other («передвига»/«передвижен»)."""
    return a not in _VOWELS and b not in _VOWELS and a + b not in _ALTERNATING


def _another_root(short: str, long: str) -> bool:
    """Whether two stems that differ in the shorter's last letter (the longer's start as
    long as the shorter) end in two roots: both letters consonants after a vowel, not one
    consonant of a root alternating with the other (`_ALTERNATING`: «водосток»/«водосточн»,
    «повред»/«поврежда») — «признак»/«признан», «разрез»/«разреш», «размер»/«размещен»,
    «напрям»/«напряжен»: the stemmer keeps a root's last consonant. After a consonant the
    letter is a suffix's («вытяжк»/«вытяжн», «площадк»/«площадн»: a noun and its adjective;
    `_SUFFIX_LETTERS`), a vowel against one («утепля»/«утеплен», «закладк»/«закладыва») or
    put before it («медсестр»/«медсестер»), or two words differ there: «отделк»/«отдельн»,
    «поверк»/«поверх», «участв»/«участк», «участв»/«участок», «организм»/«организац»,
    «примерн»/«примерзан»."""
    a, b = short[-1], long[len(short) - 1]
    if short[-2] in _VOWELS:
        return _two_roots(a, b)
    if a in _VOWELS and b in _VOWELS:
        return False
    if b in _VOWELS and long[len(short) : len(short) + 1] == a:
        return False  # a vowel put before the last letter: «медсестр»/«медсестер»
    return not {a, b} - _VOWELS <= _SUFFIX_LETTERS


# the letters a suffix opens with, after a root's consonant («-к-», «-н-», «-л-», «-ств-»,
# «-щик», «-ск-» …), and the root's own consonants alternating before one («утверд»/«утвержд»)
_SUFFIX_LETTERS = frozenset("кнлчщтсшжгдц")


# consonants of a root that alternate in its words («тревога»/«тревожный», «сток»/«сточный»,
# «предотвратить»/«предотвращать»)
_ALTERNATING = frozenset(
    pair
    for a, b in ("кч", "гж", "хш", "дж", "зж", "сш", "сщ", "тч", "тщ", "зд")
    for pair in (a + b, b + a)
)
