"""The sdamgia_* tools through the MCP client (in process): contract, formats, errors."""

from __future__ import annotations

import json

import pytest
from mcp import Client

from core.mcp_server import build_server
from tests.conftest import text_of
from tests.hints import hints
from tests.problems.blocks import block, id_only, listing, search_results

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

TOOLS = {
    "sdamgia_get_problem": {"subject", "problem_id", "exam", "response_format", "refresh"},
    "sdamgia_search_by_image": {
        "subject",
        "image_base64",
        "image_url",
        "exam",
        "threshold",
        "limit",
        "response_format",
        "refresh",
    },
    "sdamgia_search_problems": {
        "subject",
        "query",
        "exam",
        "limit",
        "offset",
        "response_format",
        "refresh",
    },
    "sdamgia_search_by_text": {
        "subject",
        "condition_text",
        "exam",
        "threshold",
        "limit",
        "refresh",
        "response_format",
    },
    "sdamgia_batch_get_problems": {"subject", "problem_ids", "exam", "response_format", "refresh"},
    "sdamgia_get_catalog": {"subject", "exam", "response_format", "refresh"},
    "sdamgia_get_category_problems": {
        "subject",
        "category_id",
        "exam",
        "limit",
        "offset",
        "response_format",
        "refresh",
    },
    "sdamgia_get_test": {"subject", "test_id", "exam", "response_format", "refresh"},
    "sdamgia_check_answer": {"subject", "problem_id", "answer", "exam", "reveal"},
    "sdamgia_make_variant": {"subject", "tasks", "exam", "seed", "source"},
    "sdamgia_variant_pdf": {"variant", "with_solutions", "copies"},
    "sdamgia_check_variant": {"variant", "answers"},
    "sdamgia_random_problem": {
        "subject",
        "task_number",
        "category_id",
        "exam",
        "exclude_seen",
        "response_format",
        "reveal",
    },
}

# (changes something, closed world) where a tool is not a read of the site
CHANGES = {
    "sdamgia_make_variant": (True, False),
    "sdamgia_variant_pdf": (True, False),
    "sdamgia_random_problem": (True, False),  # records what the learner was given
    "sdamgia_check_variant": (False, True),  # the stored answers only
}


def client() -> Client:
    return Client(build_server(["problems"]), read_timeout_seconds=30)


async def test_the_tools_with_their_parameters_and_output_schemas() -> None:
    async with client() as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert set(tools) == set(TOOLS)
    for name, params in TOOLS.items():
        schema = tools[name].input_schema
        assert set(schema["properties"]) == params, name
        assert schema["additionalProperties"] is False
        # a random problem is shaped as sdamgia_get_problem declares it, a photo search's
        # result as sdamgia_search_by_text's
        shared = name in {"sdamgia_random_problem", "sdamgia_search_by_image"}
        assert (tools[name].output_schema is None) == shared, name
        changes, closed = CHANGES.get(name, (False, False))
        assert hints(tools[name]).read_only is not changes, name
        assert hints(tools[name]).open_world is not closed, name
    limit = tools["sdamgia_search_problems"].input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 50, 20)
    threshold = tools["sdamgia_search_by_text"].input_schema["properties"]["threshold"]
    assert (threshold["minimum"], threshold["maximum"], threshold["default"]) == (0, 1, 0.6)


async def test_bounds_left_out_of_the_schema_are_still_checked_naming_the_field() -> None:
    """A subject's and a variant id's length limits are not advertised (tools/list
    budget), yet refused before anything runs, with the field and the rule named."""
    async with client() as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        long_subject = await c.call_tool(
            "sdamgia_get_problem", {"subject": "m" * 61, "problem_id": "1"}
        )
        empty_variant = await c.call_tool("sdamgia_check_variant", {"variant": "", "answers": {}})
    assert "maxLength" not in tools["sdamgia_get_problem"].input_schema["properties"]["subject"]
    assert long_subject.is_error
    assert "subject: String should have at most 60 characters" in text_of(long_subject)
    assert empty_variant.is_error
    assert "variant: String should have at least 1 character" in text_of(empty_variant)


