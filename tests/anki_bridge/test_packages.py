"""Anki packages for people without desktop Anki (issue 53).

Every package is imported into a fresh collection with Anki's own import code (the `anki`
package, the code desktop Anki runs): the notes, their cards, decks and media files are
compared with what was asked. The tool is called through the MCP client, in-process and
over stdio alone (a desktop client with no web server receives the bytes).
"""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.utils import timezone
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import BlobResourceContents, EmbeddedResource, ResourceLink
from rest_framework.test import APIClient

from anki_bridge import packages
from anki_bridge.models import AnkiPackage
from core.exceptions import InvalidInput
from core.identity import stdio_caller
from core.mcp_server import build_server
from problems.models import Problem, Variant
from tests.anki_bridge.conftest import image_size, png_base64
from tests.conftest import MANAGE, PYTHON, ROOT, subprocess_env, text_of

pytestmark = pytest.mark.django_db(transaction=True)

COLORS = ["red", "green", "blue", "yellow", "purple", "orange", "black", "white", "gray", "pink"]


@dataclass
class Imported:
    notes: dict[str, dict[str, Any]]  # first field → note type, fields, tags, decks, cards
    decks: set[str]
    media: dict[str, bytes]
    order: list[str]  # first fields, in the order the notes were made


def anki_import(data: bytes, folder: Path) -> Imported:
    """`data` imported into a new collection in `folder` by Anki's own importer."""
    from anki.collection import (
        Collection,
        ImportAnkiPackageOptions,
        ImportAnkiPackageRequest,
    )

    folder.mkdir(parents=True, exist_ok=True)
    package = folder / "in.apkg"
    package.write_bytes(data)
    collection = Collection(str(folder / "collection.anki2"))
    try:
        collection.import_anki_package(
            ImportAnkiPackageRequest(
                package_path=str(package),
                options=ImportAnkiPackageOptions(with_scheduling=False, with_deck_configs=False),
            )
        )
        notes = {}
        collection_order = {}
        for note_id in collection.find_notes(""):
            note = collection.get_note(note_id)
            collection_order[note_id] = note.fields[0]
            cards = note.cards()
            notes[note.fields[0]] = {
                "model": note.note_type()["name"],  # type: ignore[index]
                "fields": list(note.fields),
                "tags": sorted(note.tags),
                "decks": {collection.decks.name(card.did) for card in cards},
                "cards": len(cards),
                "guid": note.guid,
            }
        decks = {d.name for d in collection.decks.all_names_and_ids()}
        media_dir = Path(collection.media.dir())
        media = {path.name: path.read_bytes() for path in media_dir.iterdir() if path.is_file()}
    finally:
        collection.close()
    order = [collection_order[k] for k in sorted(collection_order)]
    return Imported(notes=notes, decks=decks, media=media, order=order)


