"""Twins of the real problems for bench/problems.py: what the fuzzy search says of problems
that differ from the query in one thing or several, and of queries that several problems
hold.

Each twin is a real problem (tests/fixtures/sdamgia) with one change at a known place:
another number, another point label, another word of the data (синус/косинус,
вписанный/описанный…), another asked quantity (`Найдите дугу CAD` for `угол CAD`, inflected
with pymorphy3, adjectives agreeing), another unit (`в радианах` for `в градусах`). The
real problems and one twin of each kind are stored (and on the stand-in site); the queries
are the real problems as stored, variants stored nowhere (another change, or two or three
at once), fragments several stored problems hold (a sentence, the question with its unit),
and damaged copies of the real problems. Since every text is the real one with changes at
known places, what differs between a query and a match is known exactly: each must be
named, with both sides, in the match's `differences` and in the Markdown.

The word lists that make twins are in bench/problems_twin_makers.py; the search itself has
none (it compares lemmas).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from bench.damage import SENTENCE, damage_kept, holds_every
from bench.problems_twin_makers import NOWHERE, STORED, Change, Twin, changes_made
from core.russian import morphology
from problems import formatting, fuzzy, matching
from problems.differences import Difference
from problems.entities import ParsedProblem
from problems.services import problems_store
from problems.subjects import Site
from tests.problems.blocks import block
from tests.problems.fake_site import FakeSite

MATH = Site("math", "ege")


def expected(query: Twin, mine: Twin) -> list[Change]:
    """What differs between two texts made from one real problem: at each place either
    changed, the query's value (`old`) against the problem's (`new`)."""
    spans = {(c.start, c.end): c for c in (*query.changes, *mine.changes)}
    q = {(c.start, c.end): c.new for c in query.changes}
    m = {(c.start, c.end): c.new for c in mine.changes}
    found = []
    for span, change in sorted(spans.items()):
        asked, theirs = q.get(span, change.old), m.get(span, change.old)
        if asked != theirs:
            found.append(Change(*span, asked, theirs, change.kind))
    return found


def named(change: Change, differences: list[Difference]) -> bool:
    """Whether a difference names `change`, both sides (a question or unit: within the
    phrases it names)."""
    for d in differences:
        if d.kind != change.kind:
            continue
        if change.kind in ("asked", "unit"):
            if folded(change.old) in folded(d.query) and folded(change.new) in folded(d.problem):
                return True
        elif (d.query, d.problem) == (change.old, change.new):
            return True
    return False


def in_markdown(change: Change, line: str) -> bool:
    """Whether a match's Markdown line states `change` («…: 7, not 8»)."""
    return folded(change.new) in folded(line) and folded(change.old) in folded(line)


def folded(text: str) -> str:
    """Normalized and OCR-folded: the site's Cyrillic `АВ` is the query's `AB`."""
    return matching.ocr_fold(matching.normalize(text))


def sentences_within(part: str, text: str) -> bool:
    """Whether `text` holds the sentences of `part`, whole and in a row (`Найдите высоту
    ромба.` is not in `Найдите высоту ромба, сторона которого…`)."""
    mine = [folded(s) for s in SENTENCE.split(part.strip())]
    theirs = [folded(s) for s in SENTENCE.split(text.strip())]
    return any(theirs[i : i + len(mine)] == mine for i in range(len(theirs)))


def within(part: str, text: str) -> bool:
    """Whether `text` holds `part`, whole words (`синус A` is not in `синус ACB`)."""
    return f" {folded(part)} " in f" {folded(text)} "


# --- what a problem is: the bench's own reading, stricter than the search's ------------

_LEADS = ("найд", "вычисл", "определ", "чему", "каков", "какую", "каким", "сколько")
_MORE_DATA = frozenset({"если", "когда"})
_ANSWER = frozenset({"ответ", "ответе"})
_TOKEN = re.compile(r"[A-Za-zА-Яа-яЁё]+|\d+(?:[.,]\d+)?")
_LOOKALIKES = "АВСЕНКМОРТХ"
_AS_LATIN = str.maketrans(_LOOKALIKES, "ABCEHKMOPTX")
_UNIT_WORDS = frozenset({"градус"})  # «43 градусам» is «43°»


