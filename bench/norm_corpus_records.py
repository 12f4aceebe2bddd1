"""What a norms corpus of `bench/norm_corpus.py` is made of, and what its questions
(`bench/norm_corpus_questions.py`) ask about: facts and the places that state them,
documents, questions with their answers, and the writer that flows a document's lines into
pages as a PDF's text layer reads."""

from __future__ import annotations

import random
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

WORDS_PER_PAGE = 400
LINE_CHARS = 95
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


class PageWriter:
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
