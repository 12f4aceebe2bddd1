"""The five OJ tools through the MCP client against a local backend: one test per rule."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import anyio
import pytest
from mcp import Client

from core.mcp_server import build_server
from tests.hints import hints
from tests.ojclient.conftest import TOKEN, Backend, call, fixture

pytestmark = pytest.mark.django_db(transaction=True)

TWO_SUM = (
    "# Two Sum\n"
    "\n"
    "- Source: leetcode | ID: 1 | Difficulty: Easy\n"
    "- Tags: Array, Hash Table\n"
    "- Link: https://leetcode.com/problems/two-sum/\n"
    "- AC Rate: 57.1%\n"
    "\n"
    "---\n"
    "\n"
)


def tools() -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        async with Client(build_server(["ojclient"])) as client:
            return {tool.name: tool for tool in (await client.list_tools()).tools}

    return anyio.run(run)


def test_five_tools_with_schemas_strict_clients_accept() -> None:
    listed = tools()
    assert set(listed) == {
        "get_daily_challenge",
        "get_problem",
        "find_similar_problems",
        "resolve_problem",
        "get_platform_status",
    }
    for tool in listed.values():
        text = json.dumps(tool.input_schema)
        for keyword in ("anyOf", "$ref", "nullable"):
            assert keyword not in text, (tool.name, keyword)
        assert tool.input_schema["additionalProperties"] is False
        assert hints(tool).read_only is True
        assert hints(tool).open_world is True
    similar = listed["find_similar_problems"].input_schema["properties"]
    assert similar["limit"]["type"] == "integer"
    assert (similar["limit"]["minimum"], similar["limit"]["maximum"]) == (1, 50)
    assert similar["threshold"]["type"] == "number"
    assert (similar["threshold"]["minimum"], similar["threshold"]["maximum"]) == (0, 1)
    assert listed["get_daily_challenge"].input_schema["properties"]["domain"]["enum"] == [
        "com",
        "cn",
    ]
    assert listed["get_problem"].input_schema["required"] == ["source", "id"]


# --- rule 1: validation failures, fixed messages, no request --------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        (
            "get_daily_challenge",
            {"date": "2026-13-01"},
            "invalid date '2026-13-01': month must be in 1..12 (expected a real day, YYYY-MM-DD)",
        ),
        (
            "get_daily_challenge",
            {"date": "2026-02-30"},
            "invalid date '2026-02-30': day is out of range for month (expected a real day, "
            "YYYY-MM-DD)",
        ),
        ("get_daily_challenge", {"date": "2026-001-1"}, "invalid date format, expected YYYY-MM-DD"),
        (
            "get_daily_challenge",
            {"date": "2026-01-01&x=1"},
            "invalid date format, expected YYYY-MM-DD",
        ),
        ("get_problem", {"source": "  ", "id": "1"}, "source and id must be non-empty"),
        (
            "get_problem",
            {"source": "x" * 1_000_000, "id": "1"},
            "source must be at most 50 characters (got 1,000,000)",
        ),
        (
            "get_problem",
            {"source": "leetcode", "id": "1" * 1_000_000},
            "id must be at most 200 characters (got 1,000,000)",
        ),
        (
            "find_similar_problems",
            {"source": "leetcode", "id": "9" * 1_000_000},
            "id must be at most 200 characters (got 1,000,000)",
        ),
        (
            "find_similar_problems",
            {"query": "two sum", "source_filter": "a," * 500_000},
            "source_filter must be at most 500 characters (got 1,000,000)",
        ),
        (
            "resolve_problem",
            {"query": "q" * 1_000_000},
            "query must be at most 1000 characters (got 1,000,000)",
        ),
        ("get_problem", {"source": "leetcode", "id": ""}, "source and id must be non-empty"),
        (
            "find_similar_problems",
            {"query": "two sum", "limit": 0},
            "limit must be between 1 and 50",
        ),
        (
            "find_similar_problems",
            {"query": "two sum", "limit": 51},
            "limit must be between 1 and 50",
        ),
        (
            "find_similar_problems",
            {"query": "two sum", "threshold": 1.01},
            "threshold must be between 0.0 and 1.0",
        ),
        (
            "find_similar_problems",
            {"query": "two sum", "threshold": -0.1},
            "threshold must be between 0.0 and 1.0",
        ),
        ("find_similar_problems", {"query": " ab "}, "query must be between 3 and 2000 characters"),
        (
            "find_similar_problems",
            {"query": "x" * 2001},
            "query must be between 3 and 2000 characters",
        ),
        (
            "find_similar_problems",
            {"source": "leetcode"},
            "either 'query' or both 'source' and 'id' must be provided",
        ),
        ("find_similar_problems", {}, "either 'query' or both 'source' and 'id' must be provided"),
        ("resolve_problem", {"query": "   "}, "query must be non-empty"),
    ],
)
def test_validation_failures_are_fixed_tool_errors_without_a_request(
    backend: Backend, tool: str, arguments: dict[str, Any], message: str
) -> None:
    is_error, text = call(tool, arguments)
    assert is_error
    assert text == message
    assert backend.requests == []


def test_limit_is_checked_before_the_query(backend: Backend) -> None:
    assert call("find_similar_problems", {"query": "ab", "limit": 99}) == (
        True,
        "limit must be between 1 and 50",
    )
    assert backend.requests == []


def test_platform_status_without_a_token_makes_no_request(backend: Backend, settings: Any) -> None:
    settings.OJ_API_TOKEN = ""
    assert call("get_platform_status", {}) == (
        True,
        "Authentication required: a token must be configured to use get_platform_status",
    )
    assert backend.requests == []


def test_unknown_arguments_and_bad_domain_are_refused(backend: Backend) -> None:
    is_error, text = call("get_problem", {"source": "leetcode", "id": "1", "lang": "en"})
    assert is_error
    assert "lang: unknown argument" in text
    is_error, text = call("get_daily_challenge", {"domain": "COM"})
    assert is_error
    assert "domain" in text
    assert backend.requests == []


def test_unset_base_url_is_a_clear_not_configured_error(settings: Any) -> None:
    settings.OJ_API_BASE_URL = ""
    is_error, text = call("get_problem", {"source": "leetcode", "id": "1"})
    assert is_error
    assert "not configured" in text
    assert "OJ_API_BASE_URL" in text


# --- requests: endpoints, encoding, token -------------------------------------------------------


def test_get_problem_request_and_exact_output(backend: Backend) -> None:
    body = fixture("problem_leetcode_1.json")
    backend.reply("/api/v1/problems/leetcode/1", body)
    is_error, text = call("get_problem", {"source": "leetcode", "id": "1"})
    assert not is_error
    assert text.startswith(TWO_SUM)
    assert not text.endswith("\n")
    assert "**Example 1:**" in text
    assert "<p>" not in text
    assert "<code>" not in text
    assert "```\nInput: nums = [2,7,11,15], target = 9" in text
    (seen,) = backend.requests
    assert seen.method == "GET"
    assert seen.headers["authorization"] == f"Bearer {TOKEN}"


def test_no_authorization_header_without_a_token(backend: Backend, settings: Any) -> None:
    settings.OJ_API_TOKEN = ""
    backend.reply("/api/v1/problems/leetcode/1", fixture("problem_leetcode_1.json"))
    assert call("get_problem", {"source": "leetcode", "id": "1"})[0] is False
    assert "authorization" not in backend.requests[0].headers


def test_codeforces_markdown_passes_unchanged_with_nulls_as_na(backend: Backend) -> None:
    body = fixture("problem_codeforces_1A.json")
    backend.reply("/api/v1/problems/codeforces/1A", body)
    is_error, text = call("get_problem", {"source": "codeforces", "id": "1A"})
    assert not is_error
    assert text == (
        "# Theatre Square\n\n"
        "- Source: codeforces | ID: 1A | Difficulty: N/A\n"
        "- Tags: N/A\n"
        "- Link: https://codeforces.com/contest/1/problem/A\n"
        "- AC Rate: N/A\n\n"
        "---\n\n" + body["content"]
    )


def test_title_falls_back_to_title_cn_then_slug_then_na(backend: Backend) -> None:
    base = {"id": "9", "source": "leetcode", "tags": [], "content": "x"}
    cases = [
        ({"title": None, "title_cn": "两数之和", "slug": "two-sum"}, "# 两数之和"),
        ({"title": "", "title_cn": None, "slug": "two-sum"}, "# two-sum"),
        ({"title": None, "title_cn": None, "slug": None}, "# N/A"),
    ]
    for fields, header in cases:
        backend.reply("/api/v1/problems/leetcode/9", {**base, **fields})
        assert call("get_problem", {"source": "leetcode", "id": "9"})[1].split("\n")[0] == header


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "No description available."),
        ("", "No description available."),
        ("<p>Use <b>bold</b> and <em>this</em></p>", "Use **bold** and *this*"),
        ("<ul><li>one</li><li>two</li></ul>", "- one\n- two"),
        ('<p>See <a href="https://x.org/a">docs</a></p>', "See [docs](https://x.org/a)"),
        ("<pre><code>int main() {}\n</code></pre>", "```\nint main() {}\n```"),
        ("Sum $a_i$ where $a < b$ holds", "Sum $a_i$ where $a < b$ holds"),
        ("<div><script>x</script></div>", "&lt;div&gt;&lt;script&gt;x&lt;/script&gt;&lt;/div&gt;"),
    ],
)
def test_content_conversion(backend: Backend, content: str | None, expected: str) -> None:
    backend.reply(
        "/api/v1/problems/x/1", {"id": "1", "source": "x", "tags": [], "content": content}
    )
    text = call("get_problem", {"source": "x", "id": "1"})[1]
    body = text.split("\n---\n\n", 1)[1]
    assert body == expected


def test_daily_defaults_to_com_and_the_utc_date(backend: Backend) -> None:
    backend.reply("/api/v1/daily", fixture("daily_legacy_flat_200.json"))
    before = datetime.now(UTC).date().isoformat()
    is_error, text = call("get_daily_challenge", {})
    after = datetime.now(UTC).date().isoformat()
    assert not is_error
    assert text.startswith(TWO_SUM)  # the flat shape has no source: it is leetcode
    query = backend.requests[0].query
    assert query in (f"domain=com&date={before}", f"domain=com&date={after}")


def test_an_unpadded_date_is_accepted_and_sent_padded(backend: Backend) -> None:
    backend.reply("/api/v1/daily", fixture("daily_legacy_flat_200.json"))
    is_error, _ = call("get_daily_challenge", {"date": "2026-1-5"})
    assert not is_error
    assert backend.requests[0].query == "domain=com&date=2026-01-05"


def test_daily_compact_shape_renders_each_problem(backend: Backend) -> None:
    body = fixture("daily_new_compact_shape_v0.3.json")
    second = {**body["problems"][0], "id": "2", "title": "Add Two Numbers", "tags": ["Math"]}
    backend.reply("/api/v1/daily", {**body, "problems": [body["problems"][0], second]})
    is_error, text = call("get_daily_challenge", {"domain": "cn", "date": "2026-01-01"})
    assert not is_error
    assert backend.requests[0].query == "domain=cn&date=2026-01-01"
    assert text.startswith(
        "# Two Sum\n\n- Source: leetcode | ID: 1 | Difficulty: Easy\n- Tags: N/A\n"
    )
    assert "- AC Rate: 50.0%\n" in text
    assert "\n\n# Add Two Numbers\n\n- Source: leetcode | ID: 2" in text
    assert text.count("English content") == 2


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"status": "fetching", "retry_after": 30},
            "The daily challenge is currently being fetched. Please retry after 30 seconds.",
        ),
        (
            {"status": "fetching"},
            "The daily challenge is currently being fetched. Please retry later.",
        ),
    ],
)
def test_daily_202_is_information_not_an_error(backend: Backend, body: Any, message: str) -> None:
    backend.reply("/api/v1/daily", body, status=202)
    assert call("get_daily_challenge", {"date": "2026-01-01"}) == (False, message)


# --- rules 2–4: failures --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("error_400_rfc7807.json", "OJ API: [400] Bad Request: date must be >= 2020-04-01"),
        ("error_401_rfc7807.json", "OJ API: [401] Unauthorized: missing or invalid token"),
        ("error_404_rfc7807.json", "OJ API: [404] Not Found: problem not found"),
        ("error_502_rfc7807.json", "OJ API: [502] Bad Gateway: embedding service failed"),
        ("error_504_rfc7807.json", "OJ API: [504] Gateway Timeout: embedding service timed out"),
    ],
)
def test_problem_details_bodies(backend: Backend, name: str, expected: str) -> None:
    body = fixture(name)
    backend.reply(
        "/api/v1/similar", body, status=body["status"], content_type="application/problem+json"
    )
    assert call("find_similar_problems", {"query": "two sum"}) == (True, expected)


def test_non_json_error_body_shows_its_first_500_characters(backend: Backend) -> None:
    backend.reply("/api/v1/problems/a/1", status=500, raw=b"E" * 700, content_type="text/plain")
    is_error, text = call("get_problem", {"source": "a", "id": "1"})
    assert is_error
    assert text == "OJ API: [500] " + "E" * 500


def test_a_202_outside_the_daily_challenge_is_an_error(backend: Backend) -> None:
    backend.reply("/api/v1/problems/a/1", fixture("daily_202_fetching.json"), status=202)
    is_error, text = call("get_problem", {"source": "a", "id": "1"})
    assert is_error
    assert text.startswith("OJ API: [202] ")


def test_unknown_route_404_with_empty_body(backend: Backend) -> None:
    is_error, text = call("get_problem", {"source": "a", "id": "1"})
    assert is_error
    assert text.startswith("OJ API: [404] ")


def test_connection_refused_names_the_cause(settings: Any) -> None:
    from tests.conftest import free_port

    settings.OJ_API_BASE_URL = f"http://127.0.0.1:{free_port()}"
    is_error, text = call("get_problem", {"source": "leetcode", "id": "1"})
    assert is_error
    assert text.startswith("request failed: ")
    assert "ConnectError" in text


def test_timeout_is_a_request_failure(backend: Backend, settings: Any) -> None:
    settings.OJ_API_TIMEOUT = 0.5

    def slow(request: Any) -> Any:
        import time

        from werkzeug import Response

        time.sleep(2)
        return Response("{}", content_type="application/json")

    backend.server.clear_all_handlers()
    backend.server.expect_request("/api/v1/problems/a/1").respond_with_handler(slow)
    is_error, text = call("get_problem", {"source": "a", "id": "1"})
    assert is_error
    assert text.startswith("request failed: the OJ API did not answer within 0.5 s")


@pytest.mark.parametrize(
    ("raw", "content_type", "expected"),
    [
        (b"<html>hi</html>", "text/html", "OJ API: unexpected non-JSON response"),
        (b"{not json", "application/json", "OJ API: invalid JSON: "),
        (b'{"source": "x"}', "application/json", "OJ API: invalid JSON: id: Field required"),
        (b"[1, 2]", "application/json", "OJ API: invalid JSON: "),
    ],
)
def test_bad_200_bodies_are_tool_errors(
    backend: Backend, raw: bytes, content_type: str, expected: str
) -> None:
    backend.reply("/api/v1/problems/a/1", raw=raw, content_type=content_type)
    is_error, text = call("get_problem", {"source": "a", "id": "1"})
    assert is_error
    assert text.startswith(expected)


def test_body_over_the_cap_is_refused(backend: Backend, settings: Any) -> None:
    settings.OJ_API_MAX_BODY_BYTES = 1000
    backend.reply("/api/v1/problems/a/1", {"id": "1", "content": "x" * 2000})
    is_error, text = call("get_problem", {"source": "a", "id": "1"})
    assert is_error
    assert text.startswith("request failed: ")
    assert "1,000 bytes" in text


def test_redirects_are_followed_up_to_ten(backend: Backend) -> None:
    # The request, then redirects 1..10: /r1 … /r10 answers.
    for hop in range(1, 10):
        backend.reply(f"/r{hop}", status=302, raw=b"", headers={"Location": f"/r{hop + 1}"})
    backend.reply("/api/v1/problems/a/1", status=302, raw=b"", headers={"Location": "/r1"})
    backend.reply("/r10", fixture("problem_leetcode_1.json"))
    assert call("get_problem", {"source": "a", "id": "1"})[0] is False
    backend.reply("/r10", status=302, raw=b"", headers={"Location": "/r11"})
    is_error, text = call("get_problem", {"source": "a", "id": "1"})
    assert is_error
    assert "the OJ API redirected more than" in text


# --- resolve, similar, status -------------------------------------------------------------------


def test_resolve_uses_the_nested_problem(backend: Backend) -> None:
    body = fixture("resolve_found.json")
    body["source"] = "other"
    query = "https://leetcode.com/problems/two-sum/"
    backend.reply("/api/v1/resolve/https%3A%2F%2Fleetcode.com%2Fproblems%2Ftwo-sum%2F", body)
    is_error, text = call("resolve_problem", {"query": f"  {query} "})
    assert not is_error
    assert text.startswith(TWO_SUM)


def test_resolve_null_problem_is_not_found(backend: Backend) -> None:
    backend.reply("/api/v1/resolve/abc999_z", fixture("resolve_not_found.json"))
    assert call("resolve_problem", {"query": "abc999_z"}) == (True, "problem not found")


def test_similar_table(backend: Backend) -> None:
    backend.reply("/api/v1/similar/leetcode/1", fixture("similar_200.json"))
    is_error, text = call(
        "find_similar_problems", {"source": "leetcode", "id": "1", "limit": 5, "threshold": 0.5}
    )
    assert not is_error
    assert text == (
        "# Similar Problems\n\n"
        "Query: Find two indices in an array whose values sum to a target using a hash map.\n\n"
        "| # | Source | ID | Title | Difficulty | Similarity | Link |\n"
        "|---|--------|----|-------|------------|------------|------|\n"
        "| 1 | leetcode | 167 | Two Sum II - Input Array Is Sorted | Medium | 79.0% | "
        "https://leetcode.com/problems/two-sum-ii-input-array-is-sorted/ |\n"
        "| 2 | codeforces | 1520D | Same Differences | N/A | 65.1% | "
        "https://codeforces.com/contest/1520/problem/D |"
    )
    assert backend.requests[0].query == "limit=5&threshold=0.5"


def test_similar_null_rewritten_query_falls_back(backend: Backend) -> None:
    backend.reply("/api/v1/similar", fixture("similar_rewritten_null.json"))
    backend.reply("/api/v1/similar/leetcode/1", fixture("similar_rewritten_null.json"))
    text = call("find_similar_problems", {"query": "  hash map pairs "})[1]
    assert "\nQuery: hash map pairs\n" in text
    text = call("find_similar_problems", {"source": "leetcode", "id": "1"})[1]
    assert "\nQuery: leetcode 1\n" in text


def test_similar_escapes_pipes_and_sends_the_source_filter(backend: Backend) -> None:
    body = {
        "rewritten_query": None,
        "results": [{"source": "x", "id": "1", "title": "a | b", "similarity": 1.0}],
    }
    backend.reply("/api/v1/similar", body)
    text = call(
        "find_similar_problems", {"query": "abc", "threshold": 1, "source_filter": "leetcode,cf"}
    )[1]
    assert "| 1 | x | 1 | a \\| b | N/A | 100.0% | N/A |" in text
    assert backend.requests[0].query == "q=abc&limit=10&threshold=1&source=leetcode%2Ccf"


def test_status_table(backend: Backend) -> None:
    backend.reply("/status", fixture("status_200.json"))
    is_error, text = call("get_platform_status", {})
    assert not is_error
    lines = text.split("\n")
    assert lines[0] == "# OJ Platform Status (v0.2.1)"
    assert lines[2] == "| Platform | Problems | Missing Content | Not Embedded |"
    assert lines[4] == "| atcoder | 8,356 | 320 | 339 |"
    assert lines[5] == "| codeforces | 12,984 | 106 | 127 |"
    assert lines[8] == "| spoj | 0 | 0 | 0 |"
    assert len(lines) == 9
    assert backend.requests[0].path == "/status"


def test_output_over_100_kib_is_truncated_at_a_character_boundary(backend: Backend) -> None:
    backend.reply("/api/v1/problems/a/1", {"id": "1", "content": "ж" * 80_000})
    is_error, text = call("get_problem", {"source": "a", "id": "1"})
    assert not is_error
    assert text.endswith("\n\n... (truncated)")
    kept = text.removesuffix("\n\n... (truncated)")
    assert len(kept.encode()) <= 102_400
    assert len(kept.encode()) > 102_400 - 4
