"""A variant as a printable sheet (issue 30, item 2): a PDF drawn with reportlab in a font
with Cyrillic letters, stored through Django's storage (S3 in production).

- The conditions, numbered, each with its figures and an answer box.
- On a page of its own, the answer key: number, problem, answer.
- When asked, on the pages after it, the solutions.

A figure is fetched under the image rules of the problem photo search
(`SDAMGIA_IMAGE_*`); one that cannot be fetched is named by its address instead, so a
sheet is never silently short of a figure.
"""

from __future__ import annotations

import io
from xml.sax.saxutils import escape

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.platypus import (
    Image,
    KeepTogether,
    PageBreak,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
    Table,
    TableStyle,
)

from core.fonts import cyrillic_font
from core.image_fetch import ImageProblem, image_fetch
from problems.models import Problem, Variant
from problems.variants import variant_problems

FIGURE_WIDTH = 90 * mm
SHEETS_DIR = "sheets"


def variant_pdf(*, variant: Variant, with_solutions: bool = False) -> str:
    """The sheet of `variant` stored (again) under its name; the storage name."""
    pdf = variant_pdf_bytes(variant=variant, with_solutions=with_solutions)
    name = f"{SHEETS_DIR}/variant-{variant.public_id}{'-solutions' if with_solutions else ''}.pdf"
    if default_storage.exists(name):
        default_storage.delete(name)
    return str(default_storage.save(name, ContentFile(pdf)))


def variant_pdf_bytes(*, variant: Variant, with_solutions: bool = False) -> bytes:
    font = cyrillic_font()
    text = ParagraphStyle("text", fontName=font, fontSize=11, leading=15)
    heading = ParagraphStyle("heading", parent=text, fontSize=15, leading=20, spaceAfter=8)
    problems = _problems(variant)
    story: list[object] = [
        Paragraph(
            escape(f"Вариант {variant.public_id} · {variant.subject} · {variant.exam}"), heading
        )
    ]
    for number, problem in enumerate(problems, start=1):
        story.append(
            KeepTogether(
                [
                    Paragraph(escape(f"{number}. (№ {problem.problem_id})"), heading),
                    *_paragraphs(problem.condition_text, text),
                    *_figures(problem.figures, text),
                    Spacer(1, 3 * mm),
                    _answer_box(font),
                    Spacer(1, 6 * mm),
                ]
            )
        )
    story += [PageBreak(), Paragraph("Ответы", heading), _key(problems, font)]
    if with_solutions:
        story += [PageBreak(), Paragraph("Решения", heading)]
        for number, problem in enumerate(problems, start=1):
            story.append(Paragraph(escape(f"{number}. (№ {problem.problem_id})"), heading))
            story += _paragraphs(problem.solution_text or "Решения на сайте нет.", text)
    buffer = io.BytesIO()
    SimpleDocTemplate(
        buffer, pagesize=A4, title=f"Вариант {variant.public_id}", author="tool hub"
    ).build(story)
    return buffer.getvalue()


def _problems(variant: Variant) -> list[Problem]:
    held = variant_problems(variant)
    return [held[pid] for pid in variant.problem_ids if pid in held]


def _paragraphs(text: str, style: ParagraphStyle) -> list[Paragraph]:
    return [Paragraph(escape(part), style) for part in text.splitlines() if part.strip()]


def _figures(urls: list[str], style: ParagraphStyle) -> list[object]:
    out: list[object] = []
    for url in urls:
        try:
            data = image_fetch(
                url,
                allow_private=settings.SDAMGIA_IMAGE_ALLOW_PRIVATE,
                private_setting="SDAMGIA_IMAGE_ALLOW_PRIVATE",
                max_bytes=settings.SDAMGIA_IMAGE_MAX_BYTES,
                timeout=settings.SDAMGIA_IMAGE_TIMEOUT,
            )
            figure = Image(io.BytesIO(data))
            scale = min(1.0, FIGURE_WIDTH / figure.imageWidth)
            figure.drawWidth, figure.drawHeight = (
                figure.imageWidth * scale,
                figure.imageHeight * scale,
            )
            out.append(figure)
        except (ImageProblem, OSError, ValueError):
            out.append(Paragraph(escape(f"[рисунок: {url}]"), style))
    return out


def _answer_box(font: str) -> Table:
    box = Table([["Ответ:", ""]], colWidths=[20 * mm, 60 * mm], rowHeights=[9 * mm])
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


def _key(problems: list[Problem], font: str) -> Table:
    rows = [["№", "Задача", "Ответ"]] + [
        [str(n), p.problem_id, p.answer or "—"] for n, p in enumerate(problems, start=1)
    ]
    key = Table(rows, colWidths=[12 * mm, 30 * mm, 80 * mm])
    key.setStyle(
        TableStyle(
            [
                ("FONTNAME", (0, 0), (-1, -1), font),
                ("GRID", (0, 0), (-1, -1), 0.5, "grey"),
                ("BACKGROUND", (0, 0), (-1, 0), "#eeeeee"),
            ]
        )
    )
    return key
