"""What tells a fuzzy match apart from the problem asked.

Siblings of one prototype differ only in their values: the numbers, the point and segment
labels (A, B, AB, ABC…) and the words of the data (синус/косинус, вписанный/описанный…).
Problems of two prototypes may share all of that and differ in their question
(`problems.question`): what is asked (`Найдите дугу CAD`, `угол CAD`), of what, in which
unit (`в радианах`, `в градусах`). A score cannot tell them apart — one number of five
changed still scores 0.9 —, so each match is aligned with the query token by token: the
values and data words that stand in the same place but differ are listed (words by their
lemmas, `problems.words`), and the question of each is compared whole.

Pure functions over raw text (the query as given, a problem's condition as stored): the
case is needed to tell a label from a word (`B` is a point, `в` a preposition; the site
writes some labels in Cyrillic capitals, `АВ`). Labels match whole: `B` is not in `AB`.
OCR damage in the query does not make differences: look-alike letters in a number are read
as digits (`l6` is 16), a value the damage dropped is a gap, not a difference, and a word
the dictionary does not know is damage, not another word.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

from problems.matching import ocr_fold
from problems.tokens import Token
from problems.words import (
    AS_CYRILLIC,
    Word,
    missing,
    one_edit,
    phrases_differ,
    same_kind,
    strangers,
    words_differ,
)

Kind = Literal["number", "label", "word", "asked", "unit"]
Verdict = Literal["same", "ambiguous", "same_prototype", "other"]
QUESTION: tuple[Kind, ...] = ("asked", "unit")  # a difference of these: another problem

_EQUALS = frozenset({"равен", "равна", "равно", "равны"})


@dataclass(frozen=True)
class Difference:
    """A value of the query and the problem's value in its place; of kind `asked` or
    `unit`, the query's question (or unit) and the problem's."""

    kind: Kind
    query: str
    problem: str
    of: str = ""  # the label a number belongs to: `BC` of `BC = 7`


@dataclass(frozen=True)
class Comparison:
    differences: list[Difference]
    coverage: float  # the share of the query's tokens found in place in the problem
    covered: float = 0.0  # the share of the problem's tokens found in place in the query
    extra: int = 0  # the query's values and words the problem holds nowhere, unpaired


def compare(asked: list[Token], problem: list[Token]) -> Comparison:
    """The query's values and data words that stand where the problem has others (in
    query order), then its question and unit when the problem's differ; and how much of
    the query the problem holds in place."""
    labels = {t.key for t in problem if t.kind == "label"}
    asked = _unmerged(asked, labels)
    q_keys = [(t.kind, t.key) for t in asked]
    p_keys = [(t.kind, t.key) for t in problem]
    matcher = SequenceMatcher(None, q_keys, p_keys, autojunk=False)
    held = 0
    found: list[Difference] = []
    placed: set[int] = set()  # the query's values paired with one of the problem's
    words: list[tuple[Token, Token]] = []
    stretches = _stretches(matcher.get_opcodes(), asked, problem)
    for n, (op, i1, i2, j1, j2) in enumerate(stretches):
        if op == "equal":
            held += i2 - i1
            found += _rooted(stretches[n - 1] if n else None, asked, problem, i1, j1)
        elif op == "replace":
            pairs = _values_paired(asked[i1:i2], problem, j1, j2)
            held += len(pairs)
            placed |= {id(q) for q, _ in pairs}
            found += [
                _difference(q, problem, j)
                for q, j in pairs
                if _differ(q, problem[j], ordered=_ordered(problem, j), labels=labels)
            ]
            words += _words_differing(asked[i1:i2], problem[j1:j2])
    foreign, unpaired = _strangers(asked, problem, {id(t) for pair in words for t in pair})
    found += [Difference("word", q.shown, p.shown) for q, p in [*words, *foreign]]
    return Comparison(
        found + _question(asked, problem),
        held / len(asked) if asked else 0.0,
        held / len(problem) if problem else 0.0,
        unpaired + _unplaced(asked, problem, placed),
    )


Opcode = tuple[str, int, int, int, int]


def _rooted(
    before: Opcode | None, asked: list[Token], problem: list[Token], i: int, j: int
) -> list[Difference]:
    """`равен 3` against `равен корень из 3`: one text alone has `корень из` before a number
    both share, so the values differ (3, √3)."""
    if before is None or asked[i].kind != "number":
        return []
    op, i1, i2, j1, j2 = before
    if op == "insert" and _root(problem[j1:j2]):
        return [Difference("number", asked[i].shown, _shown(problem[j1 : j + 1]))]
    if op == "delete" and _root(asked[i1:i2]):
        return [Difference("number", _shown(asked[i1 : i + 1]), problem[j].shown)]
    return []


def _root(stretch: list[Token]) -> bool:
    """Whether a stretch is `корень из` (as the site reads √ aloud), damaged too."""
    if len(stretch) != 2 or any(t.kind != "text" for t in stretch):
        return False
    word, of = (t.shown.lower().translate(AS_CYRILLIC) for t in stretch)
    return of == "из" and (word in ("корень", "корня") or one_edit(word, "корень"))


def _shown(stretch: list[Token]) -> str:
    return " ".join(t.shown for t in stretch)


def _stretches(opcodes: Sequence[Opcode], asked: list[Token], problem: list[Token]) -> list[Opcode]:
    """The alignment's stretches, a lone value shared by chance joined to the stretches
    around it when both texts hold as many other values of each kind there: in `CH равна
    4, BC = √17` against `CH равна 8, BH = 4` the two 4s are not one value, the pairs are
    4/8, BC/BH, 17/4."""
    out: list[Opcode] = []
    for op in opcodes:
        if len(out) >= 2 and op[0] != "equal" and out[-2][0] != "equal":
            lone, before = out[-1], out[-2]
            if lone[0] == "equal" and lone[2] - lone[1] == 1 and asked[lone[1]].kind != "text":
                q_extra = [*asked[before[1] : before[2]], *asked[op[1] : op[2]]]
                p_extra = [*problem[before[3] : before[4]], *problem[op[3] : op[4]]]
                if _values(q_extra) and _values(q_extra) == _values(p_extra):
                    del out[-2:]
                    op = ("replace", before[1], op[2], before[3], op[4])
        out.append(op)
    return out


def _values(stretch: list[Token]) -> list[str]:
    return sorted(t.kind for t in stretch if t.kind != "text")


def _words_differing(asked: list[Token], problem: list[Token]) -> list[tuple[Token, Token]]:
    """The data words of a stretch the two texts do not share that name other things,
    paired in order when both sides hold as many (`синус A` where the problem has
    `косинус A`)."""
    q_words = [t for t in asked if t.kind == "text" and t.part == "data"]
    p_words = [t for t in problem if t.kind == "text" and t.part == "data"]
    if len(q_words) != len(p_words):
        return []
    return [
        (q, p)
        for q, p in zip(q_words, p_words, strict=True)
        if words_differ(_word_of(q), _word_of(p))
    ]


def _strangers(
    asked: list[Token], problem: list[Token], paired: set[int]
) -> tuple[list[tuple[Token, Token]], int]:
    """The data words of each text that the other holds nowhere, in any form (`высоты BD и
    CE пересекаются` against `BD и CE — медианы, пересекающиеся`), paired by part of speech
    in order; and how many of the query's found no pair. Words paired already are left."""
    q_all = [_word_of(t) for t in asked if t.kind == "text"]
    p_all = [_word_of(t) for t in problem if t.kind == "text"]
    q_data = [t for t in asked if t.kind == "text" and t.part == "data" and id(t) not in paired]
    p_data = [t for t in problem if t.kind == "text" and t.part == "data" and id(t) not in paired]
    mine = strangers([_word_of(t) for t in q_data], p_all)
    theirs = missing([_word_of(t) for t in p_data], q_all)
    pairs = []
    for i in mine:
        j = next((j for j in theirs if same_kind(_word_of(q_data[i]), _word_of(p_data[j]))), None)
        if j is not None:
            pairs.append((q_data[i], p_data[j]))
            theirs.remove(j)
    return pairs, len(mine) - len(pairs)


