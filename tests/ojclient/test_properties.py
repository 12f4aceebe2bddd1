"""Every PBT property of seed 003, as hypothesis tests through the MCP client.

The local backend records each request, so "no request was made" and the exact outbound
URL (percent-encoding untouched) are asserted, not inferred.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.ojclient.conftest import Backend, Reply, call, fixture

pytestmark = pytest.mark.django_db(transaction=True)

PBT = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
UNRESERVED = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")

# Values with URL-unsafe characters; never blank after trimming.
# Any text the hub lets through: a NUL is refused before any tool runs (core/text_rule.py,
# tests/test_text_rule.py), lone surrogates are not UTF-8.
hub_characters = st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\x00")
unsafe_text = st.text(
    alphabet=hub_characters,
    min_size=1,
    max_size=30,
).filter(lambda value: value.strip() != "")


def expected_encoding(value: str) -> str:
    """Percent-encoding written independently of the code under test (upper-case hex)."""
    return "".join(
        char if char in UNRESERVED else "".join(f"%{byte:02X}" for byte in char.encode())
        for char in value
    )


def expected_segment(value: str) -> str:
    """A path segment: encoded, dot segments (`.`, `..`) spelled `%2E` so no URL drops them."""
    return "%2E" * len(value) if value in (".", "..") else expected_encoding(value)


def problem_body(**fields: Any) -> dict[str, Any]:
    return {**fixture("problem_leetcode_1.json"), **fields}


def fresh(backend: Backend, default: Any = None) -> None:
    backend.reset()
    if default is not None:
        backend.default = Reply(body=default)


@pytest.fixture
def utc_plus_14() -> Iterator[None]:
    """The process clock in UTC+14 (Kiribati): a local date a day ahead of UTC at 10:00+ UTC."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "Etc/GMT-14"
    time.tzset()
    yield
    if saved is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = saved
    time.tzset()


# --- T1 get_daily_challenge --------------------------------------------------------------------


def test_t1_date_defaults_to_the_utc_day_never_local(backend: Backend, utc_plus_14: None) -> None:
    fresh(backend, fixture("daily_legacy_flat_200.json"))
    days = {datetime.now(UTC).date().isoformat()}
    assert call("get_daily_challenge", {})[0] is False
    days.add(datetime.now(UTC).date().isoformat())
    (seen,) = backend.requests
    assert seen.path == "/api/v1/daily"
    assert seen.query in {f"domain=com&date={day}" for day in days}
    local = time.strftime("%Y-%m-%d")  # a day ahead of UTC from 10:00 UTC on
    if local not in days:
        assert local not in seen.query


@PBT
@given(domain=st.sampled_from([None, "com", "cn"]), day=st.dates().map(lambda d: d.isoformat()))
def test_t1_domain_defaults_to_com(backend: Backend, domain: str | None, day: str) -> None:
    fresh(backend, fixture("daily_legacy_flat_200.json"))
    arguments = {"date": day} if domain is None else {"date": day, "domain": domain}
    call("get_daily_challenge", arguments)
    (seen,) = backend.requests
    assert seen.query == f"domain={domain or 'com'}&date={day}"


@PBT
@given(retry_after=st.one_of(st.none(), st.integers(min_value=0, max_value=10**6)))
def test_t1_http_202_is_not_an_error(backend: Backend, retry_after: int | None) -> None:
    fresh(backend)
    body: dict[str, Any] = {"status": "fetching"}
    if retry_after is not None:
        body["retry_after"] = retry_after
    backend.default = Reply(status=202, body=body)
    is_error, text = call("get_daily_challenge", {"date": "2026-01-01"})
    assert is_error is False
    assert text.startswith("The daily challenge is currently being fetched.")
    if retry_after is not None:
        assert f"after {retry_after} seconds" in text