@dataclass(frozen=True)
class Reading:
    """What a problem is, read apart from how it is worded: its numbers and point labels
    in order, the lemmas of its question (from «Найдите…» to «если» or the sentence's end)
    and of its answer's unit (a sentence with «Ответ»), and the set of the lemmas of the
    rest, its data's words (function words left out). Two texts with one reading are one
    problem reworded (`В треугольнике АВС угол А равен 41°, а … — высоты, пересекающиеся`
    and `… 41 градусам, … высоты … пересекаются`); any other difference — a number, a
    label, a word of the data, the question, the unit — makes another problem. Written
    here, apart from `problems.question`, so that the bench does not grade the search by
    its own reading."""

    numbers: tuple[str, ...]
    labels: tuple[str, ...]
    question: tuple[str, ...]
    unit: tuple[str, ...]
    data: frozenset[str]


def reading(text: str) -> Reading:
    numbers: list[str] = []
    labels: list[str] = []
    question: list[str] = []
    unit: list[str] = []
    data: set[str] = set()
    for sentence in SENTENCE.split(text.strip()):
        found = _TOKEN.findall(sentence)
        answer = any(t.lower() in _ANSWER for t in found)
        part: list[str] | None = None  # the question, once its lead is met
        for n, token in enumerate(found):
            if token[0].isdigit():
                numbers.append(token.replace(",", "."))
            elif _is_label(token, first=n == 0):
                labels.append(token.translate(_AS_LATIN))
            else:
                word = token.lower().replace("ё", "е")
                if not answer and part is None and word.startswith(_LEADS):
                    part = question
                elif word in _MORE_DATA:
                    part = None
                lemma = _lemma(word)
                if answer:
                    unit.append(lemma)
                elif part is not None:
                    part.append(lemma)
                elif word not in matching.STOP_WORDS and lemma not in _UNIT_WORDS:
                    data.add(lemma)
    return Reading(tuple(numbers), tuple(labels), tuple(question), tuple(unit), frozenset(data))


def _is_label(token: str, *, first: bool) -> bool:
    """A point's label: capital Latin letters, or capital Cyrillic look-alikes (the site's
    `АВС`) — one of them opening a sentence is a word (`В треугольнике`)."""
    if re.fullmatch(r"[A-Z]+", token):
        return True
    return all(ch in _LOOKALIKES for ch in token) and (len(token) > 1 or not first)


_LEMMAS: dict[str, str] = {}


def _lemma(word: str) -> str:
    if word not in _LEMMAS:
        _LEMMAS[word] = morphology().parse(word)[0].normal_form
    return _LEMMAS[word]


def one_problem(a: str, b: str) -> bool:
    """Whether two texts are one problem: the same text, or one reading (`Reading`)."""
    return folded(a) == folded(b) or reading(a) == reading(b)


# --- the run ---------------------------------------------------------------------------


@dataclass
class Tally:
    queries: int = 0
    differ: int = 0  # matches of another problem than the query's (`Reading`; damaged:
    same_wrong: int = 0  # not holding what it kept) … and still `same` (exact queries: or
    # `ambiguous`, not holding it)
    differ_text: int = 0  # exact queries: matches whose text differs from the query's …
    same_wrong_text: int = 0  # … and still `same` (or `ambiguous`, not holding it)
    reworded: int = 0  # exact queries: matches of another text, one problem (`Reading`) …
    reworded_same: int = 0  # … `same`
    changes: int = 0  # differences the twins of its real problem have (known by construction)
    named: int = 0  # … named in `differences`, both sides
    said: int = 0  # … stated in the Markdown
    exact: int = 0  # matches whose text is the query's (damaged: holds what it kept)
    exact_same: int = 0  # … `same` (damaged: or `ambiguous`)
    fragments_right: int = 0  # fragments: every holder listed `ambiguous`, none `same`, site asked
    nothing: int = 0  # … nothing listed (a query of no telling word: no stored candidate)
    confident: int = 0
    confident_wrong: int = 0
    top1: int = 0  # damaged queries: the first match holds what the query kept
    notes: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name, value in vars(other).items():
            if isinstance(value, int):
                setattr(self, name, getattr(self, name) + value)