def _unplaced(asked: list[Token], problem: list[Token], placed: set[int]) -> int:
    """The query's values that the problem holds nowhere and no difference names. A value
    read off a glued word, or a lone 0, 3, 4 or 6 (as often a damaged `о`, `з`, `ч`, `б`),
    is not sure enough to count."""
    theirs = {t.key for t in problem if t.kind != "text"}
    return sum(
        t.kind != "text"
        and id(t) not in placed
        and t.key not in theirs
        and not t.glued
        and t.key not in ("0", "3", "4", "6")
        for t in asked
    )


def _question(asked: list[Token], problem: list[Token]) -> list[Difference]:
    """The query's question and unit, when the problem's name another quantity, object or
    unit (`problems.words.phrases_differ`); one the query lacks is a gap."""
    found = []
    for kind in QUESTION:
        mine = [t for t in asked if t.part == kind]
        theirs = [t for t in problem if t.part == kind]
        if mine and theirs and phrases_differ(_words(mine), _words(theirs), verbs=kind == "asked"):
            found.append(Difference(kind, _phrase(mine), _phrase(theirs)))
    return found


def _words(part: list[Token]) -> list[Word]:
    return [_word_of(t) for t in part if t.kind == "text"]


def _word_of(token: Token) -> Word:
    return Word.of(token.shown, glued=token.glued)


