"""Images for notes (seed 002): data URLs in fields, `images[]`, the `<img>` wrapper.

Pure functions (an `image_url` is fetched by `core.image_fetch`). `image_prepare`
resizes what Pillow can read (with a decompression-bomb guard) and keeps the rest as is;
Pillow is imported on first use, off the MCP server's start-up. Failures raise
ImageProblem, which callers turn into warnings.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import html
import io
import re
import unicodedata
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.image_fetch import ImageProblem

if TYPE_CHECKING:
    from PIL import Image

__all__ = ["ImageProblem"]  # defined beside the fetching it shares with the problem bank

MAX_PIXELS = 40_000_000  # a 768-pixel card image never needs a larger source
JPEG_QUALITY = 85
DATA_URL = re.compile(r"^\s*data:(image/[a-z0-9.+-]+);base64,(.*?)\s*$", re.IGNORECASE | re.DOTALL)
EMBEDDED_DATA_URL = re.compile(
    r"""(src\s*=\s*["'])data:(image/[a-z0-9.+-]+);base64,([a-z0-9+/=\s]+)(["'])""", re.IGNORECASE
)
# Characters Anki removes from media names, and the folder separators it strips.
ILLEGAL_NAME = re.compile(r"""[\[\]<>:"'?*^|\x00\r\n]""")
MIME_EXT = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/jpg": "jpg",
    "image/pjpeg": "jpg",
    "image/gif": "gif",
    "image/webp": "webp",
    "image/svg+xml": "svg",
    "image/bmp": "bmp",
    "image/tiff": "tif",
    "image/avif": "avif",
    "image/x-icon": "ico",
    "image/vnd.microsoft.icon": "ico",
}


@dataclass(frozen=True)
class MediaFile:
    filename: str
    data: bytes

    @property
    def sha1(self) -> str:
        return hashlib.sha1(self.data).hexdigest()  # noqa: S324 (a name, not a secret)


def ext_from_mime(mime: str) -> str:
    mime = mime.lower()
    return MIME_EXT.get(mime) or re.sub(r"[^a-z0-9]", "", mime.split("/")[-1])[:8] or "bin"


def media_name(filename: str | None) -> str:
    """The name Anki will store: the last path part, NFC, without illegal characters.

    No usable name gives `image.jpg` (the seed's UUID would make one picture a new file
    on every call; `content_name` tells pictures apart).
    """
    name = unicodedata.normalize("NFC", (filename or "").replace("\\", "/").split("/")[-1])
    name = ILLEGAL_NAME.sub("", name).strip().lstrip(".")[:120]
    return name or "image.jpg"


DIGEST_CHARS = 16  # of a SHA-256: 64 bits, no two pictures of one user ever share them
NAME_BYTES = 120  # Anki cuts a longer media name (measured with the `anki` package)


def content_name(filename: str, data: bytes) -> str:
    """`filename` with a digest of `data` before its extension (`diagram.png` →
    `diagram-<16 hex>.png`), at most NAME_BYTES bytes, the stem shortened to fit.

    Anki replaces a file of the same name (the user's own `photo.jpg` among them, and
    every note that shows it): two different pictures never share such a name, and one
    picture always has the same name, so it is stored once. A name already ending in
    this digest is kept as it is.
    """
    digest = hashlib.sha256(data).hexdigest()[:DIGEST_CHARS]
    stem, dot, ext = filename.rpartition(".")
    if not dot or not stem:
        stem, ext = filename, ""
    if stem.endswith(f"-{digest}") and len(filename.encode()) <= NAME_BYTES:
        return filename
    tail = f"-{digest}" + (f".{ext}" if ext else "")
    room = max(NAME_BYTES - len(tail.encode()), 1)
    return stem.encode()[:room].decode("utf-8", "ignore") + tail


def img_html(filename: str) -> str:
    return f'<div><img src="{html.escape(filename)}" style="max-width:100%;height:auto"/></div>'


def _src(filename: str) -> re.Pattern[str]:
    """An `src` attribute naming `filename` (either quotes)."""
    return re.compile(r"""(src\s*=\s*["'])""" + re.escape(html.escape(filename)) + "([\"'])")