def store_family(
    conditions: dict[str, str], limit: int, fake: FakeSite
) -> tuple[dict[str, Twin], set[str]]:
    """The real problems (their first `limit`) and a twin of each kind, stored and on the
    stand-in site: problem id → twin, and their texts (normalized)."""
    family: dict[str, Twin] = {}
    for n, (pid, text) in enumerate(list(conditions.items())[:limit]):
        family[pid] = Twin(pid, ())
        for k, maker in enumerate(STORED.values()):
            change = maker(text, random.Random(pid), 1)
            if change is not None:
                family[str(3_000_000 + 10 * n + k)] = Twin(pid, (change,))
    texts: dict[str, str] = {}
    seen: set[str] = set()
    for tid, twin in family.items():
        body = twin.text(conditions[twin.real])
        if matching.normalize(body) not in seen:
            seen.add(matching.normalize(body))
            texts[tid] = body
    family = {tid: family[tid] for tid in texts}
    for tid, body in texts.items():
        fake.add_problem("math-ege", tid, block(tid, body))
    problems_store(
        site=MATH, parsed=[ParsedProblem(problem_id=p, condition_text=t) for p, t in texts.items()]
    )
    return family, seen


def queries_of(
    conditions: dict[str, str], family: dict[str, Twin], stored: set[str], damaged: int
) -> dict[str, list[tuple[Twin | None, str, list[str]]]]:
    """name → (the query as a twin of its real problem or None for a fragment, its text,
    the sentences it keeps)."""
    reals = [t for t in family.values() if not t.changes]
    made: dict[str, list[tuple[Twin | None, str, list[str]]]] = {
        "as stored": [(t, conditions[t.real], []) for t in reals]
    }
    for name, makers in NOWHERE.items():
        rows = []
        for real in reals:
            changes = changes_made(conditions[real.real], makers, real.real)
            twin = Twin(real.real, changes) if changes else None
            text = twin.text(conditions[real.real]) if twin else ""
            if twin and matching.normalize(text) not in stored:
                rows.append((twin, text, []))
        made[f"stored nowhere: {name}"] = rows
    fragments = _fragments(family, conditions)
    made["fragments held by 2+ problems"] = [(None, f, []) for f in fragments]
    rng = random.Random(50)
    rows = []
    for _ in range(damaged):
        real = rng.choice(reals)
        query, kept = damage_kept(conditions[real.real], rng)
        rows.append((real, query[:1000], kept))
    made["damaged copies (OCR, typos, a sentence lost)"] = rows
    return made


def _fragments(family: dict[str, Twin], conditions: dict[str, str]) -> list[str]:
    """Sentences of the real problems (and their question with its unit) that two stored
    texts or more hold, whole, none of them being that sentence alone."""
    stored = {
        folded(t.text(conditions[t.real])): t.text(conditions[t.real]) for t in family.values()
    }
    reals = [t for t in family.values() if not t.changes]
    found: dict[str, str] = {}
    for real in reals:
        sentences = SENTENCE.split(conditions[real.real].strip())
        pieces = [*sentences, " ".join(sentences[-2:])] if len(sentences) > 2 else sentences
        for piece in pieces:
            key = folded(piece)
            if len(key) < 10 or key in stored or key in found:
                continue
            if sum(sentences_within(piece, text) for text in stored.values()) >= 2:
                found[key] = piece
    return list(found.values())