@pytest.fixture
def media_root(settings, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.SITE_URL = "http://127.0.0.1:9"  # no web process: the bytes must come with the answer
    return tmp_path


def fifty_items() -> list[dict[str, Any]]:
    """49 Basic notes, ten with pictures that all claim the name `image.png`."""
    items: list[dict[str, Any]] = []
    for n in range(49):
        item: dict[str, Any] = {
            "fields": {"Front": f"Вопрос {n}: сколько будет {n} + {n}?", "Back": str(2 * n)},
            "tags": ["арифметика", f"урок {n % 3}"],
        }
        if n < 10:
            item["images"] = [
                {"image_base64": png_base64(40 + n, 30, COLORS[n]), "filename": "image.png"}
            ]
        items.append(item)
    return items


def test_fifty_notes_with_pictures_and_a_cloze_import_whole_into_a_fresh_collection(
    media_root: Path,
) -> None:
    basic = packages.package_build(
        items=fifty_items(), deck="Математика::Устный счёт", model="Basic"
    )
    cloze = packages.package_build(
        items=[{"Text": "Столица Франции — {{c1::Париж}}", "Back Extra": "Европа"}],
        deck="Математика::Устный счёт",
        model="cloze",
    )
    assert (basic.notes, basic.cards, basic.media) == (49, 49, 10)

    collection = anki_import(basic.data, media_root / "anki")
    again = anki_import(cloze.data, media_root / "anki")  # the same collection, second import

    assert {"Математика", "Математика::Устный счёт"} <= again.decks
    assert len(again.notes) == 50
    for n, item in enumerate(fifty_items()):
        note = again.notes[item["fields"]["Front"]]
        assert note["model"].startswith("Basic")
        assert note["decks"] == {"Математика::Устный счёт"}
        assert note["cards"] == 1
        assert note["tags"] == sorted(["арифметика", f"урок_{n % 3}"])
        back = note["fields"][1]
        assert back.startswith(str(2 * n))
        if n < 10:  # each note shows its own picture: ten different files, none overwritten
            (name,) = [f for f in collection.media if f'src="{f}"' in back]
            assert name.startswith("image-")
            assert image_size(collection.media[name]) == (40 + n, 30)  # its own picture
        else:
            assert "<img" not in back
    assert len(set(collection.media)) == 10
    cloze_note = again.notes["Столица Франции — {{c1::Париж}}"]
    assert cloze_note["model"].startswith("Cloze")
    assert cloze_note["cards"] == 1
    assert cloze_note["fields"][1] == "Европа"


def test_a_package_imported_twice_updates_its_notes_instead_of_adding_them(
    media_root: Path,
) -> None:
    items = [{"Front": "2 + 2", "Back": "4"}, {"Front": "3 + 3", "Back": "6"}]
    first = packages.package_build(items=items, deck="Счёт", model="Basic")
    second = packages.package_build(items=items, deck="Счёт", model="Basic")
    anki_import(first.data, media_root / "anki")
    imported = anki_import(second.data, media_root / "anki")
    assert len(imported.notes) == 2


def test_a_repeated_note_is_left_out_as_anki_would_and_said_so() -> None:
    built = packages.package_build(
        items=[
            {"Front": "2 + 2", "Back": "4"},
            {"Front": " 2 +  2 ", "Back": "5"},
            {"fields": {"Front": "a"}, "dedup_key": "k"},
            {"fields": {"Front": "b"}, "dedup_key": "k"},
        ],
        model="Basic",
    )
    assert built.notes == 2
    assert [d.status for d in built.details] == ["ok", "duplicate", "ok", "duplicate"]
    assert built.details[1].warnings == ["the same note as items[0]"]


@pytest.mark.parametrize(
    ("arguments", "field", "rule"),
    [
        ({"model": "Cloze", "items": [{"Text": "Париж"}]}, "items[0].fields.Text", "c1::"),
        (
            {"model": "Basic", "items": [{"Front": "", "Back": "4"}]},
            "items[0].fields.Front",
            "empty",
        ),
        ({"model": "Моя модель", "items": [{"Front": "a"}]}, "model", "Basic"),
        ({"model": "Basic", "items": [{"Front": "a", "Back": ["x"]}]}, "items[0].Back", "string"),
    ],
)
def test_bad_notes_are_refused_before_anything_is_built(
    arguments: dict[str, Any], field: str, rule: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        packages.package_build(**arguments)
    assert caught.value.field == field
    assert rule in caught.value.message


def test_the_tool_embeds_a_small_package_and_links_a_large_one_the_caller_s_alone(
    media_root: Path, settings
) -> None:  # type: ignore[no-untyped-def]
    stranger = get_user_model().objects.create_user(username="stranger")
    foreign = AnkiPackage.objects.create(
        owner=stranger, name="x.apkg", deck="x", file="anki_packages/x.apkg",
        expires_at=timezone.now() + timedelta(hours=1),
    )  # fmt: skip

    async def run() -> tuple[Any, Any, Any, Any]:
        async with Client(build_server(["anki_bridge"]), read_timeout_seconds=60) as client:
            small = await client.call_tool(
                "anki.export_package",
                {"items": [{"Front": "2 + 2", "Back": "4"}], "deck": "Счёт", "model": "Basic"},
            )
            settings.ANKI_PACKAGE_EMBED_MAX = 100  # smaller than any package
            large = await client.call_tool(
                "anki.export_package", {"items": fifty_items(), "model": "Basic"}
            )
            read = await client.read_resource(large.structured_content["resource"])
            with pytest.raises(MCPError) as refused:
                await client.read_resource(f"anki://package/{foreign.public_id}")
        return small, large, read, refused.value

    small, large, read, refused = asyncio.run(run())
    assert not small.is_error, text_of(small)
    embedded = [c for c in small.content if isinstance(c, EmbeddedResource)]
    assert isinstance(embedded[0].resource, BlobResourceContents)
    assert embedded[0].resource.mime_type == "application/apkg"
    data = base64.b64decode(embedded[0].resource.blob)
    assert anki_import(data, media_root / "small").notes["2 + 2"]["fields"] == ["2 + 2", "4"]
    made = small.structured_content
    assert (made["notes"], made["cards"], made["embedded"], made["name"]) == (
        1,
        1,
        True,
        "Счёт.apkg",
    )

    assert not large.is_error, text_of(large)
    assert large.structured_content["embedded"] is False
    assert [c for c in large.content if isinstance(c, ResourceLink)]
    blob = base64.b64decode(read.contents[0].blob)
    assert len(anki_import(blob, media_root / "large").notes) == 49
    assert "no package" in str(refused)


def test_a_variant_becomes_a_teacher_s_deck_in_its_order_answers_on_the_back(
    media_root: Path,
) -> None:
    conditions = {
        "27340": "В треугольнике ABC угол C равен 90°. Найдите косинус A.",
        "27341": "Найдите площадь трапеции с основаниями 6 и 10 и высотой 5.",
    }
    for pid, condition in conditions.items():
        Problem.objects.create(
            subject="math", exam="ege", problem_id=pid, type_number="1",
            condition_text=condition, answer=pid[-2:], solution_text=f"Решение {pid}.",
            solution_kind="own", fetched_at=timezone.now(),
        )  # fmt: skip
    variant = Variant.objects.create(
        owner=stdio_caller(), subject="math", exam="ege", tasks={"1": 2}, seed=1,
        problem_ids=["27341", "27340"],
    )  # fmt: skip

    async def run() -> Any:
        async with Client(build_server(["anki_bridge"]), read_timeout_seconds=60) as client:
            return await client.call_tool("anki.export_package", {"variant": variant.public_id})

    result = asyncio.run(run())
    assert not result.is_error, text_of(result)
    (embedded,) = [c for c in result.content if isinstance(c, EmbeddedResource)]
    imported = anki_import(base64.b64decode(embedded.resource.blob), media_root / "anki")  # type: ignore[union-attr]
    assert len(imported.notes) == 2
    assert conditions["27341"] in imported.order[0]  # the variant's order
    deck = f"СДАМ ГИА::Математика профильная ЕГЭ::Вариант {variant.public_id}"
    for pid, condition in conditions.items():
        (note,) = [n for front, n in imported.notes.items() if condition in front]
        assert note["decks"] == {deck}
        assert f"<b>Ответ:</b> {pid[-2:]}" in note["fields"][1]
        assert f"Решение {pid}." in note["fields"][1]
        assert condition not in note["fields"][1]


def test_packages_expire_and_a_user_keeps_at_most_the_newest(media_root: Path, settings) -> None:  # type: ignore[no-untyped-def]
    settings.ANKI_PACKAGE_MAX_PER_USER = 2
    owner = get_user_model().objects.create_user(username="teacher")
    built = packages.package_build(items=[{"Front": "a", "Back": "b"}], model="Basic")
    made = [packages.package_store(built=built, owner_id=owner.pk) for _ in range(3)]
    kept = set(AnkiPackage.objects.filter(owner=owner).values_list("public_id", flat=True))
    assert kept == {made[1].public_id, made[2].public_id}
    assert not default_storage.exists(made[0].file)
    assert default_storage.exists(made[2].file)

    AnkiPackage.objects.filter(pk=made[1].pk).update(expires_at=timezone.now() - timedelta(1))
    with pytest.raises(Exception, match="no package"):
        packages.package_get(owner_id=owner.pk, public_id=made[1].public_id)
    assert packages.packages_expire() == 1
    assert not default_storage.exists(made[1].file)
    assert AnkiPackage.objects.filter(owner=owner).count() == 1


def test_rest_builds_a_package_and_serves_it_to_its_owner_only(media_root: Path) -> None:
    users = get_user_model().objects
    owner, other = users.create_user(username="owner"), users.create_user(username="other")
    api = APIClient()
    api.force_authenticate(owner)
    made = api.post(
        "/api/anki/packages/",
        {"items": [{"Front": "2 + 2", "Back": "4"}], "model": "Basic", "deck": "Счёт"},
        format="json",
    )
    assert made.status_code == 201, made.content
    download = api.get(f"/api/anki/packages/{made.json()['package']}/")
    assert download.status_code == 200
    assert download["Content-Type"] == "application/apkg"
    assert (
        "Счёт.apkg" in download["Content-Disposition"] or "%D0" in download["Content-Disposition"]
    )
    assert anki_import(download.content, media_root / "rest").notes["2 + 2"]["cards"] == 1

    api.force_authenticate(other)
    assert api.get(f"/api/anki/packages/{made.json()['package']}/").status_code == 404
    both = api.post(
        "/api/anki/packages/", {"items": [{"Front": "a"}], "variant": "x"}, format="json"
    )
    assert both.status_code == 400
    assert "items" in both.content.decode()


def test_over_stdio_alone_a_client_receives_the_package(  # type: ignore[no-untyped-def]
    subprocess_db_env, tmp_path: Path
) -> None:
    env = subprocess_env(
        **subprocess_db_env,
        DJANGO_MEDIA_ROOT=str(tmp_path / "media"),
        SITE_URL="http://127.0.0.1:9",
        ANKI_PACKAGE_EMBED_MAX="0",  # always a link: the bytes come by resources/read
    )
    params = StdioServerParameters(
        command=PYTHON, args=[MANAGE, "runmcp", "--apps", "anki_bridge"], cwd=str(ROOT), env=env
    )
    items = [{"Front": "Сколько сторон у треугольника?", "Back": "3",
              "images": [{"image_base64": png_base64(), "filename": "diagram.png"}]}]  # fmt: skip

    async def run() -> tuple[Any, Any]:
        async with Client(params, read_timeout_seconds=90) as client:
            made = await client.call_tool(
                "anki.export_package", {"items": items, "model": "Basic", "deck": "Геометрия"}
            )
            read = await client.read_resource(made.structured_content["resource"])
        return made, read

    made, read = asyncio.run(run())
    assert not made.is_error, text_of(made)
    data = base64.b64decode(read.contents[0].blob)
    imported = anki_import(data, tmp_path / "anki")
    note = imported.notes["Сколько сторон у треугольника?"]
    assert note["decks"] == {"Геометрия"}
    (name,) = imported.media
    assert name.startswith("diagram-")
    assert f'src="{name}"' in note["fields"][1]


def test_the_problems_admin_exports_the_selected_problems_as_a_package(media_root: Path) -> None:
    from django.test import Client as WebClient

    for pid in ("27340", "27341"):
        Problem.objects.create(
            subject="math", exam="ege", problem_id=pid, type_number="1",
            condition_text=f"Условие {pid}", answer=pid[-1], fetched_at=timezone.now(),
        )  # fmt: skip
    staff = get_user_model().objects.create_superuser(username="admin", password="x")
    web = WebClient()
    web.force_login(staff)
    chosen = list(Problem.objects.values_list("pk", flat=True))
    answer = web.post(
        "/admin/problems/problem/",
        {"action": "export_package", "_selected_action": chosen},
    )
    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/apkg"
    imported = anki_import(answer.content, media_root / "admin")
    assert sorted(imported.order) == ["Условие 27340", "Условие 27341"]
    assert all(note["decks"] == {"СДАМ ГИА"} for note in imported.notes.values())
