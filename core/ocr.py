"""Reading text off an image with tesseract (Debian's `tesseract-ocr` and its language
packs), for every app: the norms corpus's scanned pages, the problem bank's photos.

The binary runs with a time limit on a PNG written to a temporary file; what it prints is
the text. `OcrUnavailable` (a NotConfigured: 503) says what is missing — the binary or a
language — and `OcrFailed` that the binary failed or took too long; no traceback leaves.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
from typing import TYPE_CHECKING

from core.exceptions import DomainError, NotConfigured

if TYPE_CHECKING:
    from PIL import Image


class OcrUnavailable(NotConfigured):
    code = "ocr_unavailable"


class OcrFailed(DomainError):
    code = "ocr_failed"
    http_status = 503
    retryable = True


@functools.cache
def _languages(binary: str) -> frozenset[str]:
    listed = subprocess.run(  # noqa: S603 (a configured binary, fixed arguments)
        [binary, "--list-langs"], capture_output=True, text=True, timeout=30, check=False
    )
    lines = listed.stdout.splitlines()[1:] if listed.returncode == 0 else []  # after a heading
    return frozenset(line.strip() for line in lines if line.strip())


def ocr_check(*, command: str, languages: str) -> str:
    """The tesseract binary's path; OcrUnavailable naming what is missing."""
    binary = shutil.which(command)
    if binary is None:
        raise OcrUnavailable(
            f"OCR is unavailable: tesseract ({command!r}) is not installed "
            "(Debian: apt-get install tesseract-ocr tesseract-ocr-rus)"
        )
    missing = [lang for lang in languages.split("+") if lang not in _languages(binary)]
    if missing:
        raise OcrUnavailable(
            f"OCR is unavailable: tesseract lacks the language data {', '.join(missing)} "
            f"(Debian: tesseract-ocr-{missing[0]})"
        )
    return binary


def image_read(
    image: Image.Image, *, command: str, languages: str, timeout: float, psm: int = 3
) -> str:
    """The text tesseract reads on `image` (page segmentation mode `psm`)."""
    binary = ocr_check(command=command, languages=languages)
    with tempfile.NamedTemporaryFile(suffix=".png") as tmp:
        image.save(tmp.name, "PNG")
        try:
            result = subprocess.run(  # noqa: S603 (the checked binary, fixed arguments)
                [binary, tmp.name, "stdout", "-l", languages, "--psm", str(psm)],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise OcrFailed(f"OCR took longer than {timeout:g} s and was stopped") from exc
    if result.returncode != 0:
        raise OcrFailed(f"OCR failed: tesseract: {result.stderr.strip()[:300] or 'no output'}")
    return result.stdout
