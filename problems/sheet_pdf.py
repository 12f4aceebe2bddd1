"""A variant as a printable PDF (issue 30, item 2; issue 51, items 1–3), drawn with
reportlab in a font with Cyrillic letters.

- A header a teacher hands out: the subject and exam in words («Математика, профильный
  ЕГЭ»), the variant's name and date, lines for the student's name, class and date.
- The conditions, numbered, each drawn from its stored HTML with the site's formula
  images as vector drawings (`problems.sheet_render`), its figures below it whatever
  their format (`problems.sheet_figures`), and an answer box. A figure that cannot be
  fetched is named as missing («[рисунок недоступен]»), never by its address.
- From a new page, the answer key; when asked, from another new page, the solutions, so
  the key and the solutions can be taken off before the sheet is handed out.
- On every page the footer «вариант N — стр. k из n».
"""

from __future__ import annotations

import io
import itertools
import threading
from typing import Any
from xml.sax.saxutils import escape

from django.utils import timezone
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import (
    Flowable,
    KeepTogether,
    PageBreak,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
    Table,
    TableStyle,
)

from core.fonts import cyrillic_font_styles
from problems.models import Problem, Variant
from problems.sheet_copies import SheetPart, copy_orders
from problems.sheet_figures import Figure, figures_fetch
from problems.sheet_render import (
    MISSING_FIGURE,
    TextStyle,
    all_formula_urls,
    figure_flowable,
    html_flowables,
    text_flowables,
)
from problems.subjects import SUBJECTS
from problems.variants import variant_problems

MARGIN = 18 * mm
COLUMN = A4[0] - 2 * MARGIN
EXAM_NAMES = {"ege": "ЕГЭ", "oge": "ОГЭ"}
# One sheet laid out at a time in a process: reportlab's embedded fonts keep their subsets'
# state on the shared font object, and two prints laying out at once (the ASGI and tool
# threads) could fail in `addSubsetObjects` or write different bytes for the same sheet.
# Layout is CPU work under the GIL: nothing runs slower for it.
RENDERING = threading.Lock()


def exam_title(subject: str, exam: str) -> str:
    """«Математика, профильный ЕГЭ», «Физика, ОГЭ»: the subject and exam in words."""
    exam_name = EXAM_NAMES.get(exam, exam.upper())
    if exam == "ege" and subject in ("math", "mathb"):
        level = "профильный" if subject == "math" else "базовый"
        return f"Математика, {level} {exam_name}"
    return f"{SUBJECTS.get(exam, {}).get(subject, subject)}, {exam_name}"


def variant_name(variant: Variant) -> str:
    """The name a sheet calls its variant by: its public id, which every tool takes."""
    return variant.public_id


def variant_pdf_bytes(
    *, variant: Variant, with_solutions: bool = False, copies: int = 1, part: SheetPart = "all"
) -> bytes:
    """The variant's sheet as a PDF. `copies` sheets, each from a new page, copy k > 1 in
    an order of its own (`problems.sheet_copies`) with its number in the header and the
    footer; then each copy's answer key from a new page, and the solutions (in the
    variant's order) when asked. `part` keeps the sheets alone or the keys alone."""
    problems = _problems(variant)
    solutions = with_solutions and part != "sheets"
    shown = problems if part != "key" else []  # whose conditions are drawn
    htmls = [html for p in shown for html in (p.source_html, p.condition_html)]
    figure_urls = [url for p in shown for url in p.figures]
    if solutions:
        htmls += [p.solution_html for p in problems]
        figure_urls += [url for p in problems for url in p.solution_figures]
    draw = _Drawer(variant, copies, figures_fetch([*all_formula_urls(htmls), *figure_urls]))
    by_id = {p.problem_id: p for p in problems}
    orders = [
        [by_id[pid] for pid in order]
        for order in copy_orders(problem_ids=list(by_id), name=draw.name, copies=copies)
    ]
    parts: list[list[Any]] = []
    if part != "key":
        parts += [draw.sheet(order, number) for number, order in enumerate(orders, start=1)]
    if part != "sheets":
        parts += [draw.key(order, number) for number, order in enumerate(orders, start=1)]
    if solutions:
        parts.append(draw.solutions(problems))
    story: list[Any] = []
    for one in parts:  # each from a new page
        story += [PageBreak(), *one] if story else one
    buffer = io.BytesIO()
    with RENDERING:
        _document(buffer, variant, draw.name).build(
            story, canvasmaker=_numbered_canvas(f"вариант {draw.name}", draw.style.regular)
        )
    return buffer.getvalue()


