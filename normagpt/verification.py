"""Checking an answer against the norms: every claim against the text of the clause it cites.

A claim is a sentence of the answer that cites a clause or a table, states a value, a
class or a quote. Each reference is resolved to the clause in the corpus — the document
named beside it (by code or alias), else the one the answer's sources or the run's pages
give for that number — and the claim holds only when:

- every value with its unit, every class and every quoted phrase is in the text of a
  clause it cites (numbers compared as numbers, units converted, bounds kept: «не менее
  20 мм» is not «не более 20 мм»);
- the page the sources give for the clause is the page it is on;
- every telling word of the claim (one the corpus seldom uses) is in the clause, its
  headings or its document's title: «бассейн» said of a clause about slabs in general is
  not what the clause says.

A claim without a reference of its own is checked against the clauses cited in its
paragraph, then against the answer's sources. A failed check says why: which value the
clause holds instead, that the clause or document is missing, which words it lacks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.db.models import Q
from django.utils import timezone

from normagpt import claims as c
from normagpt.editions import clause_marks
from normagpt.indexing import ALL_CLAUSES
from normagpt.models import NormAmendment, NormClause, NormTerm
from normagpt.parsing import code_matches, search_stems, stems_related
from normagpt.search import documents_named

CONFIRMED, UNCONFIRMED = "confirmed", "unconfirmed"
RARE_SHARE = 0.05  # a claim's word held by fewer clauses than this share tells what it is about
# words of an answer about norms, not of what a norm says (stemmed on first use: the
# stemmer stays off the MCP server's start-up)
GENERIC_WORDS = """требование требования норма нормы пункт пункта пункте документ документа согласно
        соответствии значение значения величина принимать принимается принимают следует
        необходимо нужно требуется должна должен должно должны допускается составляет
        указано указанный установлено устанавливает предусматривать обеспечивать ответ
        вопрос случае случаях также таблица таблице таблицы данным данные свод правил
        стандарт применяется применять является являются мин макс минимальный максимальный
        минимальная максимальная минимальное максимальное условие условия более менее
        ниже выше больше меньше также который которая которые которых этого этой этом этих
        только может могут быть было были будет если чтобы этот эта этих всех всего своих
        здесь тогда поэтому однако например именно равна равен равно составлять"""


@functools.cache
def generic() -> frozenset[str]:
    return frozenset(search_stems(GENERIC_WORDS))


@dataclass
class ClaimResult:
    """One checked claim (what `ClaimCheck` stores)."""

    index: int
    origin: str
    claim: str
    verdict: str
    reason: str = ""
    reference: str = ""
    document_code: str = ""
    clause_number: str = ""
    page_number: int | None = None
    clause_id: int | None = None
    page_id: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def confirmed(self) -> bool:
        return self.verdict == CONFIRMED

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "origin": self.origin,
            "claim": self.claim,
            "verdict": self.verdict,
            "reason": self.reason,
            "reference": self.reference,
            "document": self.document_code,
            "clause": self.clause_number,
            "page": self.page_number,
            "clause_id": self.clause_id,
            "page_id": self.page_id,
            "details": self.details,
        }


@dataclass
class _Cited:
    """A resolved reference: the clause (a table, or a section's clauses joined)."""

    clauses: list[NormClause]
    reference: c.Reference

    @property
    def first(self) -> NormClause:
        return self.clauses[0]

    @property
    def text(self) -> str:
        return "\n".join(clause.text for clause in self.clauses)

    @property
    def label(self) -> str:
        clause = self.first
        what = "табл." if self.reference.kind == "table" else "п."
        return f"{what} {self.reference.number} {clause.document.code}"


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
        for paragraph in _paragraphs(text):
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
        else:
            cited = self._inherited(nearby, stated)
            if not cited:
                result.reason = "не указан пункт, которым подтверждается это утверждение"
                return result
        return self._compare(result, sentence, stated, cited)

    def findings(self, findings: Iterable[dict[str, Any]], start: int = 0) -> list[ClaimResult]:
        """The executor's quotes, each against the clause and page it names."""
        results = []
        for index, finding in enumerate(findings, start=start):
            quote = str(finding.get("quote") or "").strip()
            clause = str(finding.get("clause") or "").strip()
            claim = (
                f"{finding.get('document', '')} п. {clause}, стр. {finding.get('page')}: «{quote}»"
            )
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
    ) -> tuple[list[_Cited], list[str]]:
        cited, failures = [], []
        for reference in references:
            found = self._resolve(reference)
            if isinstance(found, str):
                failures.append(found)
                continue
            wrong_page = self._page_wrong(found, page)
            if wrong_page:
                failures.append(wrong_page)
            cited.append(found)
        return cited, failures

    def _resolve(self, reference: c.Reference) -> _Cited | str:
        """The clause `reference` names, or why it cannot be found."""
        what = "таблицы" if reference.kind == "table" else "пункта"
        if reference.document:
            documents = self._named(reference.document)
            if not documents:
                return f"документа {reference.document} нет в корпусе"
        else:
            documents = self._context_documents(reference)
        clauses = self._clauses(documents, reference)
        if not clauses:
            where = f"в {reference.document}" if reference.document else "в документах ответа"
            return f"{what} {reference.number} нет {where}"
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
            return (
                f"{what} {reference.number} есть в нескольких документах ({codes}): не указан какой"
            )
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
            if isinstance(found, str):
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
        held = c.values_find(_rows_named(sentence, stated, cited) or text)
        problems: list[str] = []
        missing = [v for v in stated.values if c.value_held(v, held) is None]
        for value in missing:
            problems.append(_value_problem(value, held, cited))
        grades = c.grades_find(text)
        for grade in stated.grades:
            if not c.grade_held(grade, grades):
                problems.append(f"в {cited[0].label} нет «{grade.text}»")
        for quote in stated.quotes:
            if not c.quote_held(quote, text):
                problems.append(f"в {cited[0].label} нет цитаты «{quote[:120]}»")
        absent = self._absent_words(sentence, cited) if terms else []
        if absent:
            words = ", ".join(f"«{w}»" for w in absent[:5])
            problems.append(f"{cited[0].label} не говорит о {words}")
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
            problems += marks
            result.details["amendment_marks"] = marks
        result.verdict = UNCONFIRMED if problems else CONFIRMED
        result.reason = "; ".join(problems)[:2000]
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
        self, result: ClaimResult, failures: list[str], reference: c.Reference
    ) -> ClaimResult:
        result.reason = "; ".join(failures)[:2000]
        result.reference = reference.text[:200]
        result.document_code = reference.document[:100]
        result.clause_number = reference.number[:40]
        return result

    def _absent_words(self, sentence: str, cited: list[_Cited]) -> list[str]:
        """The claim's telling words that neither the clauses, their headings nor their
        documents' titles hold (as written in the claim)."""
        bare = c.masked_text(sentence)
        words = [w for w in re.findall(r"[а-яёa-z]{4,}", bare.lower()) if len(w) >= 4]
        stems = {w: s for w in words if (s := search_stems(w)) and s[0] not in generic()}
        source = " ".join(
            f"{clause.heading} {clause.text} {clause.document.title}"
            for x in cited
            for clause in x.clauses
        )
        held = set(search_stems(source))
        absent = {
            word: stem[0]
            for word, stem in stems.items()
            if not any(stems_related(stem[0], h) for h in held)
        }
        if not absent:
            return []
        share = self._shares(set(absent.values()))
        return [word for word, stem in absent.items() if share.get(stem, 0.0) <= RARE_SHARE]

    def _shares(self, stems: set[str]) -> dict[str, float]:
        counts = dict(
            NormTerm.objects.filter(term__in=[*stems, ALL_CLAUSES]).values_list("term", "clauses")
        )
        total = max(1, counts.pop(ALL_CLAUSES, 0))
        return {stem: counts.get(stem, 0) / total for stem in stems}


