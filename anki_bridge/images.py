"""Images for notes (seed 002): data URLs in fields, `images[]`, the `<img>` wrapper.

Pure functions plus one fetcher. `image_fetch` reads an `image_url` as a careful client
must: http(s) only; every address of the host checked (loopback, private, link-local and
other non-public addresses refused unless ANKI_IMAGE_ALLOW_PRIVATE); the connection pinned
to the checked address, so DNS cannot change its answer in between; each redirect checked
the same way; the body capped at ANKI_IMAGE_MAX_BYTES; one deadline for the whole fetch.
`image_prepare` resizes what Pillow can read (with a decompression-bomb guard) and keeps
the rest as is. Failures raise ImageProblem, which callers turn into warnings.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import html
import io
import ipaddress
import re
import socket
import time
import unicodedata
import uuid
import warnings
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx
from PIL import Image, UnidentifiedImageError

MAX_REDIRECTS = 5
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


class ImageProblem(Exception):
    """An image that could not be used; `code` prefixes the warning the note gets."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def warning(self, where: str) -> str:
        return f"{self.code}: {where}: {self.message}"


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

    No usable name gives a UUID `.jpg` (seed 002).
    """
    name = unicodedata.normalize("NFC", (filename or "").replace("\\", "/").split("/")[-1])
    name = ILLEGAL_NAME.sub("", name).strip().lstrip(".")[:120]
    return name or f"{uuid.uuid4().hex}.jpg"


def img_html(filename: str) -> str:
    return f'<div><img src="{html.escape(filename)}" style="max-width:100%;height:auto"/></div>'


def ensure_img_tag(value: str, filename: str) -> str:
    """`value` with the image wrapper after a blank line; unchanged when it shows the file."""
    if re.search(r"""src\s*=\s*["']""" + re.escape(html.escape(filename)) + "[\"']", value):
        return value
    tag = img_html(filename)
    return f"{value}\n\n{tag}" if value.strip() else tag


def decode_base64(text: str) -> bytes:
    """Base64 (or a data URL) → bytes; ImageProblem when it is not valid base64."""
    match = DATA_URL.match(text)
    payload = match.group(2) if match else text
    try:
        return base64.b64decode("".join(payload.split()), validate=True)
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
    data = decode_base64(payload)
    if not data:
        raise ImageProblem("image_invalid", "the data URL holds no data")
    digest = hashlib.sha1(data).hexdigest()  # noqa: S324 (a name, not a secret)
    return MediaFile(filename=f"img_{digest}.{ext_from_mime(mime)}", data=data)


def image_prepare(data: bytes, *, max_side: int) -> tuple[bytes, bool]:
    """JPEG (quality 85) with the long side at most `max_side` when Pillow reads it.

    Returns the bytes and whether they were re-encoded; data Pillow cannot read comes back
    as is. ImageProblem for an image over the pixel limit (a decompression bomb).
    """
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
                image.draft("RGB", (max_side, max_side))  # JPEG: decode at a smaller scale
                image.thumbnail((max_side, max_side))
                rgb = _flatten(image)
                out = io.BytesIO()
                rgb.save(out, "JPEG", quality=JPEG_QUALITY)
                return out.getvalue(), True
    except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        raise ImageProblem("image_refused", f"decompression bomb guard: {exc}") from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        return data, False


def _flatten(image: Image.Image) -> Image.Image:
    """RGB, with transparency composited on white (JPEG has no alpha)."""
    if image.mode in ("RGBA", "LA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGB", rgba.size, "white")
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return image.convert("RGB")


# --- image_url -----------------------------------------------------------------------


def address_refusal(ip: str) -> str | None:
    """Why an address may not be fetched from, or None when it is a public one."""
    address = ipaddress.ip_address(ip)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    for label, flag in (
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("private", address.is_private),
        ("multicast", address.is_multicast),
        ("unspecified", address.is_unspecified),
        ("reserved", address.is_reserved),
        ("not public", not address.is_global),
    ):
        if flag:
            return f"{ip} is a {label} address"
    return None


def _resolve(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise ImageProblem("image_failed", f"cannot resolve {host}: {exc}") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def image_fetch(
    url: str,
    *,
    allow_private: bool,
    max_bytes: int,
    timeout: float,
    transport: httpx.BaseTransport | None = None,
) -> bytes:
    """The body of an image URL, fetched under the rules in the module docstring."""
    deadline = time.monotonic() + timeout
    with httpx.Client(follow_redirects=False, transport=transport) as client:
        for _ in range(MAX_REDIRECTS + 1):
            request_url, headers, extensions = _pinned(url, allow_private)
            left = deadline - time.monotonic()
            if left <= 0:
                raise ImageProblem("image_failed", f"timed out after {timeout:g} s")
            try:
                with client.stream(
                    "GET", request_url, headers=headers, extensions=extensions, timeout=left
                ) as response:
                    if response.is_redirect:
                        url = urljoin(url, response.headers.get("location", ""))
                        continue
                    if response.status_code != 200:
                        raise ImageProblem("image_failed", f"HTTP {response.status_code}")
                    return _read_capped(response, max_bytes, deadline, timeout)
            except httpx.TimeoutException as exc:
                raise ImageProblem("image_failed", f"timed out after {timeout:g} s") from exc
            except httpx.HTTPError as exc:
                raise ImageProblem("image_failed", f"{type(exc).__name__}: {exc}") from exc
    raise ImageProblem("image_refused", f"more than {MAX_REDIRECTS} redirects")


def _pinned(url: str, allow_private: bool) -> tuple[str, dict[str, str], dict[str, str]]:
    """The URL rewritten to a checked address of its host, with Host and SNI kept."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ImageProblem("image_refused", f"only http(s) URLs are fetched, not {url[:80]!r}")
    host = parts.hostname
    port = parts.port or (443 if parts.scheme == "https" else 80)
    addresses = _resolve(host, port)
    if not allow_private:
        for ip in addresses:
            reason = address_refusal(ip)
            if reason:
                raise ImageProblem(
                    "image_refused",
                    f"{host} resolves to {reason} (set ANKI_IMAGE_ALLOW_PRIVATE to allow it)",
                )
    ip = addresses[0]
    netloc = f"[{ip}]" if ":" in ip else ip
    if parts.port:
        netloc += f":{parts.port}"
    pinned = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
    host_header = host if not parts.port else f"{host}:{parts.port}"
    return pinned, {"Host": host_header}, {"sni_hostname": host}


def _read_capped(
    response: httpx.Response, max_bytes: int, deadline: float, timeout: float
) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise ImageProblem("image_refused", f"{declared} bytes is over the {max_bytes}-byte cap")
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise ImageProblem("image_refused", f"the body is over the {max_bytes}-byte cap")
        if time.monotonic() > deadline:
            raise ImageProblem("image_failed", f"timed out after {timeout:g} s")
        chunks.append(chunk)
    return b"".join(chunks)
