"""Image files as Anki gets them: the extension the bytes call for, the default field, all cores."""

from __future__ import annotations

import base64
import hashlib
import io
import re
import threading
import time
from typing import Any

import pytest
from PIL import Image

from anki_bridge import drafts, media_upload, services
from anki_bridge.drafts import name_for_bytes
from anki_bridge.images import data_urls_extract, sniff_ext
from anki_bridge.models import Note
from anki_bridge.notemodel import DEFAULT_MODEL, NoteModel
from core.exceptions import InvalidInput
from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.anki_bridge.conftest import image_format, png_base64

pytestmark = pytest.mark.django_db(transaction=True)

SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4"/></svg>'


def jpeg_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), "red").save(buffer, "JPEG")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("given", "ext", "stored"),
    [
        ("diagram.png", "jpg", "diagram.jpg"),
        ("photo.JPEG", "jpg", "photo.JPEG"),
        ("photo.jpg", "jpg", "photo.jpg"),
        ("drawing.png", "svg", "drawing.svg"),
        ("blob.dat", "bin", "blob.dat"),
        ("noext", "jpg", "noext.jpg"),
        ("noext", "bin", "noext"),
        ("archive.tar.png", "jpg", "archive.tar.jpg"),
    ],
)
def test_a_name_takes_the_extension_its_bytes_call_for(given: str, ext: str, stored: str) -> None:
    assert name_for_bytes(given, ext) == stored


def test_sniffing_knows_the_common_kinds() -> None:
    assert sniff_ext(jpeg_bytes()) == "jpg"
    assert sniff_ext(base64.b64decode(png_base64())) == "png"
    assert sniff_ext(SVG) == "svg"
    assert sniff_ext(b"plain") == "bin"


def test_a_data_url_declaring_png_but_holding_jpeg_is_a_jpg() -> None:
    encoded = base64.b64encode(jpeg_bytes()).decode()
    fields, (file,), _ = data_urls_extract({"A": f"data:image/png;base64,{encoded}"})
    assert file.filename.endswith(".jpg")
    assert file.filename in fields["A"]


def test_png_and_svg_named_png_reach_anki_under_their_bytes_extension(anki: FakeAnki) -> None:
    svg = base64.b64encode(SVG).decode()
    result = services.notes_add_from_model(
        items=[
            {
                "Prompt": "p",
                "images": [
                    {
                        "image_base64": png_base64(60, 40),
                        "target_field": "Prompt",
                        "filename": "diagram.png",
                    },
                    {"image_base64": svg, "target_field": "Response", "filename": "drawing.png"},
                ],
            }
        ]
    )
    assert result.details[0].status == "ok"
    files = anki.media_files()
    named = {name.split("-")[0]: name for name in files}
    assert image_format(files[named["diagram"]]) == "JPEG"
    assert named["diagram"].endswith(".jpg")
    assert files[named["drawing"]] == SVG
    assert named["drawing"] == f"drawing-{hashlib.sha256(SVG).hexdigest()[:16]}.svg"
    (note,) = anki.notes()
    assert f'src="{named["diagram"]}"' in note["fields"]["Prompt"]
    assert f'src="{named["drawing"]}"' in note["fields"]["Response"]


def test_an_image_that_is_no_picture_is_left_out_with_a_warning(anki: FakeAnki) -> None:
    junk = base64.b64encode(b"not an image at all").decode()
    image = {"image_base64": junk, "target_field": "Prompt", "filename": "x.png"}
    result = services.notes_add_from_model(items=[{"Prompt": "img", "images": [image]}])
    [detail] = result.details
    assert detail.status == "ok"
    assert detail.warnings == [
        "image_invalid: items[0].images[0]: the image is no picture (not PNG, JPEG, GIF, "
        "WebP, SVG, AVIF or HEIC); left out"
    ]
    assert anki.media_files() == {}
    (note,) = anki.notes()
    assert note["fields"]["Prompt"] == "img"


# --- the default image field -------------------------------------------------------------


def test_the_back_field_is_read_from_the_card_templates() -> None:
    assert DEFAULT_MODEL.back_field() == "Response"
    basic = NoteModel(
        name="Basic",
        fields=("Front", "Back"),
        templates={"Card 1": {"Front": "{{Front}}", "Back": "{{FrontSide}}<hr id=answer>{{Back}}"}},
    )
    assert basic.back_field() == "Back"
    filtered = NoteModel(
        name="x",
        fields=("Q", "A", "Extra"),
        templates={
            "c": {"Front": "{{text:Q}}", "Back": "{{FrontSide}}{{#Extra}}{{Extra}}{{/Extra}}{{A}}"}
        },
    )
    assert filtered.back_field() == "Extra"
    assert NoteModel(name="none", fields=("Q",), templates={}).back_field() is None


def test_an_image_without_a_field_goes_to_the_back_of_the_default_model(anki: FakeAnki) -> None:
    result = services.notes_add_from_model(
        items=[
            {"Prompt": "Что это?", "Response": "Ответ", "images": [{"image_base64": png_base64()}]}
        ]
    )
    (detail,) = result.details
    assert detail.status == "ok"
    (warning,) = detail.warnings or []
    assert warning.startswith("image_field: items[0].images[0]:")
    assert "'Response'" in warning
    (note,) = anki.notes()
    assert note["fields"]["Response"].startswith("Ответ\n\n<div><img src=")
    assert "<img" not in note["fields"]["Prompt"]


