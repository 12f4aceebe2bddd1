"""Problems and catalogs as resources, the problem prompts, completion (issue 16).

Through the SDK client; the СДАМ ГИА and Anki stand-ins answer on 127.0.0.1. The prompt
`problems_to_flashcards` is followed by a scripted model to the tools it names.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import PromptReference, ResourceTemplateReference

from core.mcp_server import build_server
from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.problems.blocks import block, listing
from tests.problems.fake_site import FakeSite, serve
from tests.problems.test_crawl_and_admin import CATALOG
from tests.prompt_script import follow, plan

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

PROBLEM = "sdamgia://{subject}/{exam}/problem/{id}"


@pytest.fixture
def site(settings) -> Iterator[FakeSite]:  # type: ignore[no-untyped-def]
    fake = FakeSite()
    server, template = serve(fake)
    settings.SDAMGIA_URL_TEMPLATE = template
    settings.SDAMGIA_MIN_INTERVAL = 0
    settings.SDAMGIA_RETRIES = 0
    fake.add_page("math-ege", "/prob_catalog", {}, CATALOG)
    ids = {"79": ["1", "2", "3"], "90": ["6", "7"]}
    for category, numbers in ids.items():
        blocks = [(pid, block(pid, f"Задача {pid} категории {category}.")) for pid in numbers]
        fake.add_page(
            "math-ege",
            "/test",
            {"filter": "all", "category_id": category, "page": 1},
            listing(blocks, page=1, total=1),
        )
        for pid, html in blocks:
            fake.add_problem("math-ege", pid, html)
    fake.add_problem(
        "math-ege",
        "27340",
        block("27340", "Найдите площадь треугольника.", figure="https://math-ege.example/f.png"),
    )
    yield fake
    server.shutdown()
    server.server_close()


async def test_templates_are_listed_and_a_problem_reads_as_markdown_with_its_figure(site) -> None:  # type: ignore[no-untyped-def]
    async with Client(build_server()) as client:
        templates = {
            t.uri_template for t in (await client.list_resource_templates()).resource_templates
        }
        assert {PROBLEM, "sdamgia://{subject}/{exam}/catalog", "norms://document/{id}",
                "norms://page/{id}", "norms://page/{id}/image", "normagpt://run/{id}"} <= templates  # fmt: skip
        read = await client.read_resource("sdamgia://math/ege/problem/27340")
        text = read.contents[0].text  # type: ignore[union-attr]
        assert "Найдите площадь треугольника." in text
        assert "![figure](https://math-ege.example/f.png)" in text
        assert read.contents[0].mime_type == "text/markdown"
        catalog = (await client.read_resource("sdamgia://math/ege/catalog")).contents[0]
        assert "`79` Прямоугольный треугольник" in catalog.text  # type: ignore[union-attr]


async def test_an_unknown_problem_or_subject_is_a_protocol_error_naming_it(site) -> None:  # type: ignore[no-untyped-def]
    async with Client(build_server()) as client:
        with pytest.raises(MCPError) as missing:
            await client.read_resource("sdamgia://math/ege/problem/999999")
        assert missing.value.error.code == -32002
        assert "999999" in missing.value.error.message
        with pytest.raises(MCPError) as bad:
            await client.read_resource("sdamgia://latin/ege/catalog")
        assert bad.value.error.code == -32602
        assert "latin" in bad.value.error.message


async def test_subject_exam_and_category_complete(site) -> None:  # type: ignore[no-untyped-def]
    prompt = PromptReference(type="ref/prompt", name="problems_to_flashcards")
    async with Client(build_server()) as client:
        subject = await client.complete(prompt, {"name": "subject", "value": "инф"})
        assert subject.completion.values[0] == "inf"
        assert (
            "math"
            in (
                await client.complete(prompt, {"name": "subject", "value": "проф"})
            ).completion.values
        )
        exam = await client.complete(prompt, {"name": "exam", "value": "ог"})
        assert exam.completion.values == ["oge"]
        await client.read_resource("sdamgia://math/ege/catalog")  # stores the catalog
        template = ResourceTemplateReference(type="ref/resource", uri=PROBLEM)
        category = await client.complete(
            prompt,
            {"name": "category_id", "value": "Прям"},
            context_arguments={"subject": "math", "exam": "ege"},
        )
        assert category.completion.values == ["79"]
        assert (
            await client.complete(template, {"name": "exam", "value": "e"})
        ).completion.values == ["ege"]


@pytest.fixture
def anki(tmp_path, settings) -> Iterator[FakeAnki]:  # type: ignore[no-untyped-def]
    fake = FakeAnki(tmp_path)
    settings.ANKI_CONNECT_URL = fake.url
    yield fake
    fake.stop()


async def test_problems_to_flashcards_leads_a_model_through_the_tools_to_cards(site, anki) -> None:  # type: ignore[no-untyped-def]
    arguments = {
        "subject": "математика",
        "topic": "прямоугольный треугольник",
        "count": "3",
        "deck": "ЕГЭ",
    }
    async with Client(build_server(), read_timeout_seconds=60) as client:
        prompt = await client.get_prompt("problems_to_flashcards", arguments)
        text = prompt.messages[0].content.text  # type: ignore[union-attr]
        assert [tool for tool, _ in plan(text)] == [
            "sdamgia_get_catalog", "sdamgia_get_category_problems", "anki.add_problems",
        ]  # fmt: skip

        def decide(tool: str, result: Any, values: dict[str, Any]) -> None:
            data = result.structured_content
            if tool == "sdamgia_get_catalog":  # the model picks the category by its title
                categories = [c for t in data["topics"] for c in t["categories"]]
                values["category id"] = next(
                    c["id"] for c in categories if c["title"].lower() == arguments["topic"]
                )
            elif tool == "sdamgia_get_category_problems":
                values["problem id"] = data["ids"]

        called = await follow(client, text, decide)
        english = await client.get_prompt("problems_to_flashcards", {**arguments, "language": "en"})
    assert called == ["sdamgia_get_catalog", "sdamgia_get_category_problems", "anki.add_problems"]
    notes = anki.notes()
    assert len(notes) == 3
    assert all(note["decks"] == ["ЕГЭ"] for note in notes)
    assert "Make Anki flashcards" in english.messages[0].content.text  # type: ignore[union-attr]


async def test_find_problem_from_text_leads_to_the_problem(site, settings) -> None:  # type: ignore[no-untyped-def]
    site.search_engine = True
    async with Client(build_server(), read_timeout_seconds=60) as client:
        prompt = await client.get_prompt(
            "find_problem_from_text", {"subject": "math", "text": "Найдите площадь треугольника."}
        )
        text = prompt.messages[0].content.text  # type: ignore[union-attr]

        def decide(tool: str, result: Any, values: dict[str, Any]) -> None:
            if tool == "sdamgia_search_by_text":
                values["id of the best match"] = result.structured_content["matches"][0]["id"]
            else:
                assert "Найдите площадь треугольника." in json.dumps(
                    result.structured_content, ensure_ascii=False
                )

        called = await follow(client, text, decide)
    assert called == ["sdamgia_search_by_text", "sdamgia_get_problem"]
