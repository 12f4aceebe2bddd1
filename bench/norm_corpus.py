"""A corpus of norm documents for the benchmark, built from bench/norm_corpus/*.yaml.

Each domain file holds one field's words (README there): subjects in their case forms,
conditions, quantities with clause templates and values, requirement prose, definitions,
tables. Documents are built the way a СП is: a cover, «1 Область применения»,
«2 Нормативные ссылки» (codes of other documents of the corpus), «3 Термины и
определения», «4 Общие положения», then sections whose subsections set values for
subjects under conditions, with prose between and tables, cross-references to clauses,
tables and documents, wrapped into lines and pages of about 400 words with a running
header and a page number, as a PDF's text layer reads.

Clauses compete the way they do in a real corpus: a document sets one quantity for
several subjects under several conditions, side by side; the same quantity, subject and
condition recur in other documents of the field (with the same value: norms agree), and
the older edition of a document (replaced) states some with other values. Every value is
recorded as a `Fact` with the clauses that state it, so that questions know their answer.

Questions (`questions`) ask for a fact: naming no document, naming it by code, by a short
name (alias), asking a row of a table, or naming the clause by number; traps ask for a
condition no clause states. Each carries the keywords a planner would search with.
"""

from __future__ import annotations

import random
import re
import textwrap
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).resolve().parent / "norm_corpus"
WORDS_PER_PAGE = 400
LINE_CHARS = 95
REPLACED_SHARE = 0.1
PLACEHOLDER = re.compile(r"\{(\w+)(?::(\w+))?\}")
BOUND = {"min": "не менее", "max": "не более", "exact": ""}


@dataclass(frozen=True)
class FactKey:
    domain: str
    prop: str
    subject: str
    condition: str  # a condition id, or "table:<title>:<row>" for a table's row


@dataclass
class Fact:
    key: FactKey
    value: str
    unit: str
    bound: str
    sentence: str = ""


@dataclass(frozen=True)
class Place:
    """Where a fact is stated: the document, its clause (or table) and page."""

    code: str
    kind: str  # clause | table
    number: str
    page: int
    in_force: bool
    value: str


@dataclass
class Document:
    code: str
    title: str
    kind: str
    domain: str
    status: str = "in_force"
    replaced_by: str | None = None
    pages: list[str] = field(default_factory=list)

    @property
    def in_force(self) -> bool:
        return self.status == "in_force"


@dataclass
class Question:
    kind: str  # no_document | code | alias | table | number | trap
    text: str
    keywords: list[str]
    expected_documents: list[str]
    answers: list[Place]  # any of them is a right answer (empty for a trap)
    value: str = ""  # the asked value with its unit ("" for a trap)
    fact: Fact | None = None
    subject: dict[str, str] = field(default_factory=dict)
    condition_text: str = ""
    condition_ask: str = ""
    prop: dict[str, Any] = field(default_factory=dict)
    in_force: frozenset[str] = frozenset()  # codes of the documents in force

    def answered_by(self, code: str, kind: str, number: str, text: str) -> bool:
        """Whether the clause (`code`, `kind`, `number`, its `text`) answers: one of the
        places stating the fact, or — for a row of a table — a clause of a document in
        force that states the row's value for the row's words (the same fact)."""
        if any((p.code, p.kind, p.number) == (code, kind, number) for p in self.answers):
            return True
        if self.kind != "table" or not self.fact or kind == "table":
            return False
        if code not in self.in_force:
            return False
        from normagpt.parsing import search_stems

        held = set(search_stems(text))
        label = set(search_stems(self.condition_text))
        value = re.escape(self.fact.value.split()[0])
        return label <= held and re.search(rf"(?<![\d,]){value}(?![\d,])", text) is not None


def domains_load(directory: Path = DATA) -> list[dict[str, Any]]:
    return [yaml.safe_load(path.read_text()) for path in sorted(directory.glob("*.yaml"))]