def test_an_explicit_back_keeps_the_seed_rules(anki: FakeAnki) -> None:
    image: dict[str, Any] = {"image_base64": png_base64(), "target_field": "Back"}
    result = services.notes_add_from_model(items=[{"Prompt": "q", "images": [image]}])
    (detail,) = result.details
    assert [w.split(":")[0] for w in detail.warnings or []] == ["unknown_target_field"]
    with pytest.raises(InvalidInput) as caught:
        services.notes_add(notes=[{"fields": {"Prompt": "q", "Response": "a"}, "images": [image]}])
    assert caught.value.field == "notes[0].images[0].target_field"


def test_add_notes_puts_a_default_image_in_the_models_back_field_when_the_note_has_it(
    anki: FakeAnki,
) -> None:
    services.model_info_get()
    image = {"image_base64": png_base64()}
    result = services.notes_add(
        notes=[{"fields": {"Prompt": "q", "Response": "a"}, "images": [image]}]
    )
    assert result.details[0].status == "ok"
    assert "<img" in anki.notes()[0]["fields"]["Response"]
    with pytest.raises(InvalidInput) as caught:
        services.notes_add(notes=[{"fields": {"Prompt": "only"}, "images": [image]}])
    assert caught.value.field == "notes[0].images[0].target_field"


# --- preparation on every core -----------------------------------------------------------


def test_images_are_prepared_on_several_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drafts.os, "cpu_count", lambda: 4)
    threads: set[int] = set()
    finish = drafts.image_finish

    def recorded(*args: Any) -> drafts.Loaded:
        threads.add(threading.get_ident())
        time.sleep(0.05)  # long enough for the pool's threads to overlap
        return finish(*args)

    monkeypatch.setattr(drafts, "image_finish", recorded)
    notes = [
        drafts.NoteInput(
            fields={"Prompt": f"q{i}"},
            images=[{"image_base64": png_base64(), "target_field": "Prompt"}],
        )
        for i in range(8)
    ]
    built = drafts.drafts_build(
        notes, name="items", fields_of=lambda n: (dict(n.fields), []), target_of=lambda n, t: t
    )
    assert len(threads) > 1
    assert [d.fields["Prompt"].split("\n")[0] for d in built] == [f"q{i}" for i in range(8)]
    assert all(d.media for d in built)


def snapshots(count: int = 6) -> list[dict[str, Any]]:
    """Notes «Снимок i», each with a PNG of its own size (40 + i) × 30 in Response."""
    return [
        {
            "Prompt": f"Снимок {i}",
            "images": [{"image_base64": png_base64(40 + i, 30), "target_field": "Response"}],
        }
        for i in range(count)
    ]


def last_image_held_until(
    anki: FakeAnki, monkeypatch: pytest.MonkeyPatch, action: str, last: int = 5
) -> list[bool]:
    """Hold the image of note `last` back until Anki has seen `action` (60 s at most: a
    busy machine); the list it returns gets whether it had, once that image goes on."""
    finish = drafts.image_finish
    seen_before_last: list[bool] = []

    def held_back(spec: Any, data: bytes, where: str) -> drafts.Loaded:
        if where == f"items[{last}].images[0]":
            deadline = time.monotonic() + 60
            while action not in anki.state.actions() and time.monotonic() < deadline:
                time.sleep(0.01)
            seen_before_last.append(action in anki.state.actions())
        return finish(spec, data, where)

    monkeypatch.setattr(drafts, "image_finish", held_back)
    return seen_before_last


def test_anki_stores_images_while_the_others_are_still_prepared(
    anki: FakeAnki, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last image is held back until Anki has stored some of the others: with no
    sending ahead, the call would stall here and find nothing stored. Each file is then
    stored once, and every note shows its own image."""
    monkeypatch.setattr(media_upload, "AHEAD_FILES", 2)
    monkeypatch.setattr(drafts.os, "cpu_count", lambda: 2)
    stored_before_last = last_image_held_until(anki, monkeypatch, "storeMediaFile")
    result = services.notes_add_from_model(items=snapshots())
    assert stored_before_last == [True]
    assert [d.status for d in result.details] == ["ok"] * 6
    assert anki.state.actions().count("storeMediaFile") == 6  # none sent twice
    shown = {n["fields"]["Prompt"]: n["fields"]["Response"] for n in anki.notes()}
    files = anki.media_files()
    for i in range(6):
        (name,) = re.findall(r'src="([^"]+)"', shown[f"Снимок {i}"])
        assert Image.open(io.BytesIO(files[name])).size == (40 + i, 30)


def test_the_first_notes_reach_anki_while_the_last_image_is_prepared(
    anki: FakeAnki, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last image is held back until Anki has added a note: with the notes sent only
    once every image is ready, the call would stall here and find none added. The notes
    still reach Anki in the order given, each once, in the asked deck (one changeDeck for
    every wave), every journal row with its note id."""
    monkeypatch.setattr(drafts, "WAVE_NOTES", 1)  # a wave while one note is prepared
    monkeypatch.setattr(drafts.os, "cpu_count", lambda: 2)
    added_before_last = last_image_held_until(anki, monkeypatch, "addNote")
    result = services.notes_add_from_model(items=snapshots(), deck="Волны")
    assert added_before_last == [True]
    assert [d.status for d in result.details] == ["ok"] * 6
    assert anki.state.actions().count("addNote") == 6
    assert anki.state.actions().count("changeDeck") == 1  # every wave's cards moved at once
    notes = sorted(anki.notes(), key=lambda n: n["id"])
    assert [n["fields"]["Prompt"] for n in notes] == [f"Снимок {i}" for i in range(6)]
    assert all(n["decks"] == ["Волны"] for n in notes)
    assert {d.noteId for d in result.details} == {n["id"] for n in notes}
    rows = Note.objects.order_by("pk")
    assert [r.status for r in rows] == [Note.Status.SENT] * 6
    assert [r.anki_note_id for r in rows] == [d.noteId for d in result.details]
    assert all(r.placed and not r.claim for r in rows)
