"""A local OJ API backend (pytest-httpserver) that records every request it gets."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from core.mcp_server import build_server
from tests.conftest import text_of

FIXTURES = Path(__file__).parent / "fixtures"
TOKEN = "s3cret-token"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    content_type: str = "application/json"
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    method: str
    raw_uri: str  # exactly as sent: path and query, percent-encoding untouched
    path: str
    query: str
    headers: dict[str, str]


class Backend:
    """Routes by exact raw path (before percent-decoding); answers 404 with an empty body otherwise."""

    def __init__(self, server: HTTPServer) -> None:
        self.server = server
        self.routes: dict[str, Reply] = {}
        self.default: Reply | None = None
        self.requests: list[Seen] = []
        server.expect_request(re.compile(".*")).respond_with_handler(self._handle)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def reply(self, path: str, body: Any = None, *, status: int = 200, **kwargs: Any) -> None:
        self.routes[path] = Reply(status=status, body=body, **kwargs)

    def reset(self) -> None:
        self.routes.clear()
        self.default = None
        self.requests.clear()

    def _handle(self, request: Request) -> Response:
        raw_uri = request.environ.get("RAW_URI") or request.environ.get("REQUEST_URI", "")
        path, _, query = raw_uri.partition("?")
        self.requests.append(
            Seen(
                method=request.method,
                raw_uri=raw_uri,
                path=path,
                query=query,
                headers={k.lower(): v for k, v in request.headers.items()},
            )
        )
        reply = self.routes.get(path) or self.default
        if reply is None:
            return Response(b"", status=404)
        data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
        return Response(
            data, status=reply.status, content_type=reply.content_type, headers=reply.headers
        )


@pytest.fixture
def backend(httpserver: HTTPServer, settings: Any) -> Iterator[Backend]:  # type: ignore[misc]
    settings.OJ_API_BASE_URL = f"http://127.0.0.1:{httpserver.port}/"
    settings.OJ_API_TOKEN = TOKEN
    settings.OJ_API_TIMEOUT = 5
    return Backend(httpserver)


@functools.cache
def server() -> MCPServer[Any]:
    return build_server(["ojclient"])


def call(tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    """One tool call through the MCP SDK client (in process): (is_error, text)."""

    async def run() -> tuple[bool, str]:
        async with Client(server(), read_timeout_seconds=30) as client:
            result = await client.call_tool(tool, arguments)
        return bool(result.is_error), text_of(result)

    return anyio.run(run)