class _Writer:
    """Lines of one document, wrapped as a text layer reads, flowed into pages."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.pages: list[list[str]] = [[]]
        self.words = 0
        self.rng = random.Random(code)

    @property
    def page(self) -> int:
        return len(self.pages)

    def paragraph(self, text: str, *, wrap: bool = True) -> int:
        """Write `text` (wrapped); the page where it begins."""
        first = self.page
        lines = textwrap.wrap(text, LINE_CHARS, break_on_hyphens=False) if wrap else [text]
        for line in lines:
            if self.words >= WORDS_PER_PAGE + self.rng.randint(-40, 40):
                self.pages.append([])
                self.words = 0
            self.pages[-1].append(line)
            self.words += len(line.split())
        return first

    def heading(self, text: str) -> int:
        return self.paragraph(text, wrap=False)

    def texts(self) -> list[str]:
        return [
            "\n".join([self.code, *lines, str(number)])
            for number, lines in enumerate(self.pages, start=1)
        ]


class CorpusBuilder:
    """Documents of about `pages` pages in all, and questions on them (seeded)."""

    def __init__(self, pages: int, *, seed: int = 24, directory: Path = DATA) -> None:
        self.rng = random.Random(seed)
        self.domains = domains_load(directory)
        if not self.domains:
            raise FileNotFoundError(f"no domain files in {directory}")
        self.target_pages = pages
        self.values: dict[FactKey, str] = {}
        self.places: dict[FactKey, list[Place]] = defaultdict(list)
        self.facts: dict[FactKey, Fact] = {}
        self.documents: list[Document] = []
        self._sp_numbers = self.rng.sample(range(1, 700), k=699)

    # --- documents ---------------------------------------------------------------------

    def _planned(self, index: int) -> list[Document]:
        """The next document (of the fields in turn) and, for some, its replaced edition."""
        domain = self.domains[index % len(self.domains)]
        kind = domain.get("kind", "sp") if self.rng.random() < 0.7 else "gost"
        year = self.rng.randint(2012, 2023)
        code = ""
        while not code or any(d.code == code for d in self.documents):
            if kind == "sp" and self._sp_numbers:
                code = f"СП {self._sp_numbers.pop()}.13330.{year}"
            elif kind == "snip":
                series = f"{self.rng.randint(2, 5)}.{self.rng.randint(1, 99):02d}"
                code = f"СНиП {series}.{self.rng.randint(10, 99)}-{year % 100:02d}"
            else:
                code = f"ГОСТ {self.rng.randint(10_000, 59_999)}-{year}"
        title = self.rng.choice(domain["documents"])
        parts = sum(d.title.startswith(title) and d.in_force for d in self.documents)
        if parts:
            title = f"{title}. Часть {parts + 1}"
        document = Document(code, title, kind, domain["domain"])
        planned = [document]
        if code.startswith("СП") and self.rng.random() < REPLACED_SHARE:
            old_year = year - self.rng.randint(4, 8)
            planned.append(
                Document(
                    f"{code[:-4]}{old_year}",
                    title,
                    kind,
                    domain["domain"],
                    status="replaced",
                    replaced_by=code,
                )
            )
        return planned

    def build(self) -> Iterator[Document]:
        """Documents with their pages written until the corpus has its pages (facts and
        their places recorded as they are written)."""
        pages = index = 0
        while pages < self.target_pages:
            for document in self._planned(index):
                self.documents.append(document)
                self._write(document)
                pages += len(document.pages)
                yield document
            index += 1

    def _domain(self, name: str) -> dict[str, Any]:
        return next(d for d in self.domains if d["domain"] == name)

    def _value(self, key: FactKey, values: list[Any], in_force: bool) -> str:
        if key not in self.values:
            self.values[key] = str(self.rng.choice(values))
        if in_force or self.rng.random() < 0.5:
            return self.values[key]
        others = [str(v) for v in values if str(v) != self.values[key]]
        return self.rng.choice(others) if others else self.values[key]

    def _write(self, document: Document) -> None:
        rng = random.Random(document.code)
        domain = self._domain(document.domain)
        out = _Writer(document.code)
        self._cover(out, document, domain, rng)
        section = 4
        out.heading("4 Общие положения")
        for n in range(1, rng.randint(3, 6)):
            out.paragraph(f"4.{n} {self._prose(domain, rng, out)} {self._prose(domain, rng, out)}")
        props = rng.sample(domain["properties"], k=max(2, len(domain["properties"]) * 4 // 5))
        tables = rng.sample(domain.get("tables", []), k=min(2, len(domain.get("tables", []))))
        titles = rng.sample(domain["sections"], k=min(len(domain["sections"]), 4 + len(props) // 3))
        groups = [props[i :: len(titles)] for i in range(len(titles))]
        for title, group in zip(titles, groups, strict=True):
            section += 1
            out.heading(f"{section} {title}")
            clause = 0
            for prop in group:
                clause += 1
                self._subsection(out, document, domain, prop, f"{section}.{clause}", rng)
            if tables and rng.random() < 0.6:
                clause += 1
                self._table(out, document, domain, tables.pop(), f"{section}.{clause}", rng)
        for table in tables:
            section += 1
            out.heading(f"{section} Справочные данные")
            self._table(out, document, domain, table, f"{section}.1", rng)
        document.pages = out.texts()

    def _cover(
        self, out: _Writer, document: Document, domain: dict[str, Any], rng: random.Random
    ) -> None:
        name = {"sp": "СВОД ПРАВИЛ", "gost": "МЕЖГОСУДАРСТВЕННЫЙ СТАНДАРТ"}.get(
            document.kind, "СТРОИТЕЛЬНЫЕ НОРМЫ И ПРАВИЛА"
        )
        out.heading(name)
        out.heading(document.title.upper())
        out.heading("Издание официальное")
        day, month, year = rng.randint(1, 28), rng.randint(1, 12), rng.randint(13, 24)
        out.heading(f"Дата введения {day:02d}.{month:02d}.20{year}")
        out.heading("1 Область применения")
        subjects = rng.sample(domain["subjects"], k=3)
        what = "свод правил" if document.kind == "sp" else "стандарт"
        out.paragraph(
            f"1.1 Настоящий {what} распространяется на {subjects[0]['nom_pl']}, "
            f"{subjects[1]['nom_pl']} и {subjects[2]['nom_pl']} и устанавливает требования "
            "к их проектированию, устройству и приёмке."
        )
        out.paragraph(f"1.2 {self._prose(domain, rng, out)}")
        out.heading("2 Нормативные ссылки")
        out.paragraph(
            f"В настоящем {'своде правил' if document.kind == 'sp' else 'стандарте'} "
            "использованы нормативные ссылки на следующие документы:"
        )
        for other in rng.sample(self.documents, k=min(6, len(self.documents))):
            if other.code != document.code:
                out.paragraph(f"{other.code} {other.title}")
        out.heading("3 Термины и определения")
        out.paragraph(
            "В настоящем документе применены следующие термины с соответствующими определениями:"
        )
        for n, term in enumerate(
            rng.sample(domain["definitions"], k=min(8, len(domain["definitions"]))), 1
        ):
            out.paragraph(f"3.{n} {term['term']}: {term['text']}")

    def _subsection(
        self,
        out: _Writer,
        document: Document,
        domain: dict[str, Any],
        prop: dict[str, Any],
        number: str,
        rng: random.Random,
    ) -> None:
        out.heading(f"{number} {prop['nom'][0].upper()}{prop['nom'][1:]}")
        subjects = [s for s in domain["subjects"] if s["id"] in prop["subjects"]]
        conditions = [c for c in domain["conditions"] if c["id"] in prop["conditions"]]
        n = 0
        for subject in rng.sample(subjects, k=min(len(subjects), rng.randint(5, 9))):
            for condition in rng.sample(conditions, k=min(len(conditions), rng.randint(4, 7))):
                n += 1
                key = FactKey(domain["domain"], prop["id"], subject["id"], condition["id"])
                value = self._value(key, prop["values"], document.in_force)
                sentence = self._fill(
                    rng.choice(prop["clause"]),
                    domain, rng, out,
                    subject=subject, condition=condition["text"], ask=condition["ask"],
                    value=value, unit=prop.get("unit", ""),
                )  # fmt: skip
                extra = self._about(subject, domain, rng, out) if rng.random() < 0.4 else ""
                page = out.paragraph(f"{number}.{n} {sentence} {extra}".strip())
                self.facts.setdefault(
                    key,
                    Fact(key, self.values[key], prop.get("unit", ""), prop.get("bound", "exact")),
                )
                if document.in_force:
                    self.facts[key].sentence = self.facts[key].sentence or sentence
                self.places[key].append(
                    Place(document.code, "clause", f"{number}.{n}", page, document.in_force, value)
                )
            if rng.random() < 0.5:  # a requirement without a value between the values
                n += 1
                prose = " ".join(self._prose(domain, rng, out) for _ in range(rng.randint(1, 2)))
                out.paragraph(f"{number}.{n} {prose}")

    def _table(
        self,
        out: _Writer,
        document: Document,
        domain: dict[str, Any],
        table: dict[str, Any],
        number: str,
        rng: random.Random,
    ) -> None:
        label = number
        out.paragraph(
            f"{number} {table['title'][0].upper()}{table['title'][1:].split(',')[0]} "
            f"принимают по таблице {label}."
        )
        page = out.heading(f"Таблица {label} — {table['title']}")
        out.heading("   ".join(table["columns"]))
        for row_index, row in enumerate(table["rows"]):
            key = FactKey(domain["domain"], f"table:{table['title']}", str(row_index), "")
            value = " ".join(str(v) for v in row[1:])
            if not document.in_force and rng.random() < 0.5:
                value = " ".join(str(v) for v in row[1:][::-1]) if len(row) > 2 else value
            out.heading(f"{row[0]}   {value}")
            self.facts.setdefault(key, Fact(key, " ".join(str(v) for v in row[1:]), "", "exact"))
            self.places[key].append(
                Place(document.code, "table", label, page, document.in_force, value)
            )

    def _about(
        self, subject: dict[str, str], domain: dict[str, Any], rng: random.Random, out: _Writer
    ) -> str:
        """A requirement sentence that names `subject` (a clause's second sentence stays on
        its subject, as in a norm), or '' when the domain has none."""
        head = subject["nom"].split()[0][:5].lower()
        about = [t for t in domain["prose"] if head in t.lower() or "{subject" in t]
        if not about:
            return ""
        return self._fill(rng.choice(about), domain, rng, out, subject=subject)

    def _prose(
        self,
        domain: dict[str, Any],
        rng: random.Random,
        out: _Writer,
        *,
        subject: dict[str, str] | None = None,
    ) -> str:
        return self._fill(rng.choice(domain["prose"]), domain, rng, out, subject=subject)

    def _fill(
        self,
        template: str,
        domain: dict[str, Any],
        rng: random.Random,
        out: _Writer,
        *,
        subject: dict[str, str] | None = None,
        **values: str,
    ) -> str:
        def replace(match: re.Match[str]) -> str:
            name, form = match.group(1), match.group(2)
            if name == "subject":
                chosen = subject or rng.choice(domain["subjects"])
                return chosen[form or "nom"]
            if name == "ref":
                return f"{rng.randint(4, 9)}.{rng.randint(1, 6)}.{rng.randint(1, 9)}"
            if name == "doc":
                return rng.choice(self.documents).code
            if name == "table":
                return f"таблице {rng.randint(4, 9)}.{rng.randint(1, 5)}"
            if name in ("condition", "ask") and name not in values:
                condition = rng.choice(domain["conditions"])
                return str(condition["text" if name == "condition" else "ask"])
            return str(values.get(name, match.group(0)))

        return PLACEHOLDER.sub(replace, template)

    # --- questions -----------------------------------------------------------------------

    def questions(self, *, count: int = 100, traps: int = 20, seed: int = 7) -> list[Question]:
        """`count` questions on facts the built documents state, and `traps` on conditions
        none states (call after `build`)."""
        rng = random.Random(seed)
        share = {"no_document": 0.3, "code": 0.2, "alias": 0.2, "table": 0.2, "number": 0.1}
        asked: set[FactKey] = set()
        out: list[Question] = []
        for kind, part in share.items():
            made = 0
            while made < round(count * part):
                question = getattr(self, f"_ask_{kind}")(rng)
                if question is None or (question.fact and question.fact.key in asked):
                    continue
                if question.fact:
                    asked.add(question.fact.key)
                out.append(question)
                made += 1
        out += [self._ask_trap(rng) for _ in range(traps)]
        return out

    def _stated(self, rng: random.Random, *, table: bool) -> tuple[Fact, dict[str, Any]]:
        keys = [
            key
            for key, places in self.places.items()
            if key.prop.startswith("table:") == table and any(p.in_force for p in places)
        ]
        key = rng.choice(sorted(keys, key=lambda k: (k.domain, k.prop, k.subject, k.condition)))
        return self.facts[key], self._domain(key.domain)

    def _question(
        self, fact: Fact, domain: dict[str, Any], rng: random.Random, kind: str
    ) -> Question:
        prop = next(p for p in domain["properties"] if p["id"] == fact.key.prop)
        subject = next(s for s in domain["subjects"] if s["id"] == fact.key.subject)
        condition = next(c for c in domain["conditions"] if c["id"] == fact.key.condition)
        return self._on(prop, subject, condition, domain, rng, kind, fact)

    def _on(
        self,
        prop: dict[str, Any],
        subject: dict[str, str],
        condition: dict[str, str],
        domain: dict[str, Any],
        rng: random.Random,
        kind: str,
        fact: Fact | None,
    ) -> Question:
        fill = {"ask": condition["ask"], "condition": condition["text"]}
        writer = _Writer("q")
        text = self._fill(
            rng.choice(prop["question"]), domain, rng, writer, subject=subject, **fill
        )
        templates = list(rng.choice(prop["keywords"]))
        if not any("{subject" in k for k in templates):
            templates.insert(1, "{subject:nom_pl}")  # the question names it: so does a planner
        keywords = [self._fill(k, domain, rng, writer, subject=subject, **fill) for k in templates]
        places = [p for p in self.places.get(fact.key, []) if p.in_force] if fact else []
        value = (
            f"{BOUND.get(prop.get('bound', 'exact'), '')} {fact.value} {fact.unit}" if fact else ""
        )
        return Question(
            kind, text, keywords, [], places, " ".join(value.split()), fact, subject,
            condition["text"], condition["ask"], prop,
        )  # fmt: skip

    def _ask_no_document(self, rng: random.Random) -> Question | None:
        fact, domain = self._stated(rng, table=False)
        return self._question(fact, domain, rng, "no_document")

    def _narrowed(self, question: Question, rng: random.Random) -> str:
        """One document stating the question's fact: its code; the answers narrowed to it."""
        code = rng.choice(sorted({p.code for p in question.answers}))
        question.answers = [p for p in question.answers if p.code == code]
        return code

    def _ask_code(self, rng: random.Random) -> Question | None:
        fact, domain = self._stated(rng, table=False)
        question = self._question(fact, domain, rng, "code")
        code = self._narrowed(question, rng)
        question.text = f"{question.text.rstrip('?')} по {code}?"
        question.expected_documents = [code]
        return question

    def _ask_alias(self, rng: random.Random) -> Question | None:
        fact, domain = self._stated(rng, table=False)
        question = self._question(fact, domain, rng, "alias")
        code = self._narrowed(question, rng)
        alias = short_name(code, rng)
        question.text = f"{question.text.rstrip('?')} по {alias}?"
        if rng.random() < 0.5:
            question.expected_documents = [alias]
        else:
            question.keywords = [*question.keywords, alias]
        return question

    def _ask_table(self, rng: random.Random) -> Question | None:
        fact, domain = self._stated(rng, table=True)
        title = fact.key.prop.removeprefix("table:")
        table = next(t for t in domain["tables"] if t["title"] == title)
        row = int(fact.key.subject)
        ask = table["row_ask"][row]
        text = table["question"].replace("{row_ask}", ask)
        places = [p for p in self.places[fact.key] if p.in_force]
        keywords = [title.split(",")[0], ask]
        if "таблиц" in text:
            keywords.append("таблица")  # the question asks for a table: so does a planner
        in_force = frozenset(d.code for d in self.documents if d.in_force)
        return Question(
            "table", text, keywords, [], places, fact.value, fact,
            {}, table["rows"][row][0], ask, {"nom": title}, in_force,
        )  # fmt: skip

    def _ask_number(self, rng: random.Random) -> Question | None:
        fact, domain = self._stated(rng, table=False)
        question = self._question(fact, domain, rng, "number")
        code = self._narrowed(question, rng)
        [place] = question.answers[:1]
        question.text = f"Что устанавливает п. {place.number} {code}?"
        question.keywords = [f"п. {place.number}"]
        question.expected_documents = [code]
        return question

    def _ask_trap(self, rng: random.Random) -> Question:
        domain = rng.choice(self.domains)
        props = [p for p in domain["properties"] if p.get("trap_conditions")]
        prop = rng.choice(props)
        chosen = rng.choice(prop["subjects"])
        subject = next(s for s in domain["subjects"] if s["id"] == chosen)
        trap = rng.choice(prop["trap_conditions"])
        return self._on(prop, subject, trap, domain, rng, "trap", None)


def short_name(code: str, rng: random.Random) -> str:
    """A short name people give a document: «СП 63», «сп63», «63.13330», «ГОСТ 10180»."""
    kind, number = code.split(" ", 1)
    if kind == "СП":
        first, series = number.split(".")[:2]
        return rng.choice([f"СП {first}", f"сп{first}", f"{first}.{series}"])
    if kind == "ГОСТ":
        return f"ГОСТ {number.split('-')[0]}"
    return f"{kind} {number.rsplit('-', 1)[0]}"