@PBT
@given(
    title=st.text(min_size=1, max_size=40).filter(
        lambda t: t.strip() and "\n" not in t and "\r" not in t
    )
)
def test_t1_http_200_matches_the_header_template(backend: Backend, title: str) -> None:
    fresh(backend, problem_body(title=title, date="2026-01-01", domain="com"))
    is_error, text = call("get_daily_challenge", {"date": "2026-01-01"})
    lines = text.split("\n")
    assert is_error is False
    assert lines[0] == f"# {title}"
    assert "Source:" in lines[2]


@PBT
@given(word=st.text(alphabet="abcdefghij xyz", min_size=1, max_size=20).filter(str.strip))
def test_t1_content_goes_through_html_to_markdown(backend: Backend, word: str) -> None:
    fresh(backend, problem_body(content=f"<b>{word}</b>"))
    text = call("get_daily_challenge", {"date": "2026-01-01"})[1]
    assert "<b>" not in text
    assert f"**{' '.join(word.split())}**" in text  # HTML collapses runs of spaces


# --- T2 get_problem ------------------------------------------------------------------------------


@PBT
@given(source=unsafe_text, problem_id=unsafe_text)
def test_t2_path_segments_are_percent_encoded(
    backend: Backend, source: str, problem_id: str
) -> None:
    fresh(backend, problem_body())
    call("get_problem", {"source": source, "id": problem_id})
    (seen,) = backend.requests
    assert seen.path == (
        f"/api/v1/problems/{expected_segment(source.strip())}/{expected_segment(problem_id.strip())}"
    )


def test_t2_the_seed_example_of_encoding(backend: Backend) -> None:
    fresh(backend, problem_body())
    call("get_problem", {"source": "a/b", "id": "c d"})
    assert backend.requests[0].path == "/api/v1/problems/a%2Fb/c%20d"


@pytest.mark.parametrize(("problem_id", "path"), [(".", "0/%2E"), ("..", "0/%2E%2E")])
def test_t2_a_dot_segment_is_not_dropped(backend: Backend, problem_id: str, path: str) -> None:
    fresh(backend, problem_body())
    call("get_problem", {"source": "0", "id": problem_id})
    assert backend.requests[0].path == f"/api/v1/problems/{path}"


@PBT
@given(
    title=st.text(min_size=1, max_size=40).filter(
        lambda t: t.strip() and "\n" not in t and "\r" not in t
    )
)
def test_t2_output_starts_with_the_title(backend: Backend, title: str) -> None:
    fresh(backend, problem_body(title=title))
    assert call("get_problem", {"source": "leetcode", "id": "1"})[1].startswith(f"# {title}\n")


@PBT
@given(
    blank=st.text(alphabet=" \t\n\r\u3000", max_size=5),
    other=st.text(alphabet="abc123", min_size=1, max_size=5),
    which=st.sampled_from(["source", "id"]),
)
def test_t2_blank_source_or_id_is_an_error(
    backend: Backend, blank: str, other: str, which: str
) -> None:
    fresh(backend, problem_body())
    arguments = {"source": other, "id": other, which: blank}
    assert call("get_problem", arguments) == (True, "source and id must be non-empty")
    assert backend.requests == []


# --- T3 find_similar_problems ----------------------------------------------------------------


query_text = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", min_size=3, max_size=60).filter(
    lambda q: len(q.strip()) >= 3
)


@PBT
@given(
    query=query_text,
    source=st.one_of(st.none(), unsafe_text),
    problem_id=st.one_of(st.none(), unsafe_text),
)
def test_t3_a_query_selects_mode_b(
    backend: Backend, query: str, source: str | None, problem_id: str | None
) -> None:
    fresh(backend, fixture("similar_200.json"))
    arguments: dict[str, Any] = {"query": query}
    if source is not None:
        arguments["source"] = source
    if problem_id is not None:
        arguments["id"] = problem_id
    assert call("find_similar_problems", arguments)[0] is False
    (seen,) = backend.requests
    assert seen.path == "/api/v1/similar"
    assert seen.query.startswith(f"q={expected_encoding(query.strip())}&limit=10&threshold=0")


