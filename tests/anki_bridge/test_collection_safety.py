"""The user's collection is never damaged and a card's answer never shows early (issue 52,
items 1, 2 and 5): through the SDK client, on the stand-in, which replaces a media file of
the same name and renders cards with Anki's own code, as the real add-on does."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from mcp import Client
from PIL import Image

from anki_bridge import services
from anki_bridge.models import Note
from core.mcp_server import build_server
from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.anki_bridge.conftest import png_base64, png_bytes
from tests.conftest import orm, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

SRC = re.compile(r'src="([^"]+)"')


def client() -> Client:
    return Client(build_server(["anki_bridge"]), read_timeout_seconds=60)


async def call(c: Client, tool: str, **arguments: Any) -> Any:
    result = await c.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    return result.structured_content


async def refused(c: Client, tool: str, **arguments: Any) -> str:
    result = await c.call_tool(tool, arguments)
    assert result.is_error, json.dumps(result.structured_content, ensure_ascii=False)
    return text_of(result)


def colour(data: bytes) -> tuple[int, int, int]:
    with Image.open(io.BytesIO(data)) as image:
        return image.convert("RGB").getpixel((image.width // 2, image.height // 2))  # type: ignore[return-value]


def picture(note: dict[str, Any], files: dict[str, bytes]) -> str:
    """The colour name of the picture the note's Prompt shows (its file as Anki holds it)."""
    (name,) = SRC.findall(note["fields"]["Prompt"])
    red, green, blue = colour(files[name])
    return max(("red", red), ("green", green), ("blue", blue), key=lambda kv: kv[1])[0]


def photo_note(text: str, color: str, width: int = 60) -> dict[str, Any]:
    image = {"image_base64": png_base64(width, 40, color), "target_field": "Prompt"}
    return {"Prompt": text, "images": [{**image, "filename": "photo.jpg"}]}


async def test_pictures_never_overwrite_each_other_or_the_users_own(anki: FakeAnki) -> None:
    """The user's own photo.jpg (shown by a note of theirs) survives two calls that each
    send a different picture named photo.jpg; each note shows its own picture, and a
    picture sent again is stored once, not uploaded again."""
    users = png_bytes(60, 40, "green")

    def users_own() -> None:
        with anki.collection() as col:
            col.media.write_data("photo.jpg", users)
            note = col.new_note(col.models.by_name("Basic"))
            note["Front"], note["Back"] = 'Моё фото <img src="photo.jpg">', "моё"
            col.add_note(note, col.decks.id("Default"))

    await orm(users_own)
    async with client() as c:
        first = await call(
            c,
            "anki.add_from_model",
            items=[photo_note("красное", "red"), photo_note("синее", "blue")],
        )
        assert first["added"] == 2
        anki.state.requests.clear()
        again = await call(
            c,
            "anki.add_from_model",
            items=[photo_note("снова красное", "red"), photo_note("другое синее", "blue", 50)],
        )
        assert again["added"] == 2
        assert not any(detail.get("warnings") for detail in again["details"])
    assert anki.state.actions().count("storeMediaFile") == 1  # Anki held the red one
    files = anki.media_files()
    assert files["photo.jpg"] == users
    shown = {n["fields"]["Prompt"].split("\n")[0]: n for n in anki.notes('"note:Поля для ChatGPT"')}
    assert {text: picture(note, files) for text, note in shown.items()} == {
        "красное": "red",
        "синее": "blue",
        "снова красное": "red",
        "другое синее": "blue",
    }
    names = {text: SRC.findall(note["fields"]["Prompt"])[0] for text, note in shown.items()}
    assert names["красное"] == names["снова красное"]
    assert len({names["красное"], names["синее"], names["другое синее"]}) == 3
    assert all(re.fullmatch(r"photo-[0-9a-f]{16}\.jpg", name) for name in names.values())


# --- nothing of a card's back before its reveal --------------------------------------------

DECK = "Химия"


def notes_of_every_kind(anki: FakeAnki) -> None:
    """A basic note, a cloze of one deletion, a cloze of two, a reversed note; and a basic
    one in «химия::органика» typed in another case."""
    with anki.collection() as col:
        deck = col.decks.id(DECK)
        kinds = {
            "Basic": {"Front": "Формула воды", "Back": "ОТВЕТ-H2O"},
            "Cloze": {"Text": "Символ натрия — {{c1::ОТВЕТ-Na}}"},
            "Basic (and reversed card)": {"Front": "ОТВЕТ-соль", "Back": "ОТВЕТ-NaCl"},
        }
        for model, fields in kinds.items():
            note = col.new_note(col.models.by_name(model))
            for name, value in fields.items():
                note[name] = value
            col.add_note(note, deck)
        two = col.new_note(col.models.by_name("Cloze"))
        two["Text"] = "{{c1::ОТВЕТ-Fe}} — железо, {{c2::ОТВЕТ-Cu}} — медь"
        col.add_note(two, deck)


async def test_the_deck_resource_shows_fronts_and_no_answer(anki: FakeAnki) -> None:
    await orm(notes_of_every_kind, anki)
    async with client() as c:
        read = await c.read_resource("anki://deck/химия")  # Anki ignores the case
    text = read.contents[0].text  # type: ignore[union-attr]
    assert text.startswith(f"# {DECK}\n")
    assert "Формула воды" in text
    assert "Символ натрия — [...]" in text  # as Anki renders the cloze's front
    assert "ОТВЕТ" not in text, text  # no back, no deletion, no reversed card's answer
    assert text.count("2 cards, text hidden") == 2


