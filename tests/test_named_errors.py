"""Every error names the field or the service, with no traceback on the server's stderr:
resource ids, prompt arguments and a malformed image URL, over raw stdio."""

from __future__ import annotations

import json
import subprocess

from tests.conftest import MANAGE, PYTHON, ROOT, raw_initialize, subprocess_env

INVALID_PARAMS = -32602


def request(message_id: int, method: str, params: dict[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}


ASKED = [
    request(2, "resources/read", {"uri": "norms://page/²"}),  # «²».isdigit() is True
    request(3, "resources/read", {"uri": "norms://document/²"}),
    request(4, "prompts/get", {"name": "ask_norms", "arguments": {}}),
    request(5, "prompts/get", {"name": "nope", "arguments": {}}),
    request(6, "prompts/get", {"name": "ask_norms", "arguments": {"question": "?", "bogus": "1"}}),
    request(
        7,
        "tools/call",
        {
            "name": "sdamgia_search_by_image",
            "arguments": {"subject": "math", "image_url": "http://[::1"},
        },
    ),
]


def test_each_bad_request_gets_an_error_naming_what_is_wrong(tmp_path) -> None:  # type: ignore[no-untyped-def]
    lines = [
        raw_initialize("errors"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *ASKED,
    ]
    done = subprocess.run(
        [PYTHON, MANAGE, "runmcp"],
        cwd=ROOT,
        env=subprocess_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", REDIS_URL=None),
        input="".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode(),
        capture_output=True,
        timeout=120,
    )
    replies = {json.loads(line)["id"]: json.loads(line) for line in done.stdout.splitlines()}
    errors = {i: replies[i].get("error") for i in range(2, 7)}
    assert all(e and e["code"] == INVALID_PARAMS for e in errors.values()), errors
    assert "id must be a positive whole number, got '²'" in errors[2]["message"]  # type: ignore[index]
    assert "id must be a positive whole number" in errors[3]["message"]  # type: ignore[index]
    assert errors[4]["message"] == "arguments: prompt 'ask_norms' needs 'question'"  # type: ignore[index]
    assert errors[5]["message"].startswith("name: no prompt 'nope' (prompts: ")  # type: ignore[index]
    assert "ask_norms" in errors[5]["message"]  # type: ignore[index]
    assert errors[6]["message"] == (  # type: ignore[index]
        "arguments: prompt 'ask_norms' takes no 'bogus' "
        "(it takes question, expected_documents, language)"
    )
    image = replies[7]["result"]
    assert image["isError"] is True
    assert image["content"][0]["text"] == (
        "image_url: 'http://[::1' is not a valid URL (Invalid IPv6 URL)"
    )
    assert "Traceback" not in done.stderr.decode()