@PBT
@given(
    query=st.text(alphabet=hub_characters, max_size=2).map(lambda q: f" {q} "),
    source=st.just("leetcode"),
    problem_id=st.just("1"),
)
def test_t3_short_query_is_an_error_without_fallback(
    backend: Backend, query: str, source: str, problem_id: str
) -> None:
    if not query.strip():
        return  # an empty query selects mode A: covered below
    fresh(backend, fixture("similar_200.json"))
    result = call("find_similar_problems", {"query": query, "source": source, "id": problem_id})
    assert result == (True, "query must be between 3 and 2000 characters")
    assert backend.requests == []


@PBT
@given(extra=st.integers(min_value=1, max_value=500))
def test_t3_long_query_is_an_error(backend: Backend, extra: int) -> None:
    fresh(backend, fixture("similar_200.json"))
    result = call(
        "find_similar_problems", {"query": "ж" * (2000 + extra), "source": "a", "id": "1"}
    )
    assert result == (True, "query must be between 3 and 2000 characters")
    assert backend.requests == []


@pytest.mark.parametrize("query", ["abc", "x" * 2000, "ж" * 2000, "  abc  "])
def test_t3_boundary_lengths_make_the_request(backend: Backend, query: str) -> None:
    fresh(backend, fixture("similar_200.json"))
    assert call("find_similar_problems", {"query": query})[0] is False
    assert len(backend.requests) == 1


@PBT
@given(
    source=st.one_of(st.none(), st.just(""), st.just("  "), st.just("leetcode")),
    problem_id=st.one_of(st.none(), st.just(""), st.just(" "), st.just("1")),
    query=st.one_of(st.none(), st.just(""), st.just("   ")),
)
def test_t3_mode_a_needs_source_and_id(
    backend: Backend, source: str | None, problem_id: str | None, query: str | None
) -> None:
    fresh(backend, fixture("similar_200.json"))
    arguments = {
        key: value
        for key, value in {"source": source, "id": problem_id, "query": query}.items()
        if value is not None
    }
    is_error, text = call("find_similar_problems", arguments)
    if source == "leetcode" and problem_id == "1":
        assert is_error is False
        assert backend.requests[0].path == "/api/v1/similar/leetcode/1"
    else:
        assert (is_error, text) == (
            True,
            "either 'query' or both 'source' and 'id' must be provided",
        )
        assert backend.requests == []


@PBT
@given(similarity=st.floats(min_value=0, max_value=1))
def test_t3_similarity_is_a_percentage_with_one_decimal(
    backend: Backend, similarity: float
) -> None:
    body = {
        "rewritten_query": "q",
        "results": [{"source": "s", "id": "1", "similarity": similarity}],
    }
    fresh(backend, body)
    text = call("find_similar_problems", {"query": "abc"})[1]
    assert f"| {similarity * 100:.1f}% |" in text


@pytest.mark.parametrize(("value", "shown"), [(0.79, "79.0%"), (0.791, "79.1%"), (1.0, "100.0%")])
def test_t3_the_seed_examples_of_similarity(backend: Backend, value: float, shown: str) -> None:
    fresh(
        backend,
        {"rewritten_query": "q", "results": [{"source": "s", "id": "1", "similarity": value}]},
    )
    assert f"| {shown} |" in call("find_similar_problems", {"query": "abc"})[1]


@PBT
@given(source=unsafe_text, problem_id=unsafe_text)
def test_t3_mode_a_path_segments_are_percent_encoded(
    backend: Backend, source: str, problem_id: str
) -> None:
    fresh(backend, fixture("similar_200.json"))
    call("find_similar_problems", {"source": source, "id": problem_id})
    (seen,) = backend.requests
    assert seen.path == (
        f"/api/v1/similar/{expected_segment(source.strip())}/{expected_segment(problem_id.strip())}"
    )


