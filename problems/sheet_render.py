"""The content of a printed variant sheet as reportlab flowables: a problem's stored HTML
with its formulas drawn inline, its figures below it, the sheet's header and its footer.

How the site marks a formula (STRUCTURE.md §4): `<img class="tex" src=".../formula/svg/
…svg" alt="…">`, a server-rendered SVG whose alt is a Russian spoken transcription
(«дробь: числитель: CH, знаменатель: CB конец дроби»). The stored `condition_html` and
`solution_html` keep the image with its absolute src; the stored `*_text` has the spoken
alt in its place, which is for search and for language models, never for paper. So a sheet
is drawn from the HTML: text runs in the sheet's font (italic, bold, sub- and
superscripts kept) and each formula's own SVG as vector paths on the line, set on the
text's axis as the site sets it with `vertical-align`. A formula that cannot be fetched
prints as its alt only when that alt is plain (no «дробь», «корень», …), else as
«[формула недоступна]»: spoken mathematics never reaches the page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import lxml.html
from reportlab.graphics import renderPDF
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Flowable

from problems.formulas import MISSING_FORMULA, SPACES, is_formula_src, plain_formula
from problems.sheet_figures import Figure

__all__ = ["MISSING_FORMULA", "is_formula_src", "plain_formula"]  # shared with Anki cards

MISSING_FIGURE = "[рисунок недоступен]"
FIGURE_MAX_HEIGHT = 110 * mm
FORMULA_MAX_HEIGHT = 90 * mm  # a line must fit a page
PX_TO_PT = 0.75  # a raster figure's pixels at the browser's 96 dpi

_BLOCK_TAGS = {
    "p", "div", "br", "center", "li", "tr", "table", "ul", "ol", "h1", "h2", "h3", "h4",
    "hr", "blockquote", "pre",
}  # fmt: skip


@dataclass(frozen=True)
class TextStyle:
    """The faces and size of running text."""

    regular: str
    bold: str
    italic: str
    size: float = 11.0
    leading: float = 15.0


@dataclass
class _Word:
    text: str
    font: str
    size: float
    rise: float = 0.0
    space_before: bool = True

    def measure(self) -> tuple[float, float, float]:
        """width, ascent, descent."""
        width = stringWidth(self.text, self.font, self.size)
        return width, self.size * 0.8 + self.rise, max(0.0, self.size * 0.22 - self.rise)

    def draw(self, canvas: Canvas, x: float, baseline: float) -> None:
        canvas.setFont(self.font, self.size)
        canvas.drawString(x, baseline + self.rise, self.text)


@dataclass
class _Box:
    """A formula on the line: its axis on the text's axis (0.3 of the font size above the
    baseline), as the site sets it."""

    figure: Figure
    scale: float
    axis: float
    space_before: bool = True

    def measure(self) -> tuple[float, float, float]:
        width, height = self.figure.width * self.scale, self.figure.height * self.scale
        descent = max(0.0, height / 2 - self.axis)
        return width, height - descent, descent

    def draw(self, canvas: Canvas, x: float, baseline: float) -> None:
        _, _, descent = self.measure()
        draw_figure(canvas, self.figure, x, baseline - descent, self.scale)


_Item = _Word | _Box


def draw_figure(canvas: Canvas, figure: Figure, x: float, y: float, scale: float) -> None:
    """`figure` with its lower left corner at (x, y), `scale` times its natural size."""
    if figure.drawing is not None:
        canvas.saveState()
        canvas.translate(x, y)
        canvas.scale(scale, scale)
        renderPDF.draw(figure.drawing, canvas, 0, 0)
        canvas.restoreState()
    elif figure.image is not None:
        canvas.drawImage(
            figure.image, x, y, figure.width * scale, figure.height * scale, mask="auto"
        )


@dataclass
class _Line:
    items: list[tuple[float, _Item]] = field(default_factory=list)
    ascent: float = 0.0
    descent: float = 0.0
    width: float = 0.0


class InlineText(Flowable):
    """A paragraph of words and formula drawings, broken into lines greedily at spaces
    (a word glued to a formula, as in «равен <formula>.», stays with it); split between
    lines across pages."""

    def __init__(self, items: Sequence[_Item], *, leading: float, centered: bool = False) -> None:
        super().__init__()
        self.items = list(items)
        self.leading = leading
        self.centered = centered  # a displayed formula, as the site centres it
        self._lines: list[_Line] = []

    def _layout(self, width: float) -> list[_Line]:
        chunks: list[list[_Item]] = []
        for item in self.items:
            if item.space_before or not chunks:
                chunks.append([item])
            else:
                chunks[-1].append(item)
        lines: list[_Line] = []
        line, x = _Line(), 0.0
        for chunk in chunks:
            measured = [(item, *item.measure()) for item in chunk]
            chunk_width = sum(m[1] for m in measured)
            space = stringWidth(" ", _font(chunk[0]), _size(chunk[0])) if line.items else 0.0
            if line.items and x + space + chunk_width > width:
                lines.append(line)
                line, x, space = _Line(), 0.0, 0.0
            x += space
            for item, item_width, ascent, descent in measured:
                line.items.append((x, item))
                line.ascent = max(line.ascent, ascent)
                line.descent = max(line.descent, descent)
                x += item_width
            line.width = x
        if line.items:
            lines.append(line)
        for each in lines:
            each.ascent = max(each.ascent, self.leading * 0.78) + 1
            each.descent = max(each.descent, self.leading * 0.22) + 1
        return lines

    def wrap(self, availWidth: float, availHeight: float) -> tuple[float, float]:
        self._lines = self._layout(availWidth)
        self.width = availWidth
        self.height = sum(line.ascent + line.descent for line in self._lines)
        return self.width, self.height

    def split(self, availWidth: float, availHeight: float) -> list[Flowable]:
        lines = self._layout(availWidth)
        used, fit = 0.0, 0
        for line in lines:
            if used + line.ascent + line.descent > availHeight:
                break
            used += line.ascent + line.descent
            fit += 1
        if fit == 0 or fit == len(lines):
            return [] if fit == 0 else [self]
        head = [item for line in lines[:fit] for _, item in line.items]
        tail = [item for line in lines[fit:] for _, item in line.items]
        return [
            InlineText(head, leading=self.leading, centered=self.centered),
            InlineText(tail, leading=self.leading, centered=self.centered),
        ]

    def draw(self) -> None:
        y = self.height
        for line in self._lines:
            y -= line.ascent
            shift = max(0.0, (self.width - line.width) / 2) if self.centered else 0.0
            for x, item in line.items:
                item.draw(self.canv, x + shift, y)
            y -= line.descent


def _font(item: _Item) -> str:
    return item.font if isinstance(item, _Word) else "Helvetica"


def _size(item: _Item) -> float:
    return item.size if isinstance(item, _Word) else 11.0


class FigureFlowable(Flowable):
    """A figure on its own, at its natural size or smaller, to fit the column and
    FIGURE_MAX_HEIGHT (never enlarged: the site's figures are drawn to be read as they are)."""

    def __init__(self, figure: Figure, *, natural_scale: float = 1.0) -> None:
        super().__init__()
        self.figure = figure
        self.natural_scale = natural_scale
        self.hAlign = "CENTER"
        self.scale = natural_scale

    def wrap(self, availWidth: float, availHeight: float) -> tuple[float, float]:
        width = self.figure.width * self.natural_scale
        height = self.figure.height * self.natural_scale
        fit = min(1.0, availWidth / width, FIGURE_MAX_HEIGHT / height)
        self.scale = self.natural_scale * fit
        self.width, self.height = width * fit, height * fit
        return self.width, self.height

    def draw(self) -> None:
        draw_figure(self.canv, self.figure, 0, 0, self.scale)


def figure_flowable(figure: Figure) -> FigureFlowable:
    return FigureFlowable(figure, natural_scale=1.0 if figure.drawing is not None else PX_TO_PT)


class _Builder:
    """Walks sanitized HTML into InlineText paragraphs."""

    def __init__(self, style: TextStyle, formulas: dict[str, Figure | str], column: float) -> None:
        self.style = style
        self.formulas = formulas
        self.column = column
        self.out: list[Flowable] = []
        self.items: list[_Item] = []
        self.pending_space = False

    def flush(self) -> None:
        if any(isinstance(i, _Box) or i.text.strip() for i in self.items):
            displayed = any(isinstance(i, _Box) for i in self.items) and not any(
                isinstance(i, _Word) and re.search(r"\w\w", i.text) for i in self.items
            )
            self.out.append(InlineText(self.items, leading=self.style.leading, centered=displayed))
        self.items, self.pending_space = [], False

    def text(self, text: str, font: str, size: float, rise: float) -> None:
        text = text.translate(SPACES)
        if not text:
            return
        if text[0].isspace():
            self.pending_space = True
        for index, word in enumerate(text.split()):
            space = index > 0 or self.pending_space or not self.items
            self.items.append(_Word(word, font, size, rise, space_before=space))
            self.pending_space = False
        if text[-1].isspace():
            self.pending_space = True

    def formula(self, src: str, alt: str, size: float) -> None:
        found = self.formulas.get(src)
        space = self.pending_space or not self.items
        self.pending_space = False
        if isinstance(found, Figure):
            fit = min(1.0, self.column / found.width, FORMULA_MAX_HEIGHT / found.height)
            scale = fit * (size / self.style.size)
            self.items.append(_Box(found, scale, axis=0.3 * size, space_before=space))
            return
        words = plain_formula(alt) or MISSING_FORMULA
        self.pending_space = space
        self.text(words, self.style.italic if words != MISSING_FORMULA else self.style.regular,
                  size, 0.0)  # fmt: skip

    def walk(self, node: Any, font: str, size: float, rise: float) -> None:
        """`node` and its children in the style it inherits; each child's tail in the
        node's own style."""
        tag = node.tag if isinstance(node.tag, str) else ""
        if tag in _BLOCK_TAGS:
            self.flush()
        if tag == "img":
            src = node.get("src") or ""
            if is_formula_src(src):
                self.formula(src, node.get("alt") or "", size)
            return
        if tag in ("i", "em"):
            font = self.style.italic
        elif tag in ("b", "strong", "h1", "h2", "h3", "h4"):
            font = self.style.bold
        elif tag in ("sup", "sub"):
            rise += size * (0.35 if tag == "sup" else -0.2)
            size *= 0.7
        elif tag in ("td", "th"):
            self.pending_space = True
        if node.text:
            self.text(node.text, font, size, rise)
        for child in node:
            self.walk(child, font, size, rise)
            if child.tail:
                self.text(child.tail, font, size, rise)
        if tag in _BLOCK_TAGS:
            self.flush()


def html_flowables(
    html: str, *, style: TextStyle, formulas: dict[str, Figure | str], column: float
) -> list[Flowable]:
    """A stored problem's sanitized HTML as paragraphs with their formulas drawn; its
    figures (the images that are no formulas) are left to the caller."""
    builder = _Builder(style, formulas, column)
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    builder.walk(root, style.regular, style.size, 0.0)
    builder.flush()
    return builder.out


def text_flowables(text: str, *, style: TextStyle) -> list[Flowable]:
    """Plain text (a problem stored without HTML) as paragraphs, one per line."""
    builder = _Builder(style, {}, 0.0)
    for line in text.splitlines():
        builder.text(line, style.regular, style.size, 0.0)
        builder.flush()
    return builder.out


def formula_urls(html: str) -> list[str]:
    """The formula images of a stored HTML, in order."""
    if not html.strip():
        return []
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    return [src for img in root.iter("img") if is_formula_src(src := img.get("src") or "")]


def all_formula_urls(htmls: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(url for html in htmls for url in formula_urls(html)))
