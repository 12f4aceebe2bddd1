"""How well real norm documents are read into their parts: the public dataset
Akumsk/russian-construction-standards (361 documents' page texts, CC BY 4.0), every document.

    .venv/bin/python bench/norm_structure.py DATASET_DIR [--only CODE ...] [--misses N]

DATASET_DIR is a checkout of the dataset (its `metadata/*.json`; docs/normagpt.md: "A real corpus").
For each document, measured against what its own text shows, independently of the reader:
- numbers: the distinct clause numbers that open a line («5.2.1 Текст», «3.1 термин:») outside
  contents entries and bound-in amendments, and the share of them the reader made a clause or
  a heading (a table's numbered rows count too: they are the misses the figure leaves);
- captions: the distinct table numbers of caption lines («Таблица 5.1», «Т а б л и ц а 3»),
  and the share the reader made a table;
- integer lines lost: lines holding only an integer that are in no unit and are not the
  page's first or last line (where a page number stands);
- backwards: clauses whose number does not follow the one before (a false clause shows so).
A document's text layer is intact when 80 % of its pages hold text (200 characters), at most a
tenth of its words are single letters that are not Russian words («в», «и», «с» …) and at most
one word in 200 carries an OCR's stray glyph («Ni„», «ш\\», «^»): a layer that lost pages,
split its words into letters or was read from a poor scan is not. The share per document is
counted where the document is numbered in clauses (NUMBERED_MIN numbers opening a line: not a
law numbered by its articles).

The previous reader (git `28ecbc7`, before real documents were measured) and the plainest
one (every line-start number a clause) run in the same run as baselines.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import subprocess
import sys
import time
import types
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import print_table  # noqa: E402
from normagpt.clauses import document_read, number_key  # noqa: E402
from normagpt.parsing import number_normal, text_clean  # noqa: E402

BASELINE_COMMIT = "28ecbc7"
_ONE_LETTER = set("вискоуая")  # Russian words of one letter: others alone are a split word
_OCR_GLYPH = re.compile(r"\w[\\|^~„`]|[\\|^~„`]\w")  # «Ni„», «ш\\»: an OCR's garbage in words
NUMBERED_MIN = 10  # a document numbered in clauses: so many distinct numbers opening a line
_LINE_NUMBER = re.compile(
    r"^\s*(?:п\.\s*)?((?:[А-ЯЁA-Z]\.)?\d{1,2}(?:\.\d{1,3}){1,4}[а-я]?)\.?\s+(?=[А-ЯЁA-Zа-яё(«])",
    re.M,
)
_CONTINUED = re.compile(
    r"^\s*(?:Продолжение|Окончание|ПРОДОЛЖЕНИЕ|ОКОНЧАНИЕ)\s+(?:таблицы|табл\.)", re.I
)
_LEADER = re.compile(r"(?:\.\s?){3,}\s*\d+\s*$|…+\s*\d+\s*$|_{3,}\s*\d+\s*$")
_CAPTION = re.compile(
    r"^\s*(?:Т\s?а\s?б\s?л\s?и\s?ц\s?а|ТАБЛИЦА)\s*((?:[А-ЯЁA-Z]\s?\.\s?)?\d{1,2}(?:\s?\.\s?\d{1,3}){0,3})"
    r"\s*(?:$|[—–\-.]|\(|[А-ЯЁ])",
    re.M,
)


_BOUND_IN = re.compile(r"(?m)^\(?(?:Продолжение\s+)?(?:Изменени[ея]\s+№|Поправка\s+к)")


@dataclass
class Document:
    code: str
    pages: list[str]

    @property
    def intact(self) -> bool:
        full = sum(len(p.strip()) >= 200 for p in self.pages)
        text = " ".join(self.pages)
        words = text.split()
        letters = sum(len(w) == 1 and w.isalpha() and w.lower() not in _ONE_LETTER for w in words)
        glyphs = len(_OCR_GLYPH.findall(text))
        return (
            full >= 0.8 * len(self.pages)
            and letters <= 0.1 * max(1, len(words))
            and glyphs <= 0.005 * max(1, len(words))
        )


@dataclass
class Score:
    numbers: set[str] = field(default_factory=set)
    found: set[str] = field(default_factory=set)
    rows: set[str] = field(default_factory=set)  # missed: a table's numbered rows
    captions: set[str] = field(default_factory=set)
    tables: set[str] = field(default_factory=set)
    integers: int = 0
    integers_lost: int = 0
    clauses: int = 0
    backwards: int = 0
    seconds: float = 0.0

    def add(self, other: Score) -> None:
        for name in ("numbers", "found", "rows", "captions", "tables"):
            getattr(self, name).update(getattr(other, name))
        for name in ("integers", "integers_lost", "clauses", "backwards", "seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def documents(directory: Path, only: list[str]) -> list[Document]:
    folder = directory / "metadata" if (directory / "metadata").is_dir() else directory
    out = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        code = f"{data.get('document_type', '')} {data.get('number', '')}".strip()
        if only and not any(o.lower() in (code + path.stem).lower() for o in only):
            continue
        pages = [text_clean(p.get("page_content") or "") for p in data.get("pages", [])]
        out.append(Document(path.stem, pages))
    return out


def expected(document: Document) -> tuple[set[str], set[str]]:
    """The clause numbers opening lines and the caption numbers: contents entries and the
    pages of an amendment or erratum bound in left out (their numbers are not the
    document's parts)."""
    numbers, captions = set(), set()
    for page in document.pages:
        if _BOUND_IN.search("\n".join(page.splitlines()[:3])):
            continue
        for line in page.splitlines():
            if _LEADER.search(line):
                continue
            if (m := _LINE_NUMBER.match(line)) is not None:
                numbers.add(number_normal(m.group(1)))
            if (m := _CAPTION.match(line)) is not None:
                captions.add(number_normal(re.sub(r"\s", "", m.group(1))))
    return numbers, captions


def score(document: Document, read: Any) -> Score:
    """`read(pages)` → (units, heading numbers) scored against what the text shows."""
    numbers, captions = expected(document)
    started = time.perf_counter()
    units, headings = read(document.pages)
    seconds = time.perf_counter() - started
    clauses = [u for u in units if u.kind == "clause"]
    made = {u.number for u in clauses} | {number for number, _ in headings}
    keys = [number_key(u.number) for u in clauses]
    backwards = sum(b <= a for a, b in itertools.pairwise(keys))
    integers, lost = integer_lines(document, units, headings)
    rows = table_rows(units, numbers - made)
    return Score(
        numbers={f"{document.code}|{n}" for n in numbers},
        found={f"{document.code}|{n}" for n in numbers & made},
        rows={f"{document.code}|{n}" for n in rows},
        captions={f"{document.code}|{n}" for n in captions},
        tables={
            f"{document.code}|{n}"
            for n in captions & {u.number for u in units if u.kind == "table"}
        },
        integers=integers,
        integers_lost=lost,
        clauses=len(clauses),
        backwards=backwards,
        seconds=seconds,
    )


def table_rows(units: list[Any], missed: set[str]) -> set[str]:
    """Of the `missed` numbers, those that number a table's rows: on a line of a unit the
    reader made a table of, which opens with a caption (as `_CAPTION` reads it, or «Продолжение
    таблицы N»), numbered
    apart from the section the table stands in (the first part of the number is not that
    of the clause before the table: «2.1 Вестибюль» in a table of section 5). A number of
    the section itself inside a table («7.5.1» after 7.4.5.12) is a clause the table
    swallowed: a miss."""
    rows, swallowed = set(), set()
    last: tuple[float, ...] = ()
    for unit in units:
        if unit.kind == "clause":
            last = number_key(unit.number)
            continue
        first = unit.lines[0] if unit.lines else ""
        if unit.kind != "table" or not (_CAPTION.match(first) or _CONTINUED.match(first)):
            continue
        for line in "\n".join(unit.lines).splitlines():
            match = _LINE_NUMBER.match(line)
            if match is None or (number := number_normal(match.group(1))) not in missed:
                continue
            (swallowed if number_key(number)[:2] == last[:2] else rows).add(number)
    return rows - swallowed


def integer_lines(
    document: Document, units: list[Any], headings: list[tuple[str, int]]
) -> tuple[int, int]:
    """Lines holding only an integer, but for the first two and last two of a page (where a
    page number stands, a running header before it), and how many are in no unit (over
    the pages a unit runs on) and number no heading read (a section's «8» alone on its line)."""
    held: Counter[tuple[int, str]] = Counter()
    for unit in units:
        for line in unit.lines:
            for part in line.split("\n"):
                held[unit.page_index, part.strip()] += 1
    for number, page in headings:
        held[page, number] += 1
    total = lost = 0
    for index, page in enumerate(document.pages):
        lines = [x.strip() for x in page.splitlines() if x.strip()]
        for position, line in enumerate(lines):
            if not line.isdigit() or position < 2 or position >= len(lines) - 2:
                continue
            total += 1
            if not any(held[p, line] for p in range(max(0, index - 12), index + 1)):
                lost += 1
    return total, lost


def read_now(pages: list[str]) -> tuple[list[Any], list[tuple[str, int]]]:
    structure = document_read(pages)
    return structure.units, [(h.number, h.page_index) for h in structure.headings]


def read_before() -> Any:
    """The reader of `BASELINE_COMMIT`, loaded from git (nothing of it is in the tree)."""
    source = subprocess.run(
        ["git", "show", f"{BASELINE_COMMIT}:normagpt/clauses.py"],  # noqa: S607 (git on PATH)
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    module = types.ModuleType("clauses_before")
    sys.modules["clauses_before"] = module  # dataclasses look their module up
    exec(compile(source, "clauses_before.py", "exec"), module.__dict__)  # noqa: S102

    def read(pages: list[str]) -> tuple[list[Any], list[tuple[str, int]]]:
        splitter = module._Splitter(module._lines(pages, module.boilerplate_lines(pages)))
        headings: list[tuple[str, int]] = []
        original = splitter._set_heading

        def record(depth: int, number: str, title: str) -> None:
            headings.append((number, -1))
            original(depth, number, title)

        splitter._set_heading = record
        return splitter.run(), headings

    return read


@dataclass
class _Unit:
    kind: str
    number: str
    page_index: int
    lines: list[str]


def read_plain(pages: list[str]) -> tuple[list[Any], list[tuple[str, int]]]:
    """Every line-start number a clause, every caption a table, every line kept."""
    units: list[_Unit] = []
    for index, page in enumerate(pages):
        for line in page.splitlines():
            if (m := _LINE_NUMBER.match(line)) is not None:
                units.append(_Unit("clause", number_normal(m.group(1)), index, [line]))
            elif (m := _CAPTION.match(line)) is not None:
                units.append(_Unit("table", number_normal(m.group(1)), index, [line]))
            elif units:
                units[-1].lines.append(line)
            else:
                units.append(_Unit("text", "", index, [line]))
    return units, []


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "—"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path, help="a checkout of the dataset")
    parser.add_argument("--only", nargs="*", default=[], help="documents whose code holds these")
    parser.add_argument("--misses", type=int, default=0, help="print N missed numbers a document")
    parser.add_argument("--documents", action="store_true", help="a row per document")
    args = parser.parse_args()
    docs = documents(args.dataset, args.only)
    readers = {"this reader": read_now, f"reader of {BASELINE_COMMIT}": read_before(),
               "every line-start number": read_plain}  # fmt: skip
    totals = {name: Score() for name in readers}
    intact_totals = {name: Score() for name in readers}
    # per intact document: (share found of all numbers, of those but its tables' rows, code)
    worst: dict[str, list[tuple[float, float, str]]] = {name: [] for name in readers}
    rows = []
    for document in docs:
        for name, read in readers.items():
            result = score(document, read)
            totals[name].add(result)
            if document.intact:
                intact_totals[name].add(result)
                if len(result.numbers) >= NUMBERED_MIN:
                    worst[name].append((*_shares(result), document.code))
            if name == "this reader":
                rows.append(_row(document, result))
                if args.misses:
                    _misses(document, result, args.misses)
    if args.documents:
        header = ["document", "pages", "intact", "clauses", "tables", "numbers found",
                  "rows in tables", "found, rows apart", "captions found", "integers lost",
                  "backwards", "not understood"]  # fmt: skip
        print_table(header, rows)
        print()
    intact = sum(d.intact for d in docs)
    print(f"{len(docs)} documents, {sum(len(d.pages) for d in docs)} pages; {intact} with an "
          "intact text layer")  # fmt: skip
    print()
    summary = []
    for name in readers:
        whole, kept = totals[name], intact_totals[name]
        apart = sorted(worst[name], key=lambda w: w[1])[:1]
        summary.append([
            name, share(len(whole.found), len(whole.numbers)), str(len(whole.rows)),
            share(len(whole.found), len(whole.numbers) - len(whole.rows)),
            share(len(kept.found), len(kept.numbers) - len(kept.rows)),
            f"{100 * apart[0][1]:.0f} % ({apart[0][2]})" if apart else "—",
            f"{sum(w[0] >= 0.9 for w in worst[name])} / {sum(w[1] >= 0.9 for w in worst[name])}"
            f" of {len(worst[name])}",
            share(len(whole.tables), len(whole.captions)),
            f"{whole.integers_lost} of {whole.integers}", str(whole.clauses),
            share(whole.backwards, whole.clauses), f"{whole.seconds:.1f}",
        ])  # fmt: skip
    print_table(["reader", "numbers found", "rows in tables", "found, rows apart",
                 "intact: found, rows apart", "intact: lowest, rows apart",
                 "intact ≥ 90 %: all / rows apart", "captions found", "integer lines lost",
                 "clauses", "backwards", "seconds"], summary)  # fmt: skip


def _shares(result: Score) -> tuple[float, float]:
    """The share of a document's numbers found: of all, and of all but its tables' rows."""
    found, whole = len(result.found), len(result.numbers)
    return found / whole, found / max(1, whole - len(result.rows))


def _row(document: Document, result: Score) -> list[str]:
    missed = len(result.numbers) - len(result.found) + len(result.captions) - len(result.tables)
    return [
        document.code, str(len(document.pages)), "yes" if document.intact else "no",
        str(result.clauses), str(len(result.tables)), share(len(result.found), len(result.numbers)),
        str(len(result.rows)), share(len(result.found), len(result.numbers) - len(result.rows)),
        share(len(result.tables), len(result.captions)), str(result.integers_lost),
        str(result.backwards), str(missed),
    ]  # fmt: skip


def _misses(document: Document, result: Score, most: int) -> None:
    missed = sorted((n.split("|", 1)[1] for n in result.numbers - result.found), key=number_key)
    tables = sorted(n.split("|", 1)[1] for n in result.captions - result.tables)
    if missed or tables:
        print(f"{document.code}: numbers {missed[:most]} tables {tables[:most]}")


if __name__ == "__main__":
    main()