async def test_get_problem_markdown_and_json(fake_site) -> None:  # type: ignore[no-untyped-def]
    fake_site.add_problem(
        "math-ege",
        "27340",
        block("27340", "Найдите косинус угла A.", answer="0,5|1/2", analogs=("33999",)),
    )
    async with client() as c:
        md = await c.call_tool("sdamgia_get_problem", {"subject": "math", "problem_id": "27340"})
        js = await c.call_tool(
            "sdamgia_get_problem",
            {"subject": "профмат", "problem_id": "27340", "response_format": "json"},
        )
    assert not md.is_error
    text = text_of(md)
    assert text.startswith("# Problem 27340 (math-ege)")
    assert "## Answer\n0,5" in text
    data = json.loads(text_of(js))
    assert data["answers"] == ["0,5", "1/2"]
    assert data["analogs"] == ["33999"]
    assert js.structured_content == data
    assert (
        len(fake_site.requests_to("/problem")) == 1
    )  # the second call was served from the database


@pytest.mark.parametrize(
    ("tool", "arguments", "fragment"),
    [
        (
            "sdamgia_get_problem",
            {"subject": "math", "problem_id": "12a"},
            "problem_id: String should match pattern",
        ),
        (
            "sdamgia_get_problem",
            {"subject": "math", "problem_id": "1", "page": 2},
            "page: unknown argument",
        ),
        (
            "sdamgia_get_problem",
            {"subject": "mathb", "exam": "oge", "problem_id": "1"},
            "exists only for ege, not for oge",
        ),
        (
            "sdamgia_get_problem",
            {"subject": "ruso", "problem_id": "1"},
            "exists only for oge, not for ege",
        ),
        (
            "sdamgia_search_problems",
            {"subject": "math", "query": "ab"},
            "query: String should have at least 3 characters",
        ),
        (
            "sdamgia_search_problems",
            {"subject": "math", "query": "abc", "limit": 51},
            "limit: Input should be less than or equal to 50",
        ),
        (
            "sdamgia_search_by_text",
            {"subject": "math", "condition_text": "short"},
            "condition_text: String should have at least 10 characters",
        ),
        (
            "sdamgia_search_by_text",
            {"subject": "math", "condition_text": "x" * 20, "threshold": 1.5},
            "threshold: Input should be less than or equal to 1",
        ),
        (
            "sdamgia_batch_get_problems",
            {"subject": "math", "problem_ids": []},
            "problem_ids: List should have at least 1 item",
        ),
        (
            "sdamgia_batch_get_problems",
            {"subject": "math", "problem_ids": [str(i) for i in range(51)]},
            "problem_ids: List should have at most 50 items",
        ),
        (
            "sdamgia_get_category_problems",
            {"subject": "math", "category_id": "79", "offset": -1},
            "offset: Input should be greater than or equal to 0",
        ),
        ("sdamgia_get_test", {"subject": "math"}, "test_id: required argument missing"),
        (
            "sdamgia_get_catalog",
            {"subject": "math", "response_format": "xml"},
            "response_format: Input should be 'markdown' or 'json'",
        ),
    ],
)
async def test_bad_arguments_name_the_field_and_make_no_request(
    fake_site, tool, arguments, fragment
) -> None:  # type: ignore[no-untyped-def]
    async with client() as c:
        result = await c.call_tool(tool, arguments)
    assert result.is_error
    assert fragment in text_of(result)
    assert fake_site.requests == []


async def test_upstream_failure_is_a_tool_error_naming_the_service(fake_site) -> None:  # type: ignore[no-untyped-def]
    from tests.problems.fake_site import Fault

    fake_site.faults.append(Fault("status", status=503))
    async with client() as c:
        result = await c.call_tool("sdamgia_get_problem", {"subject": "math", "problem_id": "1"})
    assert result.is_error
    assert text_of(result).startswith("СДАМ ГИА is unavailable: HTTP 503")


async def test_batch_tool_reports_per_id_errors(fake_site) -> None:  # type: ignore[no-untyped-def]
    fake_site.add_problem("math-ege", "1", block("1", "Первая задача про квадрат."))
    async with client() as c:
        result = await c.call_tool(
            "sdamgia_batch_get_problems",
            {"subject": "math", "problem_ids": ["1", "2"], "response_format": "json"},
        )
    data = result.structured_content
    assert [p["id"] for p in data["problems"]] == ["1"]
    assert data["errors"] == [
        {
            "id": "2",
            "code": "problem_not_found",
            "message": "problem 2 was not found on math-ege.sdamgia.ru",
        }
    ]


