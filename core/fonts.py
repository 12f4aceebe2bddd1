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


STYLES = {"bold": ("-Bold", "-Bold"), "italic": ("-Oblique", "-Italic")}


def cyrillic_font_styles() -> dict[str, str]:
    """The regular font with its bold and italic faces, where the font's own files have
    them (DejaVuSans-Bold.ttf, LiberationSans-Italic.ttf, …), else the regular face:
    {"regular", "bold", "italic"} → registered font names."""
    regular = cyrillic_font()
    faces = {"regular": regular}
    base = Path(pdfmetrics.getFont(regular).face.filename)
    stem = base.stem.removesuffix("-Regular")
    for style, suffixes in STYLES.items():
        name = f"{regular}-{style}"
        faces[style] = regular
        if name in pdfmetrics.getRegisteredFontNames():
            faces[style] = name
            continue
        for suffix in suffixes:
            candidate = base.with_name(f"{stem}{suffix}{base.suffix}")
            if candidate.exists():
                pdfmetrics.registerFont(TTFont(name, str(candidate)))
                faces[style] = name
                break
    return faces
