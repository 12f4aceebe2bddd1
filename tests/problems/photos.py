"""Photos of problem conditions, as a phone takes them of a printed page (Pillow + DejaVu)."""

from __future__ import annotations

import io
import random
import textwrap
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def photo(text: str, rng: random.Random) -> bytes:
    """`text` set in DejaVu Sans on a page, turned by up to ±2°, blurred, grainy, a JPEG."""
    font = ImageFont.truetype(str(FONT), rng.choice([26, 28, 30]))
    lines = textwrap.wrap(text, width=rng.choice([48, 54, 60]))
    line_height = int(font.size * 1.45)
    width = max(int(font.getlength(line)) for line in lines) + 120
    page = Image.new("L", (width, line_height * len(lines) + 120), color=rng.randint(228, 250))
    draw = ImageDraw.Draw(page)
    for n, line in enumerate(lines):
        draw.text((60, 60 + n * line_height), line, font=font, fill=rng.randint(10, 50))
    page = page.rotate(
        rng.uniform(-2, 2), resample=Image.Resampling.BICUBIC, expand=True, fillcolor=238
    )
    page = page.filter(ImageFilter.GaussianBlur(rng.uniform(0.6, 1.2)))
    grain = Image.effect_noise(page.size, rng.uniform(14, 24))
    page = Image.blend(page, grain, 0.12)
    buffer = io.BytesIO()
    page.convert("RGB").save(buffer, "JPEG", quality=rng.choice([70, 80, 90]))
    return buffer.getvalue()
