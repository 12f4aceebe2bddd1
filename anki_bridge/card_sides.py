"""What the model is shown of a card's side as Anki renders it: its text, and its pictures.

A side is HTML. Its text drops styles, scripts and what the learner does not see (a
`{{hint:…}}` field, anything styled `display: none`, the place of a sound's play button),
and names each picture. Those same
visible pictures are read from Anki's media folder and sent as images (issue 52, item 6),
so that a picture quiz can be reviewed: re-encoded as JPEG within ANKI_REVIEW_IMAGE_MAX_PX
and ANKI_REVIEW_IMAGE_MAX_BYTES, at most ANKI_REVIEW_IMAGES a side. A picture Anki does not
hold, or that Pillow cannot read (an SVG), stays only named in the text.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import lxml.html
from django.conf import settings

from anki_bridge.client import AnkiClient, retrieve_media_file
from anki_bridge.images import ImageProblem, image_prepare

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# where Anki's renderer put a sound or a text-to-speech tag (`{{tts …}}`, `[sound:…]`): a
# play button for the learner, no text (a TTS tag reads a field the side already shows)
_PLAY = re.compile(r"\[anki:play:[qa]:\d+\]")
_HIDDEN = re.compile(r"display\s*:\s*none", re.IGNORECASE)
SHRINK = 0.7  # the long side's factor per try while a picture is over the byte limit
MIN_SIDE = 64  # below this a picture shows nothing useful: given up


@dataclass(frozen=True)
class SideImage:
    """A picture of a card's side, ready for the model."""

    filename: str
    data: bytes
    mime_type: str = "image/jpeg"


def _visible(html: str) -> lxml.html.HtmlElement | None:
    """The side's HTML as the learner sees it (hidden parts dropped); None when empty."""
    html = _PLAY.sub("", _CONTROL.sub("", html))  # lxml refuses controls; Anki shows neither
    if not html.strip():
        return None
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    for gone in root.xpath(".//style|.//script|.//*[contains(concat(' ', @class, ' '), ' hint ')]"):
        gone.drop_tree()
    for hidden in root.xpath(".//*[@style]"):
        if _HIDDEN.search(hidden.get("style", "")) and hidden.getparent() is not None:
            hidden.drop_tree()
    return root


def html_text(html: str) -> str:
    """The text a card's HTML shows: styles, scripts and hidden parts dropped, images
    named, lines kept."""
    root = _visible(html)
    if root is None:
        return ""
    for image in root.xpath(".//img"):
        image.tail = f"[image: {image.get('src', '')}]" + (image.tail or "")
    for block in root.xpath(".//br|.//div|.//p|.//hr|.//li"):
        block.tail = "\n" + (block.tail or "")
    text = root.text_content()
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return "\n".join(line for line in lines if line)


def image_names(html: str) -> list[str]:
    """The media files the side shows, in order, each once: an `<img src>` naming a file of
    Anki's media folder (not an address, not inline data)."""
    root = _visible(html)
    if root is None:
        return []
    names: list[str] = []
    for source in root.xpath(".//img/@src"):
        parts = urlsplit(str(source))
        name = unquote(parts.path)
        if parts.scheme or parts.netloc or not name or "/" in name or name in names:
            continue
        names.append(name)
    return names


def side_images(client: AnkiClient, html: str) -> list[SideImage]:
    """The side's pictures from Anki's media folder, each within the size settings."""
    names = image_names(html)[: settings.ANKI_REVIEW_IMAGES]
    if not names:
        return []
    outcomes = client.multi([retrieve_media_file(name) for name in names])
    images = []
    for name, outcome in zip(names, outcomes, strict=True):
        if not outcome.ok or not isinstance(outcome.result, str):
            continue  # Anki does not hold it (`false`): the text names it
        try:
            fitted = image_fit(base64.b64decode(outcome.result, validate=True))
        except (binascii.Error, ImageProblem):
            continue
        if fitted is not None:
            images.append(SideImage(filename=name, data=fitted))
    return images


def image_fit(data: bytes) -> bytes | None:
    """`data` as a JPEG within ANKI_REVIEW_IMAGE_MAX_PX and ANKI_REVIEW_IMAGE_MAX_BYTES,
    shrunk further while it is over the byte limit; None when Pillow cannot read it."""
    side = settings.ANKI_REVIEW_IMAGE_MAX_PX
    while side >= MIN_SIDE:
        out, encoded = image_prepare(data, max_side=side)
        if not encoded:
            return None
        if len(out) <= settings.ANKI_REVIEW_IMAGE_MAX_BYTES:
            return out
        side = int(side * SHRINK)
    return None
