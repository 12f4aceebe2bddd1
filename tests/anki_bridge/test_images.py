"""Images: the wrapper, data URLs, resizing, and the careful fetch of image_url."""

from __future__ import annotations

import base64
import io
import re
import time
from typing import Any

import pytest
from PIL import Image
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from anki_bridge import images
from anki_bridge.images import (
    ImageProblem,
    content_name,
    data_urls_extract,
    ensure_img_tag,
    image_prepare,
    media_name,
)
from core import image_fetch as image_client
from core.image_fetch import address_refusal, image_fetch
from tests.anki_bridge.conftest import image_format, image_size, png_bytes

WRAP = '<div><img src="{}" style="max-width:100%;height:auto"/></div>'


def test_the_wrapper_goes_after_a_blank_line_and_never_twice() -> None:
    assert ensure_img_tag("", "a.jpg") == WRAP.format("a.jpg")
    once = ensure_img_tag("Текст", "a.jpg")
    assert once == "Текст\n\n" + WRAP.format("a.jpg")
    assert ensure_img_tag(once, "a.jpg") == once
    assert ensure_img_tag('<img src="a.jpg">', "a.jpg") == '<img src="a.jpg">'
    assert ensure_img_tag(once, "b.jpg").count("<img") == 2


def test_a_field_showing_the_asked_name_shows_the_file_renamed_not_a_second_image() -> None:
    shown = 'Схема: <img src="there.png">'
    renamed = ensure_img_tag(shown, "there.jpg", asked="there.png")  # PNG stored as JPEG
    assert renamed == 'Схема: <img src="there.jpg">'
    assert ensure_img_tag("Схема", "there.jpg", asked="there.png").count("<img") == 1


@pytest.mark.django_db(transaction=True)
def test_a_delivered_note_shows_its_image_once(anki) -> None:  # type: ignore[no-untyped-def]
    """Through the tool's use case to Anki: the field that showed `there.png` shows the
    stored file once."""
    from anki_bridge import services

    image = {"image_base64": base64.b64encode(png_bytes(900, 300)).decode(),
             "filename": "there.png", "target_field": "Prompt"}  # fmt: skip
    item = {"Prompt": 'Схема: <img src="there.png">', "images": [image]}
    (detail,) = services.notes_add_from_model(items=[item], deck="Картинки").details
    assert detail.status == "ok"
    (note,) = anki.notes()
    prompt = note["fields"]["Prompt"]
    assert prompt.count("<img") == 1
    (name,) = [part.split('"')[0] for part in prompt.split('src="')[1:]]
    assert name in anki.media_files()


def test_data_urls_in_any_case_become_files_named_by_sha1() -> None:
    raw = png_bytes(5, 5)
    encoded = base64.b64encode(raw).decode()
    fields, media, warnings = data_urls_extract(
        {
            "A": f"data:image/png;base64,{encoded}",
            "B": f"  DATA:IMAGE/JPEG;BASE64,{encoded}\n",
            "C": f'before <img src="data:image/gif;base64,{encoded}"> after',
            "D": "data:image/png;base64,@@not base64@@",
            "E": "plain text",
        }
    )
    digest = __import__("hashlib").sha1(raw).hexdigest()
    # The extension is the bytes' own: PNG bytes stay .png under any declared type.
    assert fields["A"] == WRAP.format(f"img_{digest}.png")
    assert fields["B"] == WRAP.format(f"img_{digest}.png")
    assert fields["C"] == f'before <img src="img_{digest}.png"> after'
    assert fields["D"] == ""
    assert fields["E"] == "plain text"
    assert [m.filename for m in media] == [f"img_{digest}.png"] * 3
    assert all(m.data == raw for m in media)
    assert warnings == ["image_invalid: field D: image_base64 is not valid base64"]


def test_bytes_that_are_no_picture_are_left_out_not_sent_as_a_broken_one() -> None:
    """A data URL of junk or of a PNG cut short would be a broken picture on the card: left
    out with a warning. A drawing (SVG) and a format Pillow may lack (AVIF) are kept."""
    cut = png_bytes(40, 40)[:60]
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"/>'
    avif = b"\x00\x00\x00\x1cftypavif" + b"\x00" * 40

    def url(data: bytes, mime: str = "image/png") -> str:
        return f"data:{mime};base64,{base64.b64encode(data).decode()}"

    fields, media, warnings = data_urls_extract(
        {
            "Junk": url(b"GIF89a garbage", "image/gif"),
            "Cut": f'before <img src="{url(cut)}"> after',
            "Svg": url(svg, "image/svg+xml"),
            "Avif": url(avif, "image/avif"),
        }
    )
    assert fields["Junk"] == ""
    assert [m.filename.rsplit(".", 1)[1] for m in media] == ["svg", "avif"]
    assert warnings == [
        "image_invalid: field Junk: the data URL holds a broken GIF file; left out",
        "image_invalid: field Cut: the data URL holds a broken PNG file; left out",
    ]
    assert images.image_unreadable(b"not an image at all") == (
        "no picture (not PNG, JPEG, GIF, WebP, SVG, AVIF or HEIC)"
    )
    assert images.image_unreadable(png_bytes(5, 5)) is None