# --- strict inputs -------------------------------------------------------------------------


@pytest.mark.parametrize("ease", [True, "3", 3.0, 0, 5])
async def test_a_rating_is_an_integer_from_1_to_4(anki: FakeAnki, ease: Any) -> None:
    """`true` is not «Again», nor "3" «Good»: refused naming `ease`, nothing rated."""
    await orm(notes_of_every_kind, anki)
    async with client() as c:
        started = await call(c, "anki.review_start", deck=DECK, include_new=True)
        card = (await call(c, "anki.review_next", session=started["session"]))["card"]
        await call(c, "anki.review_reveal", session=started["session"], card=card)
        text = await refused(
            c, "anki.review_rate", session=started["session"], card=card, ease=ease
        )
    assert "ease" in text
    with anki.collection() as col:
        assert col.db.scalar("select count() from revlog") == 0


async def test_a_delete_token_deletes_once(anki: FakeAnki) -> None:
    await orm(notes_of_every_kind, anki)
    ids = [note["id"] for note in anki.notes('"note:Basic"')]
    async with client() as c:
        token = (await call(c, "anki.delete_notes", note_ids=ids))["confirm_token"]
        deleted = await call(c, "anki.delete_notes", note_ids=ids, confirm_token=token)
        assert deleted["deleted"] == ids
        again = await refused(c, "anki.delete_notes", note_ids=ids, confirm_token=token)
    assert "confirm_token: already used" in again


async def test_a_note_deleted_through_the_hub_frees_its_dedup_key(anki: FakeAnki) -> None:
    """Deleted, a note's key names no note: adding under it again makes the new note, not a
    «duplicate» of one that is gone."""
    async with client() as c:
        item = {"Prompt": "Del me", "dedup_key": "del-7"}
        [first] = (await call(c, "anki.add_from_model", items=[item], deck="Del"))["details"]
        token = (await call(c, "anki.delete_notes", note_ids=[first["noteId"]]))["confirm_token"]
        await call(c, "anki.delete_notes", note_ids=[first["noteId"]], confirm_token=token)
        again = {"Prompt": "Del me (again)", "dedup_key": "del-7"}
        [second] = (await call(c, "anki.add_from_model", items=[again], deck="Del"))["details"]
        assert second["status"] == "ok", second
        [kept] = (await call(c, "anki.add_from_model", items=[again], deck="Del"))["details"]
    assert kept["status"] == "duplicate"  # the key names the new note now
    assert kept["noteId"] == second["noteId"] != first["noteId"]
    assert [n["fields"]["Prompt"] for n in anki.notes('"deck:Del"')] == ["Del me (again)"]
    gone = await orm(lambda: Note.objects.get(anki_note_id=first["noteId"]))
    assert gone.last_error == ("dedup_key 'del-7' freed: the note was deleted (anki.delete_notes)")


async def test_a_note_the_user_deleted_in_anki_is_added_again_under_its_key(
    anki: FakeAnki,
) -> None:
    """The user deleted the card in Anki itself; asked to add it again, the hub adds it (with
    its picture) rather than answer «duplicate» with the id of a note that is gone."""
    async with client() as c:
        item = {**photo_note("Снова", "red"), "dedup_key": "gone-1"}
        [first] = (await call(c, "anki.add_from_model", items=[item], deck="Gone"))["details"]
        with anki.collection() as col:
            col.remove_notes([first["noteId"]])
        [second] = (await call(c, "anki.add_from_model", items=[item], deck="Gone"))["details"]
    assert second["status"] == "ok", second
    [note] = anki.notes('"deck:Gone"')
    assert note["id"] == second["noteId"] != first["noteId"]
    assert picture(note, anki.media_files()) == "red"


async def test_deck_names_are_matched_as_anki_matches_them(anki: FakeAnki) -> None:
    """Typed in another case, a deck is found by the statistics and the review as by add."""
    await orm(notes_of_every_kind, anki)
    async with client() as c:
        stats = await call(c, "anki.stats", deck="хИМИЯ")
        started = await call(c, "anki.review_start", deck="хИМИЯ", include_new=True)
        missing = await refused(c, "anki.stats", deck="Химия2")
    assert stats["deck"] == DECK
    assert stats["cards"]["total"] == 6
    assert started["deck"] == DECK
    assert started["cards"] == 6
    assert "no deck named 'Химия2'" in missing
    assert [d.name for d in (await orm(services.decks_list)).decks] == [DECK]  # none made


@pytest.mark.parametrize("tool", ["anki.add_from_model", "anki.add_notes"])
async def test_a_cloze_note_without_a_deletion_is_refused_naming_the_field(
    anki: FakeAnki, tool: str
) -> None:
    notes = [{"fields": {"text": "{{c1::Fe}} — железо"}}, {"fields": {"text": "Fe — железо"}}]
    async with client() as c:
        await call(c, "anki.model_info", model="Cloze")  # add_notes knows models seen
        anki.state.requests.clear()
        key = "items" if tool == "anki.add_from_model" else "notes"
        text = await refused(c, tool, model="Cloze", deck=DECK, **{key: notes})
    assert text == (
        f"{key}[1].fields.text: a note of the cloze type «Cloze» needs a deletion such as "
        "{{c1::answer}}; nothing was sent to Anki"
    )
    assert "addNote" not in anki.state.actions()