def run(
    conditions: dict[str, str], limit: int, damaged: int, fake: FakeSite
) -> tuple[list[list[str]], list[str], dict[str, Tally]]:
    """The twins' table (one row per kind of query), the first misses of each kind, and
    the tallies by kind: exact queries, fragments, damaged ones."""
    family, stored = store_family(conditions, limit, fake)
    peer = Peer([t.text(conditions[t.real]) for t in family.values()])
    rows, misses = [], []
    kinds = ("exact", "fragments", "damaged")
    totals = {k: Tally() for k in (*kinds, *(f"peer {k}" for k in kinds))}
    for name, queries in queries_of(conditions, family, stored, damaged).items():
        tally, theirs = Tally(), Tally()
        for twin, query, kept in queries:
            outcome = fuzzy.problems_search_fuzzy(site=MATH, condition_text=query, limit=5)
            _judge(tally, outcome, twin, query, kept, family, conditions)
            peer.judge(theirs, query, kept, fragment=twin is None)
        rows.append(_row(name, tally))
        misses += [f"{name}: {note}" for note in tally.notes]
        kind = next((k for k in ("fragments", "damaged") if name.startswith(k)), "exact")
        totals[kind].add(tally)
        totals[f"peer {kind}"].add(theirs)
    for kind in kinds:
        rows.append(_row(f"peer ({Peer.NAME}): {kind} queries", totals[f"peer {kind}"]))
    return rows, misses, totals


class Peer:
    """The plainest matcher a client would write: every stored condition scored against
    the query by rapidfuzz's `token_set_ratio`, the best one presented as the problem. It
    never asks the site (so every answer is confident), names no difference and never
    says `ambiguous`: its first match of another problem is a `same` for one that differs
    and a confident-wrong answer."""

    NAME = "rapidfuzz token_set_ratio, top match"

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.normalized = [matching.normalize(t) for t in texts]

    def first(self, query: str) -> str:
        from rapidfuzz import fuzz, process

        best = process.extractOne(
            matching.normalize(query), self.normalized, scorer=fuzz.token_set_ratio
        )
        return self.texts[best[2]] if best else ""

    def judge(self, tally: Tally, query: str, kept: list[str], *, fragment: bool) -> None:
        tally.queries += 1
        tally.confident += 1
        if fragment:  # two stored problems or more hold it: one presented is wrong
            tally.confident_wrong += 1
            return
        first = self.first(query)
        if kept:
            right = holds_every(first, kept)
            tally.top1 += right
        else:
            right = one_problem(first, query)
            tally.exact += right
            tally.exact_same += right
        tally.differ += not right
        tally.same_wrong += not right
        tally.confident_wrong += not right


def _judge(
    tally: Tally,
    outcome: fuzzy.FuzzyOutcome,
    twin: Twin | None,
    query: str,
    kept: list[str],
    family: dict[str, Twin],
    conditions: dict[str, str],
) -> None:
    tally.queries += 1
    markdown = formatting.fuzzy_markdown(outcome).splitlines()
    if twin is None:
        _judge_fragment(tally, outcome, query)
        return
    _judge_first(tally, outcome, query, kept)
    for n, match in enumerate(outcome.matches, start=1):
        text = match.problem.condition_text
        if not kept and folded(text) != folded(query):  # the text differs: as before
            tally.differ_text += 1
            holds = within(query, text)
            wrong = match.verdict == "same" or (not holds and match.verdict == "ambiguous")
            tally.same_wrong_text += wrong
        # damaged: what the damage dropped (a sentence, a value) is not the query's;
        # exact: another problem (`Reading`), not another wording of this one
        differs = not holds_every(text, kept) if kept else not one_problem(text, query)
        if not kept and not differs and folded(text) != folded(query):
            tally.reworded += 1
            tally.reworded_same += match.verdict == "same"
            _note(tally, match.verdict != "same", f"reworded {query[-60:]!r}: {match.verdict}")
            continue
        if not differs:
            right = match.verdict == "same" or (bool(kept) and match.verdict == "ambiguous")
            tally.exact += 1
            tally.exact_same += right
            _note(tally, not right, f"{query[-90:]!r} | {match.verdict}: {match.differences}")
            continue
        tally.differ += 1
        holds = not kept and within(query, text)  # the query is a part of it
        wrong = match.verdict == "same" or (not kept and not holds and match.verdict == "ambiguous")
        tally.same_wrong += wrong
        _note(tally, wrong, f"{query[-90:]!r} | {match.verdict}: {text[-90:]!r}")
        mine = family.get(match.problem.problem_id)
        if kept or mine is None or mine.real != twin.real:
            continue  # what differs is known for the twins of the query's real problem
        changes = expected(twin, mine)
        line = next(line for line in markdown if line.startswith(f"{n}. "))
        tally.changes += len(changes)
        tally.named += sum(named(c, match.differences) for c in changes)
        tally.said += sum(in_markdown(c, line) for c in changes)
        missed = [c for c in changes if not named(c, match.differences)]
        _note(tally, bool(missed), f"{query[-90:]!r} | unnamed {missed}: {match.differences}")


