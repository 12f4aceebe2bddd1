"""Checking an answer against the norms: every claim against the text of the clause it cites.

A claim is a sentence of the answer that cites a clause or a table, states a value, a
class or a quote. Each reference is resolved to the clause in the corpus — the document
named beside it (by code or alias), else the one the answer's sources or the run's pages
give for that number — and the claim holds only when:

- every value with its unit, every class and every quoted phrase is in the text of a
  clause it cites (numbers compared as numbers, units converted, bounds kept: «не менее
  20 мм» is not «не более 20 мм»);
- where the clause gives several values of a value's kind for several conditions, the value
  is the one it gives for the claim's (`conditions`): «2,7 м» of «в подрайонах IА…, а в
  других — 2,5 м» is not the height «в средней полосе»;
- the page the sources give for the clause is the page it is on;
- every telling word of the claim (one the corpus seldom uses) is in the clause, its
  headings, its document's title or what a reader reads beside it (`wording`: the clause
  pointing to a cited table, the document's scope): «бассейн» said of a clause about slabs
  in general is not what the clause says;
- a grade a cited table gives as a number under its letter («морозостойкости F» / «75») is
  the one given for the claim's row and column.

A claim without a reference of its own is checked against the clauses cited in its
paragraph, then against the answer's sources. A failed check says why: which value the
clause holds instead, for which condition it gives the claimed value, that the value is not
in the clause's text but on its page beside it (a table the reader broke), that the clause or
document is missing, which words it lacks; and of what kind (`ClaimResult.details["problem"]`,
what a benchmark counts: "value_missing", "value_on_page", "other_condition", …). The
results, and the answer marked with them, are `normagpt.claim_results`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any, NamedTuple

from django.db.models import Q
from django.utils import timezone

from normagpt import claims as c
from normagpt.claim_results import CONFIRMED, UNCONFIRMED, ClaimResult
from normagpt.conditions import class_names, value_condition
from normagpt.conditions.graded import grade_condition
from normagpt.conditions.table_heads import units_named
from normagpt.editions import clause_marks
from normagpt.models import NormAmendment, NormClause, NormPage, NormTerm
from normagpt.parsing import clause_label, code_matches
from normagpt.search import documents_named
from normagpt.terms import ALL_CLAUSES
from normagpt.units import unit_read
from normagpt.wording import far_end, pointed, says_something, words_absent


class _Problem(NamedTuple):
    """Why a claim is not confirmed: its kind (what a benchmark counts) and its words."""

    kind: str  # "value_missing", "value_on_page", "other_condition", "opposite_bound", …
    reason: str


@dataclass
class _Cited:
    """A resolved reference: the clause (a table, or a section's clauses joined)."""

    clauses: list[NormClause]
    reference: c.Reference

    @property
    def first(self) -> NormClause:
        return self.clauses[0]

    @functools.cached_property
    def tables(self) -> list[str]:
        """The texts of the tables its clauses point to (`wording.pointed`): read for the
        claim's words and for the classes they name, looked up once."""
        return pointed(self.clauses)

    @property
    def text(self) -> str:
        return "\n".join(clause.text for clause in self.clauses)

    @property
    def label(self) -> str:
        clause = self.first
        table = self.reference.kind == "table"
        return f"{clause_label(self.reference.number, table=table)} {clause.document.code}"


class Checker:
    """Checks claims of one run: its sources and retrieved pages give documents to
    references that name none."""

    def __init__(
        self,
        *,
        sources: Iterable[dict[str, Any]],
        pages: Iterable[dict[str, Any]],
        as_of: date | None = None,
    ):
        self.sources = list(sources)
        self.day = as_of or timezone.localdate()  # a clause's text is the one holding then
        self.context_codes = list(
            dict.fromkeys(
                [s.get("document", "") for s in self.sources]
                + [p.get("document", "") for p in pages]
            )
        )
        self._documents: dict[str, list[int]] = {}
        self._weights: dict[str, float] = {}
        self._total = 0

    # --- answers -------------------------------------------------------------------------

    def answer(self, text: str, *, origin: str = "answer", start: int = 0) -> list[ClaimResult]:
        """The claims of `text`, each checked; sentences that claim nothing are left out."""
        results: list[ClaimResult] = []
        for paragraph in _paragraphs(c.tables_read(text)):
            sentences = c.sentences_split(paragraph)
            cited = [r for s in sentences for r in c.references_find(s)]
            for sentence in sentences:
                result = self.claim(sentence, cited, start + len(results), origin)
                if result is not None:
                    results.append(result)
        return results

    def claim(
        self, sentence: str, nearby: list[c.Reference], index: int, origin: str
    ) -> ClaimResult | None:
        references = c.references_find(sentence)
        stated = c.said(sentence)
        if not references and not (stated.values or stated.grades or stated.quotes):
            return None
        result = ClaimResult(index, origin, sentence, UNCONFIRMED)
        if references:
            cited, failures = self._resolve_all(references)
            if failures:
                return self._failed(result, failures, references[0])
            if not (stated.values or stated.grades or stated.quotes or says_something(sentence)):
                # a pointer («Это требование п. 5.7 СП 54…», «Подробнее см. …»): it says
                # only that the clause exists, which is no check of an answer; it cites for
                # its paragraph's claims (`_inherited`)
                return None
        else:
            cited = self._inherited(nearby, stated)
            if not cited:
                result.reason = "не указан пункт, которым подтверждается это утверждение"
                result.details = {"problem": "reference_none", "problems": ["reference_none"]}
                return result
        return self._compare(result, sentence, stated, cited)

    def findings(self, findings: Iterable[dict[str, Any]], start: int = 0) -> list[ClaimResult]:
        """The executor's quotes, each against the clause and page it names."""
        results = []
        for index, finding in enumerate(findings, start=start):
            quote = str(finding.get("quote") or "").strip()
            clause = str(finding.get("clause") or "").strip()
            where = f"{clause_label(clause)}, стр. {finding.get('page')}"
            claim = f"{finding.get('document', '')} {where}: «{quote}»"
            result = ClaimResult(index, "finding", claim, UNCONFIRMED)
            document = str(finding.get("document", ""))
            tables = [r for r in c.references_find(clause) if r.kind == "table"]
            reference = (  # «табл. 5.1», «таблица 5.1»: the table; else a clause's number
                c.Reference("table", tables[0].number, document, clause)
                if tables
                else c.Reference("clause", clause, document, clause)
            )
            if not clause:
                result.reason = "в находке не указан пункт"
                results.append(result)
                continue
            cited, failures = self._resolve_all([reference], page=finding.get("page"))
            if failures:
                results.append(self._failed(result, failures, reference))
                continue
            stated = c.Said(c.values_find(quote), c.grades_find(quote), [quote] if quote else [])
            results.append(self._compare(result, claim, stated, cited, terms=False))
        return results

    # --- resolving -----------------------------------------------------------------------

    def _resolve_all(
        self, references: list[c.Reference], page: Any = None
    ) -> tuple[list[_Cited], list[_Problem]]:
        cited: list[_Cited] = []
        failures: list[_Problem] = []
        for reference in references:
            found = self._resolve(reference)
            if isinstance(found, _Problem):
                failures.append(found)
                continue
            wrong_page = self._page_wrong(found, page)
            if wrong_page:
                failures.append(_Problem("page_wrong", wrong_page))
            cited.append(found)
        return cited, failures

    def _resolve(self, reference: c.Reference) -> _Cited | _Problem:
        """The clause `reference` names, or why it cannot be found."""
        what = "таблицы" if reference.kind == "table" else "пункта"
        if reference.document:
            documents = self._named(reference.document)
            if not documents:
                return _Problem("document_missing", f"документа {reference.document} нет в корпусе")
        else:
            documents = self._context_documents(reference)
        clauses = self._clauses(documents, reference)
        if not clauses:
            where = f"в {reference.document}" if reference.document else "в документах ответа"
            return _Problem("clause_missing", f"{what} {reference.number} нет {where}")
        by_document: dict[int, list[NormClause]] = {}
        for clause in clauses:
            by_document.setdefault(clause.document_id, []).append(clause)
        if len(by_document) > 1:
            in_force = {
                d: found
                for d, found in by_document.items()
                if found[0].document.in_force_on(self.day)  # the edition of the answer's day
            }
            by_document = in_force if len(in_force) == 1 else by_document
        if len(by_document) > 1:
            codes = ", ".join(sorted(found[0].document.code for found in by_document.values()))
            several = f"{what} {reference.number} есть в нескольких документах ({codes})"
            return _Problem("clause_ambiguous", f"{several}: не указан какой")
        return _Cited(next(iter(by_document.values())), reference)

    def _named(self, name: str) -> list[int]:
        if name not in self._documents:
            self._documents[name] = documents_named([name])
        return self._documents[name]

    def _context_documents(self, reference: c.Reference) -> list[int]:
        """Documents for a number named without one: the sources citing that number, else
        the answer's sources and the run's pages."""
        citing = [
            s["document"]
            for s in self.sources
            if str(s.get("clause") or "").strip() == reference.number
        ]
        names = citing or self.context_codes
        return sorted({d for name in names if name for d in self._named(name)})

    def _clauses(self, documents: list[int], reference: c.Reference) -> list[NormClause]:
        if not documents:
            return []
        qs = NormClause.objects.select_related("document", "page").filter(
            Q(valid_from=None) | Q(valid_from__lte=self.day),
            Q(valid_to=None) | Q(valid_to__gt=self.day),
            document_id__in=documents,
            kind=reference.kind,
        )
        exact = list(qs.filter(number__iexact=reference.number).order_by("document_id"))
        if exact or reference.kind == "table":
            return exact
        # a section or subsection cited («п. 10.3»): its clauses together
        return list(
            qs.filter(number__istartswith=f"{reference.number}.").order_by(
                "document_id", "position"
            )
        )

    def _page_wrong(self, cited: _Cited, page: Any = None) -> str:
        """Why the page cited for the clause is not its page ('' when it is, or none is)."""
        if page is None:
            page = next(
                (
                    s.get("page")
                    for s in self.sources
                    if str(s.get("clause") or "").strip() == cited.reference.number
                    and code_matches(str(s.get("document", "")), cited.first.document.code)
                ),
                None,
            )
        if page is None:
            return ""
        pages = _pages_of(cited)
        if int(page) in pages:
            return ""
        where = ", ".join(str(n) for n in sorted(pages))
        return f"{cited.label} не на стр. {page}: он на стр. {where}"

    def _inherited(self, nearby: list[c.Reference], stated: c.Said) -> list[_Cited]:
        """For a claim citing nothing: the clause cited in its paragraph, or among the
        answer's sources, that holds most of what it states."""
        candidates = list(nearby)
        candidates += [
            c.Reference("clause", str(s.get("clause") or ""), str(s.get("document", "")), "")
            for s in self.sources
            if s.get("clause")
        ]
        best: list[_Cited] = []
        best_held = -1
        for reference in dict.fromkeys(candidates):
            found = self._resolve(reference)
            if isinstance(found, _Problem):
                continue
            held = sum(bool(c.value_held(v, c.values_find(found.text))) for v in stated.values)
            held += sum(c.quote_held(q, found.text) for q in stated.quotes)
            if held > best_held:
                best, best_held = [found], held
        return best

    # --- comparing -----------------------------------------------------------------------

    def _compare(
        self,
        result: ClaimResult,
        sentence: str,
        stated: c.Said,
        cited: list[_Cited],
        *,
        terms: bool = True,
    ) -> ClaimResult:
        first = cited[0].first
        result.reference = "; ".join(x.reference.text or x.label for x in cited)[:200]
        result.document_code = first.document.code
        result.clause_number = cited[0].reference.number
        result.page_number = first.page.number
        result.clause_id, result.page_id = first.pk, first.page_id
        text = "\n".join(x.text for x in cited)
        held = c.values_find(text)
        missing, problems = _values_missing(stated.values, held, cited)
        problems += _condition_problems(
            sentence, [v for v in stated.values if v not in missing], cited
        )
        grades = c.grades_find(text)
        problems += [
            problem
            for grade in stated.grades
            if not c.grade_held(grade, grades)
            and (problem := _grade_problem(sentence, grade, cited)) is not None
        ]
        for quote in stated.quotes:
            if not c.quote_held(quote, text):
                problems.append(
                    _Problem("quote_missing", f"в {cited[0].label} нет цитаты «{quote[:120]}»")
                )
        absent = self._absent_words(sentence, cited) if terms else []
        if absent:
            words = ", ".join(f"«{w}»" for w in absent[:5])
            problems.append(_Problem("words_absent", f"{cited[0].label} не говорит о {words}"))
        if terms:
            held_lengths = [v for v in stated.values if v not in missing]
            problems += _distance_problems(sentence, held_lengths, text, cited[0].label)
        result.details = {
            "values": [c.value_text(v) for v in stated.values],
            "clause_values": [c.value_text(v) for v in held][:20],
            "missing_values": [c.value_text(v) for v in missing],
            "missing_words": absent,
            "clauses": [
                {"document": x.first.document.code, "number": x.reference.number, "page": p}
                for x in cited
                for p in sorted(_pages_of(x))[:1]
            ],
        }
        marks = self._marks(cited)
        if marks:  # the text read is one an amendment in force changes, its change unmade
            problems += [_Problem("amendment_mark", mark) for mark in marks]
            result.details["amendment_marks"] = marks
        result.details |= _problems_details(problems)
        result.verdict = UNCONFIRMED if problems else CONFIRMED
        result.reason = "; ".join(p.reason for p in problems)[:2000]
        return result

    def _marks(self, cited: list[_Cited]) -> list[str]:
        """The marks of the cited clauses an amendment in force on the check's day names but
        could not change (`editions.clause_marks`): their text here may not hold then."""
        documents = {x.first.document_id for x in cited}
        amended = NormAmendment.objects.filter(
            document_id__in=documents, in_force_from__lte=self.day
        )
        if not amended.exists():  # most documents: no query per clause
            return []
        marks = []
        for x in cited:
            clause = x.first
            found = clause_marks(
                document_id=clause.document_id, numbers=[clause.number], day=self.day,
                kind=clause.kind,
            )  # fmt: skip
            marks += [f"{x.label}: {mark}" for mark in found.values()]
        return marks

    def _failed(
        self, result: ClaimResult, failures: list[_Problem], reference: c.Reference
    ) -> ClaimResult:
        result.reason = "; ".join(f.reason for f in failures)[:2000]
        result.details = _problems_details(failures)
        result.reference = reference.text[:200]
        result.document_code = reference.document[:100]
        result.clause_number = reference.number[:40]
        return result

    def _absent_words(self, sentence: str, cited: list[_Cited]) -> list[str]:
        """The claim's telling words that nothing a reader reads with the cited clauses holds
        (`wording.words_absent`)."""
        clauses = [clause for x in cited for clause in x.clauses]
        tables = [text for x in cited for text in x.tables]
        return words_absent(sentence, clauses, self._shares, tables=tables)

    def _shares(self, stems: set[str]) -> dict[str, float]:
        counts = dict(
            NormTerm.objects.filter(term__in=[*stems, ALL_CLAUSES]).values_list("term", "clauses")
        )
        total = max(1, counts.pop(ALL_CLAUSES, 0))
        return {stem: counts.get(stem, 0) / total for stem in stems}


def _paragraphs(text: str) -> list[str]:
    """Blocks of the answer: paragraphs and list items (a claim's neighbours)."""
    blocks: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        lines = block.splitlines()
        if any(re.match(r"\s*(?:[-*•]|\d+[.)])\s", line) for line in lines):
            blocks += [line for line in lines if line.strip()]
        elif block.strip():
            blocks.append(block)
    return blocks


def _pages_of(cited: _Cited) -> set[int]:
    """The pages the cited clause is on: where it begins, and the next when it runs on."""
    pages = {clause.page.number for clause in cited.clauses}
    for clause in cited.clauses:
        if clause.end >= len(clause.page.text.rstrip()) - 40:
            pages.add(clause.page.number + 1)
    return pages


def _value_problem(value: c.Value, held: list[c.Value], cited: list[_Cited]) -> _Problem:
    """Why `value` is not in the cited clauses: they state it with the opposite bound; it is
    on their page beside them (a table the reader broke: a right answer, unconfirmed); or
    it is nowhere there, and what they hold instead."""
    label = cited[0].label
    opposite = c.opposite_bound(value, held)
    if opposite is not None:
        reason = f"в {label}: {c.value_text(opposite)}, а не {c.value_text(value)}"
        return _Problem("opposite_bound", reason)
    near = _page_near(value, cited)
    if near is not None:
        page, broken = near
        return _Problem(
            "value_on_page",
            f"значения {c.value_text(value)} нет в тексте {label}, но оно есть на стр. {page} "
            f"рядом с ним: возможно, {broken} при чтении — проверьте по странице",
        )
    same = [v for v in held if v.dimension == value.dimension and (v.unit or not value.unit)]
    listed = ", ".join(dict.fromkeys(c.value_text(v) for v in same[:6]))
    instead = f"; в пункте: {listed}" if listed else ""
    return _Problem("value_missing", f"значения {c.value_text(value)} нет в {label}{instead}")


def _values_missing(
    values: list[c.Value], held: list[c.Value], cited: list[_Cited]
) -> tuple[list[c.Value], list[_Problem]]:
    """The claim's values the cited texts do not hold, or hold only as a bare number of
    another quantity (`_other_quantities`), each with why."""
    missing = [v for v in values if c.value_held(v, held) is None]
    problems = [_value_problem(v, held, cited) for v in missing]
    for value, problem in _other_quantities(values, held, cited):
        missing.append(value)
        problems.append(problem)
    return missing, problems


def _other_quantities(
    values: list[c.Value], held: list[c.Value], cited: list[_Cited]
) -> list[tuple[c.Value, _Problem]]:
    """The claim's values in a unit that a cited table holds only as a bare number in a
    column of another quantity: its heading names the units of its cells («Уклон кровли, %
    (град)*»), and «20 лет» is not the «Не менее 20» of a slope. What the units are made of
    and how they are written are compared, not their powers (the texts lose superscripts:
    «м» for «м²»; `Unit.alike`). Only when every cited text is a table naming units."""
    if not all(x.first.kind == NormClause.Kind.TABLE for x in cited):
        return []
    named = [unit for x in cited for unit in units_named(x.text)]
    if not named:
        return []
    out = []
    for value in values:
        matches = [other for other in held if c.value_held(value, [other])]
        unit = unit_read(value.unit) if value.unit else None
        if not matches or any(other.unit for other in matches) or unit is None:
            continue  # held with a unit somewhere: compared as a quantity already
        match = matches[0]
        if not any(unit.alike(other) for other in named):
            units = ", ".join(dict.fromkeys(other.text for other in named))
            reason = (
                f"в {cited[0].label} {match.text} — в {units}; «{value.text}» — другая величина"
            )
            out.append((value, _Problem("value_missing", reason)))
    return out


NEAR_BEFORE, NEAR_AFTER = 300, 1500  # how near a clause on its pages a value counts as beside it


def _page_near(value: c.Value, cited: list[_Cited]) -> tuple[int, str] | None:
    """The page on which `value` stands beside a cited clause (from a little before it to
    well after it, on to the head of the next page when it runs on), and what the reader
    may have broken there; None when it is not beside any."""
    for x in cited:
        for clause in x.clauses:
            start, end = max(0, clause.start - NEAR_BEFORE), clause.end + NEAR_AFTER
            places = [(clause.page, clause.page.text[start:end])]
            if clause.span or clause.end >= len(clause.page.text.rstrip()) - 40:
                places += [
                    (page, page.text[:NEAR_AFTER])
                    for page in NormPage.objects.filter(
                        document_id=clause.document_id, number=clause.page.number + 1
                    )
                ]
            for page, text in places:
                if c.value_held(value, c.values_find(text)) is not None:
                    table = clause.kind == NormClause.Kind.TABLE
                    return page.number, "таблица разбита" if table else "текст пункта разбит"
    return None


def _condition_problems(
    sentence: str, values: list[c.Value], cited: list[_Cited]
) -> list[_Problem]:
    """The claim's values the cited clauses give only for another condition than the
    claim's (`conditions.value_condition`)."""
    clauses = [clause for x in cited for clause in x.clauses]
    labels = [x.label for x in cited for _ in x.clauses]
    texts = [(clause.text, clause.kind == NormClause.Kind.TABLE) for clause in clauses]
    named = class_names([text for x in cited for text in x.tables]) if values else {}
    problems = []
    for value in values:
        mismatch = value_condition(sentence, value, texts, named=named)
        if mismatch is not None:
            problems.append(_Problem("other_condition", mismatch.reason(labels[mismatch.source])))
    return problems


def _distance_problems(
    sentence: str, values: list[c.Value], text: str, label: str
) -> list[_Problem]:
    """The claim's length the cited text gives for a distance to something the claim does
    not name (`wording.far_end`)."""
    lengths = [v for v in values if v.dimension == "length"]
    if not lengths or not (end := far_end(sentence, text, lengths[0])):
        return []
    reason = f"{label} даёт {c.value_text(lengths[0])} для расстояния до «{end}»"
    return [_Problem("other_condition", reason)]


def _grade_problem(sentence: str, grade: c.Grade, cited: list[_Cited]) -> _Problem | None:
    """Why a grade the cited clauses do not write is not confirmed: a table gives it as a
    number under its letter («морозостойкости F»: «75») for another condition, or it is
    nowhere there; None when such a table gives it for the claim's."""
    clauses = [clause for x in cited for clause in x.clauses]
    labels = [x.label for x in cited for _ in x.clauses]
    texts = [(clause.text, clause.kind == NormClause.Kind.TABLE) for clause in clauses]
    held, mismatch = grade_condition(sentence, grade, texts)
    if mismatch is not None:
        instead = ", ".join(dict.fromkeys(f"{grade.kind}{v.number:g}" for v in mismatch.instead))
        reason = f"в {labels[mismatch.source]} {grade.text} — для «{mismatch.given_for}»"
        return _Problem("other_condition", f"{reason}; для условия утверждения: {instead}")
    return None if held else _Problem("grade_missing", f"в {cited[0].label} нет «{grade.text}»")


def _problems_details(problems: list[_Problem]) -> dict[str, Any]:
    """The kinds of a claim's problems as `ClaimResult.details` keeps them: the first as
    "problem", all as "problems" (nothing when there is none)."""
    if not problems:
        return {}
    return {"problem": problems[0].kind, "problems": [p.kind for p in problems]}