def ensure_img_tag(value: str, filename: str, *, asked: str = "") -> str:
    """`value` with the image wrapper after a blank line; unchanged when it shows the file.

    `asked`: the name the caller gave the image, when its bytes made it another
    (`there.png` stored as `there.jpg`): a field that already shows `asked` shows the file
    under its new name, not a second image."""
    if asked and asked != filename:
        value = _src(asked).sub(lambda m: m.group(1) + html.escape(filename) + m.group(2), value)
    if _src(filename).search(value):
        return value
    tag = img_html(filename)
    return f"{value}\n\n{tag}" if value.strip() else tag


def img_stand_in(value: str, filename: str, text: str) -> str:
    """`value` with every `<img>` showing `filename` replaced by `text` (escaped): an image
    that could not be loaded leaves words, not a broken picture."""
    tag = re.compile(
        r"""<img\b[^>]*?\bsrc\s*=\s*["']""" + re.escape(html.escape(filename)) + r"""["'][^>]*>""",
        re.IGNORECASE,
    )
    return tag.sub(lambda m: html.escape(text, quote=False), value)


def decode_base64(text: str) -> bytes:
    """Base64 (or a data URL) → bytes; ImageProblem when it is not valid base64."""
    payload = text
    if text[:5].lower() == "data:" or text[:1].isspace():
        match = DATA_URL.match(text)
        payload = match.group(2) if match else text
    try:
        return base64.b64decode(payload, validate=True)  # no copy of a clean payload
    except (binascii.Error, ValueError):
        pass
    try:
        return base64.b64decode("".join(payload.split()), validate=True)  # wrapped lines
    except (binascii.Error, ValueError) as exc:
        raise ImageProblem("image_invalid", "image_base64 is not valid base64") from exc


def data_urls_extract(fields: dict[str, str]) -> tuple[dict[str, str], list[MediaFile], list[str]]:
    """Store `data:image/…;base64,` values as `img_<sha1>.<ext>` files (seed 002).

    A field that is a data URL becomes the image wrapper; data URLs in `src` attributes
    become the file's name. Returns the new fields, the files and warnings.
    """
    media: list[MediaFile] = []
    notes: list[str] = []
    out: dict[str, str] = {}
    for name, value in fields.items():
        whole = DATA_URL.match(value)
        if whole:
            try:
                file = _data_file(whole.group(1), whole.group(2))
            except ImageProblem as exc:
                notes.append(exc.warning(f"field {name}"))
                out[name] = ""
                continue
            media.append(file)
            out[name] = img_html(file.filename)
            continue

        def embedded(m: re.Match[str], field: str = name) -> str:
            try:
                file = _data_file(m.group(2), m.group(3))
            except ImageProblem as exc:
                notes.append(exc.warning(f"field {field}"))
                return m.group(0)
            media.append(file)
            return f"{m.group(1)}{html.escape(file.filename)}{m.group(4)}"

        out[name] = EMBEDDED_DATA_URL.sub(embedded, value) if "data:" in value.lower() else value
    return out, media, notes


def _data_file(mime: str, payload: str) -> MediaFile:
    """The file of a data URL, named by its content; the extension is the bytes' own (a
    `data:image/png` URL holding a JPEG is a `.jpg`), else the MIME type's."""
    data = decode_base64(payload)
    if not data:
        raise ImageProblem("image_invalid", "the data URL holds no data")
    unreadable = image_unreadable(data)
    if unreadable:
        raise ImageProblem("image_invalid", f"the data URL holds {unreadable}; left out")
    digest = hashlib.sha1(data).hexdigest()  # noqa: S324 (a name, not a secret)
    sniffed = sniff_ext(data)
    ext = sniffed if sniffed != "bin" else ext_from_mime(mime)
    return MediaFile(filename=f"img_{digest}.{ext}", data=data)


