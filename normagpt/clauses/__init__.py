"""Splitting a document's pages into clauses (pure functions, no I/O).

A norm is numbered: sections («10 Конструктивные требования»), subsections («10.3
Требования к толщине защитного слоя бетона») and clauses («10.3.2 Минимальную толщину …»),
with tables («Таблица 5.1 — …») and appendices («Приложение А») between them. A clause runs
from its number to the next part, across pages if need be (it knows how many); the headings
above it make its heading path. A table is a unit of its own: its caption and every row, each
cell kept. Front matter (a cover, the preface, the table of contents, an introduction) and
what the reader could not number are kept page by page as unnumbered text. Running headers,
footers and page numbers are left out (`lines`); how numbers follow each other and what opens
a part are in `numbers`; the reading itself in `reader`. A law is numbered by its articles
instead: `articles` reads it.
"""

from __future__ import annotations

from normagpt.clauses.articles import law_like, law_read
from normagpt.clauses.lines import boilerplate_lines, document_lines
from normagpt.clauses.numbers import number_key
from normagpt.clauses.reader import Clause, Heading, Reader, Structure

__all__ = [
    "Clause",
    "Heading",
    "Structure",
    "boilerplate_lines",
    "clauses_split",
    "document_read",
    "number_key",
]


def document_read(pages: list[str]) -> Structure:
    """The units and headings of a document whose pages' texts are `pages` (a law's by its
    articles)."""
    lines = document_lines(pages)
    return law_read(lines) if law_like(lines) else Reader(lines).run()


def clauses_split(pages: list[str]) -> list[Clause]:
    """The clauses, tables and unnumbered text of a document whose pages' texts are
    `pages`, in order (see the module's docstring)."""
    return document_read(pages).units
