"""Figures and formula images on the printed sheets (issue 51, items 1–2): the format told
by the bytes, and an SVG read as hostile — no entity, no reference outside the document,
no font looked up on disk, no document too large."""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from unittest import mock

import pytest
from PIL import Image
from pytest_httpserver import HTTPServer

from problems.sheet_figures import (
    MAX_SVG_BYTES,
    MAX_SVG_ELEMENTS,
    FigureProblem,
    figure_from_bytes,
    figure_kind,
    svg_drawing,
)
from problems.sheet_render import MISSING_FORMULA, TextStyle, html_flowables, plain_formula

SVG = Path(__file__).resolve().parents[1] / "fixtures" / "sdamgia" / "svg"
TRIANGLE = (SVG / "figure_triangle.svg").read_bytes()


def _raster(kind: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (30, 20), "white").save(out, kind)
    return out.getvalue()


def test_the_format_is_told_by_the_bytes_not_the_name() -> None:
    assert figure_kind(TRIANGLE) == "svg"
    assert figure_kind(b"\xef\xbb\xbf\n  <svg xmlns='http://www.w3.org/2000/svg'/>") == "svg"
    assert figure_kind(gzip.compress(TRIANGLE)) == "svg"  # .svgz
    assert figure_kind(_raster("PNG")) == "png"
    assert figure_kind(_raster("GIF")) == "gif"
    assert figure_kind(_raster("JPEG")) == "jpeg"
    assert figure_kind(b"<html><body>Just a moment...</body></html>") is None
    assert figure_kind(b"") is None
    svg = figure_from_bytes(TRIANGLE)
    assert svg.drawing is not None
    assert (svg.width, svg.height) == (165.0, 120.0)  # 220×160 px in points
    png = figure_from_bytes(_raster("PNG"))
    assert png.image is not None
    assert png.drawing is None
    with pytest.raises(FigureProblem):
        figure_from_bytes(b"<html>not a figure</html>")
    with pytest.raises(FigureProblem):
        figure_from_bytes(b"\x89PNG\r\n\x1a\nbroken")


def test_entities_are_never_resolved(tmp_path: Path, httpserver: HTTPServer) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    for doctype in (
        f'<!DOCTYPE svg [<!ENTITY x SYSTEM "file://{secret}">]>',
        f'<!DOCTYPE svg [<!ENTITY % p SYSTEM "{httpserver.url_for("/dtd")}"> %p;]>',
        '<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>',
    ):
        document = (
            f"<?xml version='1.0'?>{doctype}"
            "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'>"
            "<text x='1' y='9'>&x;&b;</text></svg>"
        )
        with pytest.raises(FigureProblem) as refused:
            svg_drawing(document.encode())
        assert "TOP-SECRET" not in str(refused.value)
    assert not httpserver.log
    # A document type as editors write them is no threat: the standard one, and
    # Illustrator's entities for its namespaces and styles.
    standard = (
        b'<?xml version="1.0"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" '
        b'"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd" [<!ENTITY ns_svg '
        b'"http://www.w3.org/2000/svg"><!ENTITY st0 "fill:#123456;">]>'
        b'<svg xmlns="&ns_svg;" width="10pt" height="10pt"><rect style="&st0;" width="5" '
        b'height="5"/></svg>'
    )
    assert svg_drawing(standard).width == 10.0


def test_no_reference_leaves_the_document(tmp_path: Path, httpserver: HTTPServer) -> None:
    (tmp_path / "local.png").write_bytes(_raster("PNG"))
    url = httpserver.url_for("/leak")
    document = f"""<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
        width="100" height="100">
      <style>@import url("{url}.css"); rect {{ fill: #123456; }}</style>
      <defs><path id="p" d="M0 0L10 10"/></defs>
      <image x="0" y="0" width="10" height="10" xlink:href="{url}.png"/>
      <image x="0" y="0" width="10" height="10" href="file://{tmp_path}/local.png"/>
      <image x="0" y="0" width="10" height="10" href="local.png"/>
      <use xlink:href="{url}.svg#p"/>
      <use xlink:href="#p"/>
      <script>fetch("{url}")</script>
      <foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml" src="{url}"/></foreignObject>
      <rect x="20" y="20" width="30" height="30"/>
    </svg>"""
    drawing = svg_drawing(document.encode())
    assert (drawing.width, drawing.height) == (75.0, 75.0)
    assert not httpserver.log  # nothing was fetched