def sniff_ext(data: bytes) -> str:
    head = data[:512].lstrip().lower()
    if head.startswith((b"<svg", b"<?xml")) and b"<svg" in data[:4096].lower():
        return "svg"
    for magic, ext in ((b"\x89png", "png"), (b"gif8", "gif"), (b"\xff\xd8", "jpg")):
        if head.startswith(magic):
            return ext
    if head.startswith(b"riff") and head[8:12] == b"webp":
        return "webp"
    if data[4:8] == b"ftyp":
        return _heif_kind(data) or "bin"
    return "bin"


def _heif_kind(data: bytes) -> str | None:
    """An ISO media file's picture kind, by its major brand or (for the generic «mif1»,
    «msf1») its compatible brands: «avif», «heic» or None."""
    size = int.from_bytes(data[:4], "big")
    brands = [data[8:12].lower()]
    if brands[0] in (b"mif1", b"msf1"):
        box = data[16 : min(size, 256)]
        brands = [box[i : i + 4].lower() for i in range(0, len(box) - 3, 4)]
    for brand in brands:
        if brand in (b"avif", b"avis"):
            return "avif"
        if brand in (b"heic", b"heix", b"heim", b"heis"):
            return "heic"
    return None


# kinds stored as they came when Pillow cannot read them: a drawing, or a newer format
_BEYOND_PILLOW = frozenset({"svg", "avif", "heic"})


def image_unreadable(data: bytes, *, tried: bool = False) -> str | None:
    """Why `data` is no picture a card can show (None when it is one, or may be: a drawing,
    a format Pillow may lack): bytes of no known kind, or of a kind Pillow reads (PNG, JPEG,
    GIF, WebP) that it cannot decode (broken, cut short). `tried`: Pillow already failed to
    decode them. ImageProblem for a picture over MAX_PIXELS (a decompression bomb)."""
    kind = sniff_ext(data)
    if kind in _BEYOND_PILLOW:
        return None
    if not tried and _decodes(data):
        return None
    what = "no picture (not PNG, JPEG, GIF, WebP, SVG, AVIF or HEIC)"
    return what if kind == "bin" else f"a broken {kind.upper()} file"


def _decodes(data: bytes) -> bool:
    """Whether Pillow decodes `data` whole (its first frame), within MAX_PIXELS."""
    try:
        with _guarded(data) as image:
            image.load()
    except _UNREADABLE:
        return False
    return True


def image_prepare(data: bytes, *, max_side: int) -> tuple[bytes, bool]:
    """JPEG (quality 85) with the long side at most `max_side` when Pillow reads it.

    Returns the bytes and whether they were re-encoded; data Pillow cannot read comes back
    as is. ImageProblem for an image over the pixel limit (a decompression bomb).
    """
    try:
        with _guarded(data) as image:
            image.draft("RGB", (max_side, max_side))  # JPEG: decode at a smaller scale
            image.thumbnail((max_side, max_side))
            rgb = _flatten(image)
            out = io.BytesIO()
            rgb.save(out, "JPEG", quality=JPEG_QUALITY)
            return out.getvalue(), True
    except _UNREADABLE:
        return data, False


# what Pillow raises for bytes it cannot read (not a picture, or a broken one)
_UNREADABLE = (OSError, ValueError, SyntaxError, IndexError)  # UnidentifiedImageError: OSError


@contextlib.contextmanager
def _guarded(data: bytes) -> Iterator[Image.Image]:
    """`data` opened by Pillow, refused (ImageProblem) over MAX_PIXELS or as a
    decompression bomb; Pillow's own errors for unreadable bytes pass through."""
    from PIL import Image  # heavy: kept off the server's start-up

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                width, height = image.size
                if width * height > MAX_PIXELS:
                    raise ImageProblem(
                        "image_refused",
                        f"{width}×{height} pixels is over the {MAX_PIXELS:,}-pixel limit",
                    )
                yield image
    except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        raise ImageProblem("image_refused", f"decompression bomb guard: {exc}") from exc


def _flatten(image: Image.Image) -> Image.Image:
    """RGB, with transparency composited on white (JPEG has no alpha)."""
    from PIL import Image

    if image.mode in ("RGBA", "LA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGB", rgba.size, "white")
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return image.convert("RGB")
