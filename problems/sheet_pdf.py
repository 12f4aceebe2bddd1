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


def variant_pdf_bytes(*, variant: Variant, with_solutions: bool = False) -> bytes:
    faces = cyrillic_font_styles()
    style = TextStyle(regular=faces["regular"], bold=faces["bold"], italic=faces["italic"])
    text = ParagraphStyle("text", fontName=style.regular, fontSize=11, leading=15)
    heading = ParagraphStyle(
        "heading", parent=text, fontName=style.bold, fontSize=13, leading=18, spaceAfter=4
    )
    title = ParagraphStyle("title", parent=heading, fontSize=16, leading=21, spaceAfter=2)
    problems = _problems(variant)
    htmls = [p.source_html for p in problems] + [p.condition_html for p in problems]
    figure_urls = [url for p in problems for url in p.figures]
    if with_solutions:
        htmls += [p.solution_html for p in problems]
        figure_urls += [url for p in problems for url in p.solution_figures]
    fetched = figures_fetch([*all_formula_urls(htmls), *figure_urls])
    name = variant_name(variant)

    def body(html: str, plain: str) -> list[Flowable]:
        if html.strip():
            return html_flowables(html, style=style, formulas=fetched, column=COLUMN)
        return text_flowables(plain, style=style)

    def figures(urls: list[str]) -> list[Flowable]:
        out: list[Flowable] = []
        for url in urls:
            found = fetched.get(url)
            out.append(
                figure_flowable(found)
                if isinstance(found, Figure)
                else Paragraph(escape(MISSING_FIGURE), text)
            )
        return out

    story: list[Any] = _header(variant, name, title, text, style)
    for number, problem in enumerate(problems, start=1):
        story.append(
            KeepTogether(
                [
                    Paragraph(escape(f"{number}. (№ {problem.problem_id})"), heading),
                    *body(problem.source_html, problem.source_text),
                    *body(problem.condition_html, problem.condition_text),
                    *figures(problem.figures),
                    Spacer(1, 3 * mm),
                    _answer_box(style.regular),
                    Spacer(1, 6 * mm),
                ]
            )
        )
    story += [
        PageBreak(),
        Paragraph(escape(f"Ответы · вариант {name}"), title),
        Spacer(1, 3 * mm),
        _key(problems, text),
    ]
    if with_solutions:
        story += [PageBreak(), Paragraph(escape(f"Решения · вариант {name}"), title)]
        for number, problem in enumerate(problems, start=1):
            story.append(Paragraph(escape(f"{number}. (№ {problem.problem_id})"), heading))
            if problem.solution_html.strip() or problem.solution_text.strip():
                story += body(problem.solution_html, problem.solution_text)
                story += figures(problem.solution_figures)
            else:
                story.append(Paragraph("Решения на сайте нет.", text))
            story.append(Spacer(1, 4 * mm))
    buffer = io.BytesIO()
    SimpleDocTemplate(
        buffer,
        pagesize=A4,
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=MARGIN,
        bottomMargin=MARGIN + 4 * mm,
        title=f"{exam_title(variant.subject, variant.exam)}: вариант {name}",
        author="tool hub",
    ).build(story, canvasmaker=_numbered_canvas(f"вариант {name}", style.regular))
    return buffer.getvalue()


def _problems(variant: Variant) -> list[Problem]:
    held = variant_problems(variant)
    return [held[pid] for pid in variant.problem_ids if pid in held]


def _header(
    variant: Variant, name: str, title: ParagraphStyle, text: ParagraphStyle, style: TextStyle
) -> list[Any]:
    made = timezone.localtime(variant.created_at) if variant.created_at else timezone.now()
    count = len(variant.problem_ids)
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
            escape(f"Вариант {name} · {made:%d.%m.%Y} · заданий: {count}"),
            ParagraphStyle("sub", parent=text, textColor="#444444"),
        ),
        Spacer(1, 2 * mm),
        fields,
        Spacer(1, 6 * mm),
    ]


def _numbered_canvas(footer: str, font: str) -> type[Canvas]:
    """A canvas that holds its pages until the end, to write «{footer} — стр. k из n» on
    each once n is known."""

    class NumberedCanvas(Canvas):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._held: list[dict[str, Any]] = []

        def showPage(self) -> None:
            self._held.append(dict(self.__dict__))
            self._startPage()

        def save(self) -> None:
            total = len(self._held)
            for number, state in enumerate(self._held, start=1):
                self.__dict__.update(state)
                self.setFont(font, 9)
                self.setFillColor("#444444")
                self.drawCentredString(
                    A4[0] / 2, MARGIN / 2 + 2 * mm, f"{footer} — стр. {number} из {total}"
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