def _rows_named(sentence: str, stated: c.Said, cited: list[_Cited]) -> str:
    """Of the tables cited, the rows the claim names (by a quote of the row, or by the
    words of its label), with their titles: a table's value is held by its row, not by
    the table. '' when the claim names no row (every value of the tables counts)."""
    said = set(search_stems(sentence)) - generic()
    quoted = [next(g for g in m.groups() if g) for m in c.QUOTED.finditer(sentence)]
    named: list[str] = []
    for x in cited:
        if x.first.kind != NormClause.Kind.TABLE:
            continue
        title, *rows = x.text.splitlines()
        for row in rows:
            if any(c.quote_held(quote, row) for quote in quoted):
                named += [title, row]
                continue
            label = set(search_stems(re.sub(r"[\d.,:;–-]+", " ", row))) - generic()
            shared = sum(any(stems_related(stem, w) for w in said) for stem in label)
            if label and shared >= max(1, (2 * len(label) + 2) // 3):
                named += [title, row]
    return "\n".join(named)


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


def _value_problem(value: c.Value, held: list[c.Value], cited: list[_Cited]) -> str:
    label = cited[0].label
    opposite = c.opposite_bound(value, held)
    if opposite is not None:
        return f"в {label}: {c.value_text(opposite)}, а не {c.value_text(value)}"
    same = [v for v in held if v.dimension == value.dimension and (v.unit or not value.unit)]
    listed = ", ".join(dict.fromkeys(c.value_text(v) for v in same[:6]))
    instead = f"; в пункте: {listed}" if listed else ""
    return f"значения {c.value_text(value)} нет в {label}{instead}"


def results_summary(results: list[ClaimResult]) -> str:
    """One line for the run: how many claims the norms do not confirm ('' when all hold)."""
    wrong = [r for r in results if not r.confirmed]
    if not wrong:
        return ""
    return f"{len(wrong)} из {len(results)} утверждений ответа не подтверждаются текстом пунктов"


MARK = " *[не подтверждено: {reason}]*"


def answer_marked(text: str, results: list[ClaimResult], *, lead: bool = True) -> str:
    """`text` with every unconfirmed claim marked after it and (with `lead`) `answer_lead`
    first."""
    for result in results:
        if not result.confirmed:
            text = _mark_after(text, result.claim, MARK.format(reason=result.reason))
    first = answer_lead(results) if lead else ""
    return f"{first}\n\n{text}" if first else text


def answer_lead(results: list[ClaimResult]) -> str:
    """The answer's first line when a claim is unconfirmed: how many, or that none holds."""
    if all(r.confirmed for r in results):
        return ""
    if not any(r.confirmed for r in results):
        return (
            "**Подтверждённого ответа в нормах корпуса нет:** ни одно утверждение ответа "
            "не подтверждается текстом пунктов, на которые он ссылается (отмечены ниже)."
        )
    return f"**Не всё подтверждено нормами:** {results_summary(results)} (отмечены ниже)."


def _mark_after(text: str, claim: str, mark: str) -> str:
    """Insert `mark` after the end of `claim` in `text` (markup and spacing may differ); at
    the end of `text` when the claim cannot be found."""
    tokens = re.findall(r"\w+|[^\w\s]", claim)[-8:]
    if tokens:
        pattern = re.compile(r"[\s*_`>]*".join(re.escape(t) for t in tokens) + r"[*_`]*")
        found = list(pattern.finditer(text))
        if found:
            end = found[-1].end()
            return text[:end] + mark + text[end:]
    return f"{text}\n\n- {claim}{mark}"