def test_fonts_named_by_an_svg_are_looked_up_nowhere() -> None:
    document = b"""<svg xmlns="http://www.w3.org/2000/svg" width="50" height="20">
      <text x="1" y="15" font-family="../../../../tmp/evil, Comic Sans" font-weight="bold">
        \xd0\x90\xd0\x91C</text></svg>"""
    with (
        mock.patch("svglib.fonts.subprocess.Popen", side_effect=AssertionError("fontconfig")),
        mock.patch("svglib.fonts.FontMap.register_font", side_effect=AssertionError("disk")),
    ):
        assert svg_drawing(document).width > 0


def test_a_document_too_large_is_refused() -> None:
    with pytest.raises(FigureProblem, match="bytes"):
        svg_drawing(b"<svg xmlns='http://www.w3.org/2000/svg'>" + b" " * MAX_SVG_BYTES + b"</svg>")
    many = b"<g/>" * (MAX_SVG_ELEMENTS + 1)
    with pytest.raises(FigureProblem, match="elements"):
        svg_drawing(
            b"<svg xmlns='http://www.w3.org/2000/svg' width='9' height='9'>" + many + b"</svg>"
        )
    with pytest.raises(FigureProblem):
        svg_drawing(b"<svg xmlns='http://www.w3.org/2000/svg' width='100000pt' height='9pt'/>")
    with pytest.raises(FigureProblem, match="unpacked"):
        figure_from_bytes(gzip.compress(b"<svg>" + b" " * (MAX_SVG_BYTES + 10) + b"</svg>"))
    with pytest.raises(FigureProblem):
        svg_drawing(b"<html xmlns='http://www.w3.org/1999/xhtml'/>")


def test_a_formula_that_cannot_be_drawn_is_never_spoken() -> None:
    assert plain_formula(" косинус A.") == "cos A."
    assert plain_formula("x = 5") == "x = 5"
    spoken = "AB= дробь: числитель: BC, знаменатель: синус A конец дроби =8."
    assert plain_formula(spoken) == ""
    assert plain_formula("4 корень из 15") == ""
    assert plain_formula(r"\angle HCB") == ""
    style = TextStyle(regular="Helvetica", bold="Helvetica-Bold", italic="Helvetica-Oblique")
    html = f'<p>Значит, <img alt="{spoken}" src="https://ege.sdamgia.ru/formula/svg/aa/1.svg"></p>'
    (paragraph,) = html_flowables(html, style=style, formulas={}, column=400)
    words = " ".join(item.text for item in paragraph.items)
    assert words == f"Значит, {MISSING_FORMULA}"


def test_a_paragraph_longer_than_a_page_runs_on(tmp_path: Path) -> None:
    import pypdfium2 as pdfium
    from reportlab.platypus import SimpleDocTemplate

    from problems.sheet_figures import Figure

    style = TextStyle(regular="Helvetica", bold="Helvetica-Bold", italic="Helvetica-Oblique")
    formula = Figure(width=40.0, height=5000.0, drawing=svg_drawing(TRIANGLE))  # absurdly tall
    src = "https://ege.sdamgia.ru/formula/svg/00/0.svg"
    words = " ".join(f"w{n}" for n in range(3000))
    html = f'<p>{words} <img alt="x" src="{src}"> end</p>'
    flowables = html_flowables(html, style=style, formulas={src: formula}, column=400)
    out = io.BytesIO()
    SimpleDocTemplate(out).build(flowables)
    document = pdfium.PdfDocument(out.getvalue())
    assert len(document) > 1
    text = " ".join(page.get_textpage().get_text_range() for page in document).split()
    assert text[:2] == ["w0", "w1"]
    assert text[-1] == "end"
    assert "w2999" in text