def _phrase(part: list[Token]) -> str:
    return " ".join(t.shown for t in part)


def _values_paired(
    asked: list[Token], problem: list[Token], j1: int, j2: int
) -> list[tuple[Token, int]]:
    """The values of a stretch the two texts do not share, paired where they stand in the
    same place: runs of equal length and kind (a value dropped on one side pairs nothing)."""
    q_values = [t for t in asked if t.kind != "text"]
    p_index = [j for j in range(j1, j2) if problem[j].kind != "text"]
    kinds = SequenceMatcher(
        None, [t.kind for t in q_values], [problem[j].kind for j in p_index], autojunk=False
    )
    pairs = []
    for op, a1, a2, b1, b2 in kinds.get_opcodes():
        if op in ("equal", "replace") and a2 - a1 == b2 - b1:
            for q, j in zip(q_values[a1:a2], p_index[b1:b2], strict=True):
                if q.kind == problem[j].kind:
                    pairs.append((q, j))
    return pairs


def _unmerged(asked: list[Token], labels: set[str]) -> list[Token]:
    """The query's tokens with a label the problem lacks split into two or three of its
    labels when they make it: a space lost between them (`ABCAC` is `ABC AC`)."""
    out: list[Token] = []
    for token in asked:
        pieces = _split_label(token.key, labels, 3) if token.kind == "label" else None
        if pieces and token.key not in labels:
            out += [Token("label", piece, piece, part=token.part) for piece in pieces]
        else:
            out.append(token)
    return out


def _split_label(label: str, labels: set[str], most: int) -> list[str] | None:
    if label in labels:
        return [label]
    if most < 2:
        return None
    for cut in range(len(label) - 1, 0, -1):
        rest = _split_label(label[cut:], labels, most - 1) if label[:cut] in labels else None
        if rest:
            return [label[:cut], *rest]
    return None


# what a label names with its letters in order: a vector, a ray, an arc (`AB` is not `BA`)
# (as tokens hold words: folded as OCR damage is, `вект0р`)
_ORDERED = tuple(ocr_fold(word) for word in ("вектор", "луч", "дуг"))


