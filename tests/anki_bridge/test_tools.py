"""The Anki tools through the MCP client, checked against what landed in the collection."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

import pytest
from mcp import Client

from anki_bridge.notemodel import DEFAULT_CSS, DEFAULT_FIELDS, DEFAULT_TEMPLATES
from core.mcp_server import build_server
from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.anki_bridge.conftest import image_format, image_size, png_base64, png_bytes
from tests.conftest import text_of
from tests.hints import hints

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

MODEL = "Поля для ChatGPT"
TOOLS = {
    "greet": {"name"},
    "anki.model_info": {"model"},
    "anki.add_from_model": {"deck", "model", "items"},
    "anki.note_info": {"noteIds"},
    "anki.add_notes": {"deck", "model", "notes"},
    "search": {"query", "limit", "cursor"},
    "anki.add_problems": {"problems", "deck", "tags"},
    "anki.decks": set(),
    "anki.stats": {"deck"},
    "anki.find_notes": {"query", "limit", "offset"},
    "anki.delete_notes": {"note_ids", "confirm_token"},
    "anki.reschedule": {"card_ids", "days"},
    "anki.suspend": {"card_ids"},
    "anki.unsuspend": {"card_ids"},
    "anki.forget": {"card_ids"},
    "anki.update_note": {"note_id", "fields", "tags"},
    "anki.review_start": {"deck", "include_new", "limit"},
    "anki.review_next": {"session"},
    "anki.review_reveal": {"session", "card"},
    "anki.review_rate": {"session", "card", "ease"},
    "anki.export_package": {"items", "variant", "deck", "model"},
}


def client() -> Client:
    return Client(build_server(["anki_bridge"]), read_timeout_seconds=60)


async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with client() as c:
        result = await c.call_tool(name, arguments)
    assert not result.is_error, text_of(result)
    data = json.loads(text_of(result))
    assert data == result.structured_content
    return data  # type: ignore[no-any-return]


async def call_error(name: str, arguments: dict[str, Any]) -> str:
    async with client() as c:
        result = await c.call_tool(name, arguments)
    assert result.is_error
    text = text_of(result)
    assert "Traceback" not in text
    return text


async def test_the_tools_with_their_parameters_and_hints() -> None:
    async with client() as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert set(tools) == set(TOOLS)
    for name, params in TOOLS.items():
        assert set(tools[name].input_schema["properties"]) == params, name
        assert tools[name].input_schema["additionalProperties"] is False
    assert hints(tools["anki.note_info"]).read_only is True
    for reader in ("anki.decks", "anki.stats", "anki.find_notes"):
        assert hints(tools[reader]).read_only is True, reader
    delete = hints(tools["anki.delete_notes"])
    assert (delete.read_only, delete.destructive) == (False, True)
    add = hints(tools["anki.add_from_model"])
    assert (add.read_only, add.destructive, add.open_world) == (False, False, True)
    assert set(tools["anki.add_from_model"].output_schema["properties"]) == {
        "added",
        "skipped",
        "details",
    }


async def test_model_info_creates_the_default_model_from_the_seed(anki: FakeAnki) -> None:
    data = await call("anki.model_info", {})
    assert data == {
        "model": MODEL,
        "fields": list(DEFAULT_FIELDS),
        "templates": DEFAULT_TEMPLATES,
        "styling": DEFAULT_CSS,
    }
    with anki.collection() as col:
        model = col.models.by_name(MODEL)
        assert model is not None
        assert [f["name"] for f in model["flds"]] == list(DEFAULT_FIELDS)
        assert model["tmpls"][0]["qfmt"] == DEFAULT_TEMPLATES["Card 1"]["Front"]


async def test_an_existing_default_model_is_never_changed(anki: FakeAnki) -> None:
    with anki.collection() as col:
        mm = col.models
        model = mm.new(MODEL)
        for name in ("Prompt", "Response"):
            mm.add_field(model, mm.new_field(name))
        template = mm.new_template("Mine")
        template["qfmt"], template["afmt"] = "{{Prompt}}", "{{Response}}"
        mm.add_template(model, template)
        model["css"] = ".card{color:red}"
        mm.add(model)
    data = await call("anki.model_info", {"model": ""})
    assert data["fields"] == ["Prompt", "Response"]
    assert data["styling"] == ".card{color:red}"
    assert data["templates"] == {"Mine": {"Front": "{{Prompt}}", "Back": "{{Response}}"}}
    added = await call("anki.add_from_model", {"items": [{"prompt": "p", "context": "lost"}]})
    assert added["added"] == 1
    assert "unknown_field" in added["details"][0]["warnings"][0]
    with anki.collection() as col:
        assert [f["name"] for f in col.models.by_name(MODEL)["flds"]] == ["Prompt", "Response"]


async def test_an_unknown_model_is_an_error_listing_the_models(anki: FakeAnki) -> None:
    text = await call_error("anki.model_info", {"model": "Nope"})
    assert "model 'Nope' was not found in Anki" in text
    assert "Basic" in text


async def test_add_from_model_takes_both_shapes_of_the_seed_example(anki: FakeAnki) -> None:
    data = await call(
        "anki.add_from_model",
        {
            "deck": "Default",
            "model": MODEL,
            "items": [
                {
                    "Prompt": "Расскажи коротко про столицу Франции",
                    "Response": "Столица Франции — Париж.",
                    "Context": "Основные факты",
                    "Sources": "https://ru.wikipedia.org/wiki/Париж",
                    "tags": ["geo", "de"],
                    "dedup_key": "geo-paris",
                },
                {
                    "fields": {
                        "Sources": "https://ru.wikipedia.org/wiki/Берлин",
                        "Prompt": "Что нужно знать о столице Германии?",
                        "Response": "Столица Германии — Берлин.",
                        "Context": "Краткая справка",
                    },
                    "tags": ["geo", "de"],
                },
            ],
        },
    )
    assert data["added"] == 2
    assert data["skipped"] == 0
    first, second = data["details"]
    assert first["status"] == "ok"
    assert first["dedup_key"] == "geo-paris"
    assert second["status"] == "ok"
    assert "dedup_key" not in second
    notes = {n["id"]: n for n in anki.notes()}
    paris = notes[first["noteId"]]
    assert list(paris["fields"]) == list(DEFAULT_FIELDS)
    assert paris["fields"]["Context"] == "Основные факты"
    assert sorted(paris["tags"]) == ["de", "geo"]
    assert paris["decks"] == ["Default"]
    assert list(notes[second["noteId"]]["fields"].values()) == [
        "Что нужно знать о столице Германии?",
        "Столица Германии — Берлин.",
        "Краткая справка",
        "https://ru.wikipedia.org/wiki/Берлин",
    ]


async def test_add_from_model_creates_the_deck_and_maps_field_names_in_any_case(
    anki: FakeAnki,
) -> None:
    data = await call(
        "anki.add_from_model",
        {"deck": "ChatGPT::Новая", "items": [{"PROMPT": "q", "response": "a", "Bogus": "x"}]},
    )
    assert data["added"] == 1
    warnings = data["details"][0]["warnings"]
    assert len(warnings) == 1
    assert warnings[0].startswith("unknown_field: 'Bogus'")
    (note,) = anki.notes()
    assert note["decks"] == ["ChatGPT::Новая"]
    assert note["fields"] == {"Prompt": "q", "Response": "a", "Context": "", "Sources": ""}


async def test_images_are_resized_stored_and_wrapped_once(anki: FakeAnki) -> None:
    big = png_base64(1000, 500, "blue")
    data = await call(
        "anki.add_from_model",
        {
            "items": [
                {
                    "Prompt": "Что на картинке?",
                    "Response": "Синий прямоугольник",
                    "images": [
                        {"image_base64": big, "target_field": "response", "filename": "blue.png"},
                        {"image_base64": big, "target_field": "RESPONSE", "filename": "blue.png"},
                        {"image_base64": png_base64(), "target_field": "Back"},
                        {"image_base64": png_base64(), "target_field": "Prompt"},
                    ],
                }
            ]
        },
    )
    detail = data["details"][0]
    assert detail["status"] == "ok"
    assert [w.split(":")[0] for w in detail["warnings"]] == ["unknown_target_field"]
    (note,) = anki.notes()
    # Stored as JPEG, so named .jpg whatever the given name said (the bytes decide), with
    # a digest of the bytes: one picture, one file.
    files = anki.media_files()
    (blue,) = [name for name in files if name.startswith("blue-")]
    assert re.fullmatch(r"blue-[0-9a-f]{16}\.jpg", blue)
    wrapper = f'<div><img src="{blue}" style="max-width:100%;height:auto"/></div>'
    assert note["fields"]["Response"] == f"Синий прямоугольник\n\n{wrapper}"
    prompt = note["fields"]["Prompt"]
    assert prompt.startswith('Что на картинке?\n\n<div><img src="image-')
    assert prompt.endswith('.jpg" style="max-width:100%;height:auto"/></div>')
    assert "blue.png" not in files
    assert image_size(files[blue]) == (768, 384)
    assert image_format(files[blue]) == "JPEG"
    unnamed = prompt.split('src="')[1].split('"')[0]
    assert unnamed in files


async def test_data_urls_in_fields_become_sha1_named_files(anki: FakeAnki) -> None:
    raw = png_bytes(10, 10, "green")
    encoded = base64.b64encode(raw).decode()
    data = await call(
        "anki.add_from_model",
        {"items": [{"Prompt": "Зелёный квадрат", "Response": f"DATA:image/PNG;BASE64,{encoded}"}]},
    )
    assert data["added"] == 1
    name = f"img_{hashlib.sha1(raw).hexdigest()}.png"  # noqa: S324
    (note,) = anki.notes()
    assert note["fields"]["Response"] == (
        f'<div><img src="{name}" style="max-width:100%;height:auto"/></div>'
    )
    assert anki.media_files()[name] == raw


async def test_add_notes_sends_fields_as_given(anki: FakeAnki) -> None:
    await call("anki.model_info", {})
    data = await call(
        "anki.add_notes",
        {
            "deck": "Default",
            "model": MODEL,
            "notes": [
                {
                    "fields": {
                        "Prompt": "Это тестовая карточка",
                        "Response": "Ответ добавлен через add_notes.",
                        "Context": "Проверка низкоуровневого метода",
                        "Sources": "",
                    },
                    "tags": [],
                    "images": [{"image_base64": png_base64(), "target_field": "response"}],
                },
                {"fields": {"Prompt": "other", "Bogus": "lost?"}},
            ],
        },
    )
    assert data["added"] == 1
    assert data["skipped"] == 1
    ok, refused = data["details"]
    assert ok["status"] == "ok"
    assert refused["status"] == "error"
    assert "'Bogus' is not a field of «Поля для ChatGPT»" in refused["error"]
    (note,) = anki.notes()
    assert note["fields"]["Response"].startswith("Ответ добавлен через add_notes.\n\n<div><img")


async def test_add_notes_refuses_an_unknown_image_field_and_sends_nothing(anki: FakeAnki) -> None:
    text = await call_error(
        "anki.add_notes",
        {
            "notes": [
                {"fields": {"Prompt": "fine"}},
                {"fields": {"Prompt": "q"}, "images": [{"image_base64": png_base64()}]},
            ]
        },
    )
    assert text == (
        "notes[1].images[0].target_field: 'Back' is not a field of the note (Prompt); "
        "nothing was sent to Anki"
    )
    assert anki.state.requests == []


async def test_add_notes_does_not_create_decks(anki: FakeAnki) -> None:
    data = await call("anki.add_notes", {"deck": "Nowhere", "notes": [{"fields": {"Prompt": "q"}}]})
    assert data["details"][0] == {
        "index": 0,
        "status": "error",
        "error": "deck was not found: Nowhere",
    }
    assert anki.notes() == []


async def test_anki_duplicates_are_skipped_with_the_reason(anki: FakeAnki) -> None:
    items = [{"Prompt": "Один и тот же вопрос"}]
    assert (await call("anki.add_from_model", {"items": items}))["added"] == 1
    data = await call("anki.add_from_model", {"items": [*items, {"Prompt": "новый"}]})
    assert data["added"] == 1
    assert data["skipped"] == 1
    assert data["details"][0]["status"] == "duplicate"
    assert data["details"][0]["error"] == "cannot create note because it is a duplicate"
    assert len(anki.notes()) == 2


async def test_note_info_answers_in_request_order_with_null_for_missing(anki: FakeAnki) -> None:
    added = await call(
        "anki.add_from_model", {"deck": "Geo", "items": [{"Prompt": "Paris", "tags": ["geo"]}]}
    )
    note_id = added["details"][0]["noteId"]
    data = await call("anki.note_info", {"noteIds": [1, note_id]})
    missing, found = data["notes"]
    assert missing is None
    assert found["noteId"] == note_id
    assert found["modelName"] == MODEL
    assert found["deckName"] == "Geo"
    assert found["tags"] == ["geo"]
    assert found["fields"] == {"Prompt": "Paris", "Response": "", "Context": "", "Sources": ""}
    assert len(found["cards"]) == 1


async def test_the_deck_guard_moves_cards_a_buggy_build_files_under_default(
    anki: FakeAnki,
) -> None:
    anki.state.misroute = True
    data = await call("anki.add_from_model", {"deck": "Target", "items": [{"Prompt": "q"}]})
    assert data["added"] == 1
    assert [n["decks"] for n in anki.notes()] == [["Target"]]
    assert "changeDeck" in anki.state.actions()


async def test_older_builds_without_error_detail_still_get_per_note_results(
    anki: FakeAnki,
) -> None:
    anki.state.unsupported = {"canAddNotesWithErrorDetail", "addNotes"}
    await call("anki.add_from_model", {"items": [{"Prompt": "dupe"}]})
    data = await call("anki.add_from_model", {"items": [{"Prompt": "dupe"}, {"Prompt": "new"}]})
    assert [d["status"] for d in data["details"]] == ["duplicate", "ok"]
    assert len(anki.notes()) == 2


async def test_many_notes_with_images_take_a_few_requests(anki: FakeAnki) -> None:
    await call("anki.model_info", {})
    anki.state.requests.clear()
    items = [
        {
            "Prompt": f"q{i}",
            "images": [{"image_base64": png_base64(60, 40), "target_field": "Prompt"}],
        }
        for i in range(30)
    ]
    data = await call("anki.add_from_model", {"deck": "Bulk", "items": items})
    assert data["added"] == 30
    assert len(anki.state.requests) <= 6
    assert "addNotes" not in anki.state.actions()
    assert anki.state.actions().count("addNote") == 30
    assert len(anki.media_files()) == 1  # one picture, stored once


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "items: required argument missing"),
        ({"items": []}, "items: List should have at least 1 item"),
        ({"items": [{"Prompt": ["x"]}]}, "items[0].Prompt: a field value must be a string"),
        ({"items": [{"fields": {"Prompt": "x"}, "tagz": []}]}, "items[0].tagz: unknown key"),
        ({"items": [{"fields": {}}]}, "items[0].fields must hold at least one field"),
        (
            {"items": [{"Prompt": "x", "images": [{"target_field": "Prompt"}]}]},
            "items[0].images.0: Value error, an image needs image_base64 or image_url",
        ),
        (
            {"items": [{"Prompt": "x", "images": [{"image_url": "file:///etc/passwd"}]}]},
            "items[0].images.0.image_url: URL scheme should be 'http' or 'https'",
        ),
        ({"items": [{"Prompt": "x"}], "extra": 1}, "extra: unknown argument"),
    ],
)
async def test_bad_input_names_the_field_and_the_rule(
    anki: FakeAnki, arguments: dict[str, Any], expected: str
) -> None:
    assert expected in await call_error("anki.add_from_model", arguments)
    assert anki.state.requests == [] or "items" in arguments


async def test_anki_closed_is_a_clear_error_naming_anki(anki: FakeAnki) -> None:
    anki.stop()
    text = await call_error("anki.model_info", {})
    assert text == (
        f"Anki is not reachable at {anki.url}: is Anki open with AnkiConnect installed?"
    )
    assert "Anki is not reachable" in await call_error("anki.note_info", {"noteIds": [1]})


async def test_a_tag_changed_and_a_key_repeated_in_one_call_are_said_as_they_are(
    anki: FakeAnki,
) -> None:
    wide = "x\u3000y"  # an ideographic space
    tagged = {"Prompt": "t", "tags": ["a b", wide, "ok"], "dedup_key": "kb"}
    body = await call(
        "anki.add_from_model", {"items": [tagged, {"Prompt": "u", "dedup_key": "kb"}]}
    )
    first, second = body["details"]
    assert first["warnings"] == [
        "tag_renamed: 'a b' is stored as 'a_b' (an Anki tag is one word)",
        f"tag_renamed: {wide!r} is stored as 'x_y' (an Anki tag is one word)",
    ]
    assert second["status"] == "duplicate"
    assert second["error"] == "dedup_key 'kb' is being delivered by an earlier note of this call"
    (note,) = anki.notes()
    assert sorted(note["tags"]) == ["a_b", "ok", "x_y"]


async def test_an_id_past_64_bits_is_refused_naming_it_before_anki_sees_it(anki: FakeAnki) -> None:
    too_big = 2**64 + 7
    for tool, arguments, field in [
        ("anki.note_info", {"noteIds": [too_big]}, "noteIds.0"),
        ("anki.suspend", {"card_ids": [1, too_big]}, "card_ids.1"),
        ("anki.update_note", {"note_id": too_big, "tags": ["x"]}, "note_id"),
    ]:
        text = await call_error(tool, arguments)
        assert field in text, text
        assert "an Anki id is at most 9223372036854775807 (64 bits)" in text
    assert anki.state.requests == []


async def test_a_note_queued_with_a_field_its_model_lacks_is_warned_now(anki: FakeAnki) -> None:
    """Anki closed, the model known from before: the note waits, but the caller hears now
    that Anki will refuse its unknown field (sent while Anki is up, it fails at once)."""
    await call("anki.model_info", {"model": "Basic"})  # seen: its fields are kept
    anki.stop()
    body = await call(
        "anki.add_notes", {"notes": [{"fields": {"Nope": "Queued-Z"}}], "model": "Basic"}
    )
    [detail] = body["details"]
    assert detail["status"] == "queued"
    assert detail["warnings"] == [
        "unknown_field: 'Nope' is not a field of «Basic» (Front, Back); Anki refuses the note"
    ]


async def test_the_api_key_is_sent_and_a_wrong_one_is_explained(anki: FakeAnki, settings) -> None:  # type: ignore[no-untyped-def]
    anki.state.api_key = "s3cret"
    text = await call_error("anki.model_info", {})
    assert "valid api key must be provided" in text
    assert "ANKI_CONNECT_KEY" in text
    settings.ANKI_CONNECT_KEY = "s3cret"
    assert (await call("anki.model_info", {}))["model"] == MODEL


async def test_greet_still_answers() -> None:
    async with client() as c:
        result = await c.call_tool("greet", {"name": "Алиса"})
    assert text_of(result) == "Привет, Алиса! Я твой MCP-сервер."


async def test_each_mcp_caller_adds_their_own_notes_under_their_own_keys(
    anki: FakeAnki, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """Over HTTP each token's user is the caller: Bob's note under the key Alice used is
    his own note, not «duplicate» of hers with her note's id, and each journal row is its
    adder's (`GET /api/anki/notes/` lists it)."""
    from django.contrib.auth import get_user_model

    from anki_bridge import mcp_tools
    from anki_bridge.models import Note
    from tests.conftest import orm

    alice, bob = await orm(
        lambda: [get_user_model().objects.create_user(name) for name in ("alice", "bob")]
    )
    callers = iter([alice, bob, bob, alice])
    monkeypatch.setattr(mcp_tools, "mcp_caller", lambda ctx: next(callers))
    item = {"Prompt": "секрет", "Response": "a", "dedup_key": "k1"}
    tools = [
        ("anki.add_from_model", {"items": [item]}),
        ("anki.add_from_model", {"items": [{**item, "Prompt": "вопрос Боба"}]}),
        ("anki.add_notes", {"notes": [{"fields": {"Prompt": "ещё", "Response": "b"}}]}),
        ("anki.add_notes", {"notes": [{"fields": {"Prompt": "её", "Response": "c"}}]}),
    ]
    details = [(await call(name, arguments))["details"][0] for name, arguments in tools]
    assert [d["status"] for d in details] == ["ok", "ok", "ok", "ok"]
    assert details[0]["noteId"] != details[1]["noteId"]
    owners = await orm(lambda: list(Note.objects.order_by("id").values_list("owner_id", flat=True)))
    assert owners == [alice.pk, bob.pk, bob.pk, alice.pk]
