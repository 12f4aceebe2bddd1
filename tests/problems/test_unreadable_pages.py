"""Pages that are not what they should be: a domain error naming the site and the page, never
"Internal error" and never "0 results"; figure URLs keep the template's path (issue 12, item 6)."""

from __future__ import annotations

import pytest
from mcp import Client

from core.mcp_server import build_server
from problems import catalog, services
from problems.exceptions import SdamgiaBadPage
from problems.parsing import parse_problem_block, parse_search_page
from problems.subjects import Site
from tests.conftest import text_of
from tests.problems.blocks import block, search_results
from tests.problems.fake_site import PAGE

MATH = Site("math", "ege")
GARBAGE = [
    "<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>",
    PAGE.format(body="<p>Сайт на обслуживании</p>"),
    '{"error": "rate limited"}',
]


@pytest.mark.django_db
@pytest.mark.parametrize("html", GARBAGE)
def test_a_garbage_catalog_is_a_domain_error_naming_the_site_and_page(fake_site, html: str) -> None:  # type: ignore[no-untyped-def]
    fake_site.add_page("math-ege", "/prob_catalog", {}, html)
    with pytest.raises(SdamgiaBadPage) as caught:
        catalog.catalog_get(site=MATH)
    assert caught.value.message.startswith("the catalog page of math-ege.sdamgia.ru cannot be read")
    assert not caught.value.retryable


@pytest.mark.django_db
@pytest.mark.parametrize("html", GARBAGE)
def test_a_garbage_search_page_is_an_error_not_zero_results(fake_site, html: str) -> None:  # type: ignore[no-untyped-def]
    fake_site.add_page("math-ege", "/search", {"search": "треугольник", "page": 1}, html)
    with pytest.raises(SdamgiaBadPage) as caught:
        services.problems_search(site=MATH, query="треугольник")
    assert "search page 1 for 'треугольник' of math-ege.sdamgia.ru cannot be read" in (
        caught.value.message
    )


@pytest.mark.django_db
def test_a_garbage_category_page_is_an_error(fake_site) -> None:  # type: ignore[no-untyped-def]
    fake_site.add_page(
        "math-ege", "/test", {"filter": "all", "category_id": "42", "page": 1}, GARBAGE[0]
    )
    with pytest.raises(SdamgiaBadPage) as caught:
        catalog.category_problems_get(site=MATH, category_id="42")
    assert "category 42 of math-ege.sdamgia.ru cannot be read" in caught.value.message


def test_real_listings_and_empty_results_still_read() -> None:
    base = "http://127.0.0.1:1/math-ege"
    page = PAGE.format(body=search_results([block("11", "Найдите x.")]))
    assert [p.problem_id for p in parse_search_page(page, base_url=base).problems] == ["11"]
    empty = PAGE.format(body='<div class="prob_list" data-total="0"></div>')
    assert parse_search_page(empty, base_url=base).problems == []
    nothing = PAGE.format(body="<p>По запросу ничего не найдено</p>")
    assert parse_search_page(nothing, base_url=base).problems == []


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_the_tool_says_which_page_could_not_be_read(fake_site) -> None:  # type: ignore[no-untyped-def]
    fake_site.add_page("math-ege", "/prob_catalog", {}, GARBAGE[0])
    async with Client(build_server(["problems"]), read_timeout_seconds=30) as c:
        result = await c.call_tool("sdamgia_get_catalog", {"subject": "math"})
    assert result.is_error
    text = text_of(result)
    assert "catalog page of math-ege.sdamgia.ru cannot be read" in text
    assert "Internal error" not in text


def test_figure_urls_keep_the_path_of_the_url_template() -> None:
    from lxml import html as lxml_html

    root = lxml_html.fragment_fromstring(block("12", "Найдите угол.", figure="/get_file?id=5"))
    parsed = parse_problem_block(root, base_url="http://127.0.0.1:1/math-ege")
    assert "http://127.0.0.1:1/math-ege/get_file?id=5" in parsed.figures
    real = parse_problem_block(
        lxml_html.fragment_fromstring(block("13", "x", figure="/get_file?id=6")),
        base_url="https://math-ege.sdamgia.ru",
    )
    assert "https://math-ege.sdamgia.ru/get_file?id=6" in real.figures


@pytest.mark.django_db(transaction=True)
def test_with_the_site_down_search_by_text_answers_from_the_stored_corpus(fake_site) -> None:  # type: ignore[no-untyped-def]
    import asyncio
    import json

    from tests.problems.fake_site import Fault

    text = "Найдите площадь ромба с диагоналями 10 и 24."
    fake_site.add_problem("math-ege", "6101", block("6101", text))
    services.problem_get(site=MATH, problem_id="6101")
    fake_site.faults.append(Fault("drop"))  # the site is gone
    arguments = {"subject": "math", "condition_text": "площадь ромба с диагоналями 10 и 24",
                 "threshold": 0.3, "response_format": "json", "refresh": True}  # fmt: skip

    async def search() -> str:
        async with Client(build_server(["problems"]), read_timeout_seconds=30) as c:
            result = await c.call_tool("sdamgia_search_by_text", arguments)
        assert not result.is_error, text_of(result)
        return text_of(result)

    data = json.loads(asyncio.run(search()))
    assert data["offline"] is True
    assert [m["id"] for m in data["matches"]] == ["6101"]
    assert any(w.startswith("offline: math-ege.sdamgia.ru") for w in data["warnings"])