def _judge_fragment(tally: Tally, outcome: fuzzy.FuzzyOutcome, query: str) -> None:
    """A fragment several problems hold: every holder ambiguous, none same, the site asked."""
    holders = [m for m in outcome.matches if sentences_within(query, m.problem.condition_text)]
    right = outcome.site_asked and all(m.verdict == "ambiguous" for m in holders)
    right = right and not any(m.verdict == "same" for m in outcome.matches)
    right = right and (outcome.fits >= 2 or not outcome.matches)
    tally.fragments_right += right
    tally.nothing += not outcome.matches
    tally.confident += not outcome.site_asked
    tally.confident_wrong += not outcome.site_asked
    verdicts = [(m.problem.problem_id, m.verdict) for m in outcome.matches]
    _note(tally, not right, f"{query!r} | fits {outcome.fits}: {verdicts}")


def _judge_first(tally: Tally, outcome: fuzzy.FuzzyOutcome, query: str, kept: list[str]) -> None:
    """The first match: right for a damaged query (top-1), and, where the site was not
    asked (a confident answer), whether it is wrong."""
    first = outcome.matches[0].problem.condition_text if outcome.matches else ""
    if kept:
        tally.top1 += holds_every(first, kept)
    if not outcome.site_asked:
        tally.confident += 1
        q = matching.normalize(query)
        wrong = not holds_every(first, kept) if kept else matching.normalize(first) != q
        tally.confident_wrong += wrong
        if wrong:
            tally.notes.insert(0, f"confident-wrong: {query!r} → {first!r}")


def _note(tally: Tally, miss: bool, note: str) -> None:
    if miss and len(tally.notes) < 4:
        tally.notes.append(note)


def _row(name: str, t: Tally) -> list[str]:
    def share(part: int, whole: int) -> str:
        return f"{100 * part / whole:.1f}%" if whole else "-"

    fragments = "fragments" in name
    return [
        name,
        str(t.queries),
        f"{t.differ} ({t.differ_text} by text)" if t.differ_text else str(t.differ),
        f"{t.same_wrong} ({t.same_wrong_text} by text)" if t.differ_text else str(t.same_wrong),
        f"{t.reworded_same} of {t.reworded}" if t.reworded else "-",
        share(t.named, t.changes),
        share(t.said, t.changes),
        share(t.exact_same, t.exact),
        f"{share(t.fragments_right, t.queries)} ({t.nothing} found nothing)" if fragments else "-",
        share(t.top1, t.queries) if "damaged" in name else "-",
        str(t.confident),
        str(t.confident_wrong),
    ]


HEADER = [
    "queries", "count", "matches of another problem", "of them same (or ambiguous, not holding it)",
    "reworded (one problem): same",
    "differences named", "… in the Markdown", "query's own text: same", "fragments ambiguous",
    "top-1", "confident", "confident-wrong",
]  # fmt: skip
