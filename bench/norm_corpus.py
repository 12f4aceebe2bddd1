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

Questions (`questions`, bench/norm_corpus_questions.py) ask for a fact: naming no document,
naming it by code, by a short name (alias), asking a row of a table, or naming the clause
by number; traps ask for a condition no clause states. Each carries the keywords a planner
would search with.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from bench.norm_corpus_questions import CorpusQuestions
from bench.norm_corpus_records import Document, Fact, FactKey, PageWriter, Place

DATA = Path(__file__).resolve().parent / "norm_corpus"
REPLACED_SHARE = 0.1
PLACEHOLDER = re.compile(r"\{(\w+)(?::(\w+))?\}")


def domains_load(directory: Path = DATA) -> list[dict[str, Any]]:
    return [yaml.safe_load(path.read_text()) for path in sorted(directory.glob("*.yaml"))]


class CorpusBuilder(CorpusQuestions):
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
        out = PageWriter(document.code)
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
        self, out: PageWriter, document: Document, domain: dict[str, Any], rng: random.Random
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
        out: PageWriter,
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
        out: PageWriter,
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
        self, subject: dict[str, str], domain: dict[str, Any], rng: random.Random, out: PageWriter
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
        out: PageWriter,
        *,
        subject: dict[str, str] | None = None,
    ) -> str:
        return self._fill(rng.choice(domain["prose"]), domain, rng, out, subject=subject)

    def _fill(
        self,
        template: str,
        domain: dict[str, Any],
        rng: random.Random,
        out: PageWriter,
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