def _document(buffer: io.BytesIO, variant: Variant, name: str) -> SimpleDocTemplate:
    return SimpleDocTemplate(
        buffer,
        pagesize=A4,
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=MARGIN,
        bottomMargin=MARGIN + 4 * mm,
        title=f"{exam_title(variant.subject, variant.exam)}: вариант {name}",
        author="tool hub",
    )


class _Drawer:
    """The parts of one print: its styles, its fetched images, its copies' names. Each
    part is new flowables (reportlab lays a flowable out once)."""

    def __init__(self, variant: Variant, copies: int, fetched: dict[str, Figure | str]) -> None:
        faces = cyrillic_font_styles()
        self.style = TextStyle(regular=faces["regular"], bold=faces["bold"], italic=faces["italic"])
        self.text = ParagraphStyle("text", fontName=self.style.regular, fontSize=11, leading=15)
        self.heading = ParagraphStyle(
            "heading", parent=self.text, fontName=self.style.bold, fontSize=13, leading=18,
            spaceAfter=4,
        )  # fmt: skip
        self.title = ParagraphStyle(
            "title", parent=self.heading, fontSize=16, leading=21, spaceAfter=2
        )
        self.variant, self.copies, self.fetched = variant, copies, fetched
        self.name = variant_name(variant)

    def copy_of(self, number: int) -> str:
        """«вариант N», or «вариант N, экземпляр k» among copies."""
        return f"вариант {self.name}" + (f", экземпляр {number}" if self.copies > 1 else "")

    def sheet(self, order: list[Problem], number: int) -> list[Any]:
        """Copy `number`: the header, then each problem with its figures and answer box."""
        story: list[Any] = [Section(self.copy_of(number))]
        story += _header(
            self.variant, self.name, self.title, self.text, self.style, copy=(number, self.copies)
        )
        for place, problem in enumerate(order, start=1):
            heading = Paragraph(escape(f"{place}. (№ {problem.problem_id})"), self.heading)
            story.append(
                KeepTogether(
                    [
                        heading,
                        *self.body(problem.source_html, problem.source_text),
                        *self.body(problem.condition_html, problem.condition_text),
                        *self.figures(problem.figures),
                        Spacer(1, 3 * mm),
                        _answer_box(self.style.regular),
                        Spacer(1, 6 * mm),
                    ]
                )
            )
        return story

    def key(self, order: list[Problem], number: int) -> list[Any]:
        """Copy `number`'s answer key; the first opens the keys' section of the footer."""
        opening = f"вариант {self.name}" + (", ответы" if self.copies > 1 else "")
        return [
            *([Section(opening)] if number == 1 else []),
            Paragraph(escape(f"Ответы · {self.copy_of(number)}"), self.title),
            Spacer(1, 3 * mm),
            _key(order, self.text),
        ]

    def solutions(self, problems: list[Problem]) -> list[Any]:
        story: list[Any] = [Paragraph(escape(f"Решения · вариант {self.name}"), self.title)]
        for number, problem in enumerate(problems, start=1):
            story.append(Paragraph(escape(f"{number}. (№ {problem.problem_id})"), self.heading))
            if problem.solution_html.strip() or problem.solution_text.strip():
                story += self.body(problem.solution_html, problem.solution_text)
                story += self.figures(problem.solution_figures)
            else:
                story.append(Paragraph("Решения на сайте нет.", self.text))
            story.append(Spacer(1, 4 * mm))
        return story

    def body(self, html: str, plain: str) -> list[Flowable]:
        if html.strip():
            return html_flowables(html, style=self.style, formulas=self.fetched, column=COLUMN)
        return text_flowables(plain, style=self.style)

    def figures(self, urls: list[str]) -> list[Flowable]:
        """Each figure drawn; one that could not be fetched named as missing."""
        out: list[Flowable] = []
        for url in urls:
            found = self.fetched.get(url)
            out.append(
                figure_flowable(found)
                if isinstance(found, Figure)
                else Paragraph(escape(MISSING_FIGURE), self.text)
            )
        return out


