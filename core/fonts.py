"""A TTF font with Cyrillic letters for reportlab (its bundled fonts have none): the
sample norms' pages and the printable variant sheets are drawn with it."""

from __future__ import annotations

from pathlib import Path

from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont

from core.exceptions import NotConfigured

FONT = "NormaSans"
FONT_CANDIDATES = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
    "/Library/Fonts/Arial Unicode.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "C:/Windows/Fonts/arial.ttf",
]


def cyrillic_font() -> str:
    """Register a TTF font with Cyrillic glyphs for reportlab; its name."""
    if FONT in pdfmetrics.getRegisteredFontNames():
        return FONT
    for candidate in FONT_CANDIDATES:
        if Path(candidate).exists():
            pdfmetrics.registerFont(TTFont(FONT, candidate))
            return FONT
    raise NotConfigured(
        "no TTF font with Cyrillic letters found (looked for DejaVuSans and others): "
        "install Debian's fonts-dejavu-core"
    )