def _ordered(problem: list[Token], at: int) -> bool:
    """Whether the label at `at` names a thing whose letters' order matters."""
    before = [t for t in problem[max(0, at - 3) : at] if t.kind == "text"]
    return any(t.key.startswith(_ORDERED) for t in before)


# Latin capitals OCR reads one for the other (a photo's `AD, BE и CF` read `AO, BE и CE`)
LOOK_ALIKE = frozenset(frozenset(pair) for pair in ("DO", "OQ", "EF", "CG", "PR", "UV"))


def _read_for(read: str, label: str, labels: set[str] | frozenset[str]) -> bool:
    """Whether OCR's `read` may be the problem's `label` misread: a name of two letters or
    more, each differing letter a look-alike of the problem's, and `read` naming nothing
    the problem names — neither a label of it (`AO` where the problem has a segment AO)
    nor a point of it (`O` standing alone: a circle's centre)."""
    if len(read) < 2 or len(read) != len(label) or read in labels or read[::-1] in labels:
        return False
    pairs = [(x, y) for x, y in zip(read, label, strict=True) if x != y]
    return all(frozenset(pair) in LOOK_ALIKE and pair[0] not in labels for pair in pairs)


def _differ(
    asked: Token,
    mine: Token,
    *,
    ordered: bool = False,
    labels: frozenset[str] | set[str] = frozenset(),
) -> bool:
    """Whether two values in one place differ. A polygon's name of four letters or more
    with one of them lost or two swapped (`ACD`, `ABDC` for `ABCD`) is damage, not another
    figure."""
    if asked.key == mine.key:
        return False
    short, long = sorted((asked.key, mine.key), key=len)
    if asked.glued and (long.startswith(short) or long.endswith(short)):
        return False  # `равенl20`, `равн012`: where the word ends is a guess
    a, b = asked.key, mine.key
    if asked.kind == "label" and a == b[::-1] and not ordered:
        return False  # `CB` is `BC`, `CBA` is `ABC`: one segment, one angle, one triangle
    if asked.read and _read_for(a, b, labels):
        return False  # off a photo: `AO` is how OCR reads `AD`
    if asked.kind != "label" or len(mine.key) < 4:
        return True
    dropped = len(a) == len(b) - 1 and any(b[:i] + b[i + 1 :] == a for i in range(len(b)))
    swapped = (
        len(a) == len(b)
        and sorted(a) == sorted(b)
        and sum(x != y for x, y in zip(a, b, strict=True)) == 2
    )
    return not (dropped or swapped)


def _difference(asked: Token, problem: list[Token], at: int) -> Difference:
    mine = problem[at]
    if mine.kind == "label":  # in Latin capitals: the site writes some in Cyrillic ones
        return Difference("label", asked.key, mine.key)
    return Difference("number", asked.shown, mine.shown, _owner(problem, at))


def _owner(problem: list[Token], at: int) -> str:
    """The label a number is the value of: `BC = 7`, `угол A равен 30`."""
    if problem[at].kind != "number":
        return ""
    back = at - 1
    if back >= 0 and problem[back].kind == "text" and problem[back].key in _FOLDED_EQUALS:
        back -= 1
    return problem[back].key if back >= 0 and problem[back].kind == "label" else ""


_FOLDED_EQUALS = frozenset(ocr_fold(word) for word in _EQUALS)


def verdict_of(comparison: Comparison, score: float, *, close: float, held: float) -> Verdict:
    """`same`: the problem holds the query's text in place (a score of `close` or more and
    `held` of the query's tokens in place), all its values and words and its question;
    `same_prototype`: its text (either of the two) and question with other values;
    `other`: another text, or another question or unit (`ambiguous` is the caller's:
    several problems hold the query)."""
    if any(d.kind in QUESTION for d in comparison.differences):
        return "other"
    if comparison.differences:
        return "same_prototype" if score >= close or comparison.coverage >= held else "other"
    close_enough = score >= close and comparison.coverage >= held
    return "same" if close_enough and not comparison.extra else "other"