async def test_search_tools_and_category_listing(fake_site) -> None:  # type: ignore[no-untyped-def]
    blocks = [block(str(10 + i), f"Задача номер {i} о вероятности.") for i in range(3)]
    fake_site.add_page(
        "math-ege", "/search", {"search": "вероятность", "page": 1}, search_results(blocks)
    )
    fake_site.add_page(
        "math-ege",
        "/test",
        {"filter": "all", "category_id": "4", "page": 1},
        listing([(str(10 + i), b) for i, b in enumerate(blocks)], page=1, total=1),
    )
    async with client() as c:
        search = await c.call_tool(
            "sdamgia_search_problems",
            {"subject": "math", "query": "вероятность", "response_format": "json"},
        )
        category = await c.call_tool(
            "sdamgia_get_category_problems", {"subject": "math", "category_id": "4"}
        )
    assert search.structured_content["ids"] == ["10", "11", "12"]
    assert "# category 4: 3 of 3 problems from offset 0" in text_of(category)


async def test_search_by_text_reports_progress_and_ranks(fake_site) -> None:  # type: ignore[no-untyped-def]
    texts = {
        str(
            100 + i
        ): f"В треугольнике ABC угол C равен 90°, AC = {a}, BC = {b}. Найдите синус угла A."
        for i, (a, b) in enumerate([(24, 7), (12, 5), (8, 6)])
    }
    for pid, text in texts.items():
        fake_site.add_problem("math-ege", pid, block(pid, text))
    page = "<html><body>" + search_results([id_only(pid) for pid in texts]) + "</body></html>"
    original = fake_site.respond
    fake_site.respond = lambda site, path, params: (
        (200, page) if path == "/search" else original(site, path, params)
    )
    progress: list[tuple[float, float | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    async with client() as c:
        result = await c.call_tool(
            "sdamgia_search_by_text",
            {
                "subject": "math",
                "condition_text": "треугольнике ABC угол C равен 9о, AC = 12, BC = 5, найдите синус",
                "response_format": "json",
            },
            progress_callback=on_progress,
        )
    data = result.structured_content
    assert data["matches"][0]["id"] == "101"
    assert data["fetched"] == 3
    assert progress
    assert progress[-1] == (3, 3)


def test_page(blocks_html: str) -> str:
    return f'<html><body><div class="new_header"><b>Вариант № 555</b></div><div class="prob_list">{blocks_html}</div></body></html>'


test_page.__test__ = False  # type: ignore[attr-defined]


async def test_get_test_lists_ids_or_says_they_are_hidden(fake_site) -> None:  # type: ignore[no-untyped-def]
    visible = "".join(block(pid, f"Задача варианта {pid}.") for pid in ("11", "12", "13"))
    hidden = "".join(
        f'<div class="prob_maindiv" data-num="{n}" data-id="{900 + n}"><span class="prob_nums">Тип {n} № </span>'
        f'<div class="pbody" id="body{900 + n}">Скрытая задача {n}.</div></div>'
        for n in (1, 2)
    )
    fake_site.add_page("math-ege", "/test", {"id": "555"}, test_page(visible))
    fake_site.add_page("math-ege", "/test", {"id": "556"}, test_page(hidden))
    async with client() as c:
        shown = await c.call_tool(
            "sdamgia_get_test", {"subject": "math", "test_id": "555", "response_format": "json"}
        )
        secret = await c.call_tool("sdamgia_get_test", {"subject": "math", "test_id": "556"})
    assert shown.structured_content["ids"] == ["11", "12", "13"]
    assert shown.structured_content["title"] == "Вариант № 555"
    assert "2 problems; problem numbers hidden by the test's author." in text_of(secret)
    assert secret.structured_content["ids"] == []
    assert secret.structured_content["ids_hidden"] is True


async def test_get_catalog_tool(fake_site) -> None:  # type: ignore[no-untyped-def]
    from tests.problems.test_crawl_and_admin import CATALOG

    fake_site.add_page("math-ege", "/prob_catalog", {}, CATALOG)
    async with client() as c:
        result = await c.call_tool("sdamgia_get_catalog", {"subject": "math"})
        again = await c.call_tool(
            "sdamgia_get_catalog", {"subject": "math", "response_format": "json"}
        )
    assert "## 1. Планиметрия — 7" in text_of(result)
    assert "- `79` Прямоугольный треугольник (5)" in text_of(result)
    assert [c["id"] for c in again.structured_content["topics"][0]["categories"]] == ["79", "90"]
    assert len(fake_site.requests_to("/prob_catalog")) == 1