def _encoded(image: Image.Image, kind: str, **options: Any) -> bytes:
    out = io.BytesIO()
    image.save(out, kind, **options)
    return out.getvalue()


def test_real_kinds_pass_and_cut_ones_do_not() -> None:
    """Pillow's `verify` reads no JPEG or GIF: a file cut short is told by decoding it.
    Progressive, CMYK, 16-bit and animated pictures are pictures."""
    rgb = Image.new("RGB", (64, 48), "red")
    frames = [Image.new("P", (32, 32), i) for i in range(3)]
    good = {
        "progressive JPEG": _encoded(rgb, "JPEG", progressive=True),
        "CMYK JPEG": _encoded(rgb.convert("CMYK"), "JPEG"),
        "16-bit PNG": _encoded(Image.new("I;16", (20, 20), 4000), "PNG"),
        "animated GIF": _encoded(frames[0], "GIF", save_all=True, append_images=frames[1:]),
        "WebP": _encoded(rgb, "WEBP"),
    }
    for name, data in good.items():
        assert images.image_unreadable(data) is None, name
    big = _encoded(Image.effect_noise((400, 400), 64).convert("RGB"), "JPEG")
    assert images.image_unreadable(big[: len(big) // 2]) == "a broken JPG file"
    gif = good["animated GIF"]
    assert images.image_unreadable(gif[:40]) == "a broken GIF file"


def test_a_data_url_bomb_is_refused_with_a_warning_not_a_crash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(images, "MAX_PIXELS", 100)
    encoded = base64.b64encode(png_bytes(20, 20)).decode()
    fields, media, warnings = data_urls_extract({"A": f"data:image/png;base64,{encoded}"})
    assert (fields["A"], media) == ("", [])
    assert warnings == ["image_refused: field A: 20×20 pixels is over the 100-pixel limit"]


def test_a_heif_file_is_named_by_its_brands() -> None:
    def ftyp(major: bytes, *compatible: bytes) -> bytes:
        body = major + b"\x00\x00\x00\x00" + b"".join(compatible)
        return (8 + len(body)).to_bytes(4, "big") + b"ftyp" + body + b"\x00" * 16

    assert images.sniff_ext(ftyp(b"avif", b"mif1")) == "avif"
    assert images.sniff_ext(ftyp(b"mif1", b"mif1", b"avif")) == "avif"
    assert images.sniff_ext(ftyp(b"mif1", b"mif1", b"heic")) == "heic"
    assert images.sniff_ext(ftyp(b"isom", b"mp41")) == "bin"  # a video


def test_images_are_resized_to_max_side_as_jpeg_and_others_kept() -> None:
    data, converted = image_prepare(png_bytes(1000, 1000), max_side=768)
    assert converted
    assert image_size(data) == (768, 768)
    assert image_format(data) == "JPEG"
    small, converted = image_prepare(png_bytes(100, 50), max_side=768)
    assert converted
    assert image_size(small) == (100, 50)
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"/>'
    assert image_prepare(svg, max_side=768) == (svg, False)


def test_transparent_images_are_flattened_on_white() -> None:
    buffer = io.BytesIO()
    Image.new("RGBA", (20, 20), (255, 0, 0, 0)).save(buffer, "PNG")
    data, _ = image_prepare(buffer.getvalue(), max_side=768)
    with Image.open(io.BytesIO(data)) as image:
        assert image.getpixel((5, 5)) == (255, 255, 255)


def test_decompression_bombs_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(images, "MAX_PIXELS", 10_000)
    with pytest.raises(ImageProblem, match="over the 10,000-pixel limit"):
        image_prepare(png_bytes(200, 200), max_side=768)


def test_media_names_are_what_anki_stores() -> None:
    assert media_name("sub/dir/ФОТО:1?.png") == "ФОТО1.png"
    assert media_name("..\\x.png") == "x.png"
    assert media_name(None) == media_name("???") == "image.jpg"


def test_a_stored_name_is_the_given_stem_and_a_digest_of_the_content() -> None:
    red, blue = png_bytes(color="red"), png_bytes(color="blue")
    assert re.fullmatch(r"diagram-[0-9a-f]{16}\.png", content_name("diagram.png", red))
    assert content_name("diagram.png", red) != content_name("diagram.png", blue)
    named = content_name("diagram.png", red)
    assert content_name(named, red) == named  # named already: kept
    assert re.fullmatch(r"noext-[0-9a-f]{16}", content_name("noext", red))
    long = content_name("я" * 100 + ".jpg", red)
    assert len(long.encode()) <= 120  # Anki cuts longer names, the digest with them
    assert long.endswith(".jpg")
    assert long.startswith("яя")


@pytest.mark.parametrize(
    ("ip", "refused"),
    [
        ("127.0.0.1", "loopback"),
        ("10.1.2.3", "private"),
        ("192.168.0.5", "private"),
        ("169.254.169.254", "cloud metadata"),
        ("169.254.1.1", "link-local"),
        ("::1", "loopback"),
        ("fe80::1", "link-local"),
        ("::ffff:127.0.0.1", "loopback"),
        ("0.0.0.0", "private"),
        ("::", "address"),
        ("224.0.0.1", "multicast"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("93.184.216.34", None),
    ],
)
def test_non_public_addresses_are_refused(ip: str, refused: str | None) -> None:
    reason = address_refusal(ip)
    if refused is None:
        assert reason is None
    else:
        assert reason is not None
        assert refused in reason


@pytest.fixture
def public_names(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """`img.test` is the local server, seen as a public host; `intranet.test` is private."""
    names = {"img.test": "127.0.0.1", "intranet.test": "10.0.0.7"}
    monkeypatch.setattr(image_client, "_resolve", lambda host, port: [names.get(host, "127.0.0.1")])
    real = image_client.address_refusal
    monkeypatch.setattr(
        image_client,
        "address_refusal",
        lambda ip, **kw: None if ip == "127.0.0.1" else real(ip, **kw),
    )
    return names


def fetch(url: str, **kwargs: Any) -> bytes:
    options = {
        "allow_private": False,
        "private_setting": "ANKI_IMAGE_ALLOW_PRIVATE",
        "max_bytes": 1_000_000,
        "timeout": 5.0,
        **kwargs,
    }
    return image_fetch(url, **options)


def test_a_loopback_url_is_refused_unless_allowed(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/a.png").respond_with_data(png_bytes(), content_type="image/png")
    with pytest.raises(ImageProblem, match=r"127\.0\.0\.1 is a loopback address") as caught:
        fetch(httpserver.url_for("/a.png"))
    assert caught.value.code == "image_refused"
    assert "ANKI_IMAGE_ALLOW_PRIVATE" in caught.value.message
    assert fetch(httpserver.url_for("/a.png"), allow_private=True) == png_bytes()


def test_only_http_urls_are_fetched() -> None:
    with pytest.raises(ImageProblem, match="only http"):
        fetch("file:///etc/passwd")


def test_the_connection_is_pinned_and_the_host_kept(
    httpserver: HTTPServer, public_names: dict[str, str]
) -> None:
    seen: list[str] = []

    def handler(request: Request) -> Response:
        seen.append(request.headers["Host"])
        return Response(png_bytes(), content_type="image/png")

    httpserver.expect_request("/p.png").respond_with_handler(handler)
    assert fetch(f"http://img.test:{httpserver.port}/p.png") == png_bytes()
    assert seen == [f"img.test:{httpserver.port}"]


def test_redirects_are_checked_like_the_first_url(
    httpserver: HTTPServer, public_names: dict[str, str]
) -> None:
    httpserver.expect_request("/to-intranet").respond_with_response(
        Response(status=302, headers={"Location": "http://intranet.test/secret.png"})
    )
    httpserver.expect_request("/to-file").respond_with_response(
        Response(status=301, headers={"Location": "file:///etc/passwd"})
    )
    httpserver.expect_request("/hop").respond_with_response(
        Response(status=302, headers={"Location": "/final.png"})
    )
    httpserver.expect_request("/final.png").respond_with_data(b"ok-bytes")
    base = f"http://img.test:{httpserver.port}"
    with pytest.raises(ImageProblem, match=r"10\.0\.0\.7 is a private address"):
        fetch(f"{base}/to-intranet")
    with pytest.raises(ImageProblem, match="only http"):
        fetch(f"{base}/to-file")
    assert fetch(f"{base}/hop") == b"ok-bytes"


def test_bodies_over_the_cap_and_errors_are_refused(
    httpserver: HTTPServer, public_names: dict[str, str]
) -> None:
    httpserver.expect_request("/big").respond_with_data(b"x" * 5000)
    httpserver.expect_request("/gone").respond_with_data(b"", status=404)
    base = f"http://img.test:{httpserver.port}"
    with pytest.raises(ImageProblem, match="over the 1000-byte cap"):
        fetch(f"{base}/big", max_bytes=1000)
    with pytest.raises(ImageProblem, match="HTTP 404"):
        fetch(f"{base}/gone")


def test_a_slow_server_hits_the_timeout(
    httpserver: HTTPServer, public_names: dict[str, str]
) -> None:
    def slow(request: Request) -> Response:
        time.sleep(1.5)
        return Response(b"late")

    httpserver.expect_request("/slow").respond_with_handler(slow)
    with pytest.raises(ImageProblem, match="timed out") as caught:
        fetch(f"http://img.test:{httpserver.port}/slow", timeout=0.3)
    assert caught.value.code == "image_failed"