@PBT
@given(threshold=st.floats(min_value=0, max_value=1), limit=st.integers(min_value=1, max_value=50))
def test_t3_numbers_are_sent_in_their_shortest_form(
    backend: Backend, threshold: float, limit: int
) -> None:
    fresh(backend, fixture("similar_200.json"))
    call("find_similar_problems", {"query": "abc", "threshold": threshold, "limit": limit})
    params = dict(pair.split("=") for pair in backend.requests[0].query.split("&"))
    assert params["limit"] == str(limit)
    assert float(params["threshold"]) == threshold
    assert not params["threshold"].endswith(".0")


# --- T4 resolve_problem ------------------------------------------------------------------------


@PBT
@given(query=unsafe_text)
def test_t4_the_query_is_path_encoded(backend: Backend, query: str) -> None:
    fresh(backend, fixture("resolve_found.json"))
    call("resolve_problem", {"query": query})
    (seen,) = backend.requests
    assert seen.path == f"/api/v1/resolve/{expected_segment(query.strip())}"
    assert "/" not in seen.path.removeprefix("/api/v1/resolve/")


@PBT
@given(
    top=st.text(alphabet="abcxyz", min_size=1, max_size=8),
    nested=st.text(alphabet="klmn", min_size=1, max_size=8),
)
def test_t4_output_uses_the_nested_problem(backend: Backend, top: str, nested: str) -> None:
    body = fixture("resolve_found.json")
    body["source"] = top
    body["problem"]["source"] = nested
    fresh(backend, body)
    is_error, text = call("resolve_problem", {"query": "two-sum"})
    assert is_error is False
    assert text.startswith("# Two Sum\n")
    assert f"- Source: {nested} | ID: 1 |" in text


# --- T5 get_platform_status --------------------------------------------------------------------


def test_t5_no_token_no_request(backend: Backend, settings: Any) -> None:
    settings.OJ_API_TOKEN = ""
    fresh(backend, fixture("status_200.json"))
    assert call("get_platform_status", {})[0] is True
    assert backend.requests == []


platforms = st.lists(
    st.fixed_dictionaries(
        {
            "source": st.text(alphabet="abcdefgh", min_size=1, max_size=8),
            "total": st.integers(min_value=0, max_value=10**9),
            "missing_content": st.integers(min_value=0, max_value=10**9),
            "not_embedded": st.integers(min_value=0, max_value=10**9),
        }
    ),
    max_size=12,
)


@PBT
@given(version=st.from_regex(r"\d{1,2}\.\d{1,2}\.\d{1,2}", fullmatch=True), rows=platforms)
def test_t5_table_header_grouping_columns_and_rows(
    backend: Backend, version: str, rows: list[dict[str, Any]]
) -> None:
    fresh(backend, {"version": version, "platforms": rows})
    is_error, text = call("get_platform_status", {})
    assert is_error is False
    lines = text.split("\n")
    assert lines[0] == f"# OJ Platform Status (v{version})"
    header = [cell.strip() for cell in lines[2].strip("|").split("|")]
    assert header == ["Platform", "Problems", "Missing Content", "Not Embedded"]
    data = lines[4:]
    assert len(data) == len(rows)
    for line, row in zip(data, rows, strict=True):
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        assert cells == [
            row["source"],
            f"{row['total']:,}",
            f"{row['missing_content']:,}",
            f"{row['not_embedded']:,}",
        ]


@pytest.mark.parametrize(("total", "shown"), [(12984, "12,984"), (100, "100"), (1000, "1,000")])
def test_t5_the_seed_examples_of_grouping(backend: Backend, total: int, shown: str) -> None:
    fresh(
        backend,
        {
            "version": "1.2.3",
            "platforms": [{"source": "x", "total": total, "missing_content": 0, "not_embedded": 0}],
        },
    )
    text = call("get_platform_status", {})[1]
    assert text.startswith("# OJ Platform Status (v1.2.3)")
    assert f"| x | {shown} | 0 | 0 |" in text