class Section(Flowable):
    """Takes no room; marks the page it lands on, and those after it, as one part of the
    document, numbered on its own in the footer («{label} — стр. k из n»): a copy's
    sheets, handed to one student, count their own pages."""

    def __init__(self, label: str) -> None:
        super().__init__()
        self.label = label

    def wrap(self, availWidth: float, availHeight: float) -> tuple[float, float]:
        return 0, 0

    def draw(self) -> None:
        self.canv._section = self.label


def _problems(variant: Variant) -> list[Problem]:
    held = variant_problems(variant)
    return [held[pid] for pid in variant.problem_ids if pid in held]


def _header(
    variant: Variant,
    name: str,
    title: ParagraphStyle,
    text: ParagraphStyle,
    style: TextStyle,
    *,
    copy: tuple[int, int] = (1, 1),
) -> list[Any]:
    made = timezone.localtime(variant.created_at) if variant.created_at else timezone.now()
    count = len(variant.problem_ids)
    number, copies = copy
    which = f" · экземпляр {number} из {copies}" if copies > 1 else ""
    fields = Table(
        [["Фамилия, имя:", "", "Класс:", "", "Дата:", ""]],
        colWidths=[28 * mm, 70 * mm, 14 * mm, 20 * mm, 12 * mm, COLUMN - 144 * mm],
        rowHeights=[10 * mm],
    )
    fields.setStyle(
        TableStyle(
            [
                ("FONTNAME", (0, 0), (-1, -1), style.regular),
                ("FONTSIZE", (0, 0), (-1, -1), 10),
                ("VALIGN", (0, 0), (-1, -1), "BOTTOM"),
                ("LEFTPADDING", (0, 0), (-1, -1), 2),
                *[("LINEBELOW", (col, 0), (col, 0), 0.6, "black") for col in (1, 3, 5)],
            ]
        )
    )
    return [
        Paragraph(escape(exam_title(variant.subject, variant.exam)), title),
        Paragraph(
            escape(f"Вариант {name}{which} · {made:%d.%m.%Y} · заданий: {count}"),
            ParagraphStyle("sub", parent=text, textColor="#444444"),
        ),
        Spacer(1, 2 * mm),
        fields,
        Spacer(1, 6 * mm),
    ]


def _numbered_canvas(footer: str, font: str) -> type[Canvas]:
    """A canvas that holds its pages until the end, to write «{section} — стр. k из n» on
    each once n is known, k and n counted within the page's `Section` («{footer}» before
    any)."""

    class NumberedCanvas(Canvas):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._held: list[dict[str, Any]] = []

        def showPage(self) -> None:
            self._held.append(dict(self.__dict__))
            self._startPage()

        def save(self) -> None:
            labels = [state.get("_section", footer) for state in self._held]
            runs = [len(list(run)) for _, run in itertools.groupby(labels)]
            numbers = [(k, total) for total in runs for k in range(1, total + 1)]
            for state, label, (number, total) in zip(self._held, labels, numbers, strict=True):
                self.__dict__.update(state)
                self.setFont(font, 9)
                self.setFillColor("#444444")
                self.drawCentredString(
                    A4[0] / 2, MARGIN / 2 + 2 * mm, f"{label} — стр. {number} из {total}"
                )
                super().showPage()
            super().save()

    return NumberedCanvas


def _answer_box(font: str) -> Table:
    box = Table([["Ответ:", ""]], colWidths=[20 * mm, 60 * mm], rowHeights=[9 * mm], hAlign="LEFT")
    box.setStyle(
        TableStyle(
            [
                ("FONTNAME", (0, 0), (-1, -1), font),
                ("BOX", (1, 0), (1, 0), 0.8, "black"),
                ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
            ]
        )
    )
    return box


def _key(problems: list[Problem], text: ParagraphStyle) -> Table:
    rows: list[list[Any]] = [["№", "Задача", "Ответ"]] + [
        [str(n), p.problem_id, Paragraph(escape(p.answer or "—"), text)]
        for n, p in enumerate(problems, start=1)
    ]
    key = Table(rows, colWidths=[12 * mm, 30 * mm, COLUMN - 42 * mm], repeatRows=1)
    key.setStyle(
        TableStyle(
            [
                ("FONTNAME", (0, 0), (-1, -1), text.fontName),
                ("FONTSIZE", (0, 0), (-1, -1), text.fontSize),
                ("GRID", (0, 0), (-1, -1), 0.5, "grey"),
                ("BACKGROUND", (0, 0), (-1, 0), "#eeeeee"),
                ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
            ]
        )
    )
    return key
