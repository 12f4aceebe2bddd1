"""A round-robin HTTP reverse proxy, for the multi-process tests and `bench/scale.py`.

    python -m tests.rr_proxy --port 9000 --backend http://127.0.0.1:9001 --backend ...

Each HTTP request (not each connection: clients keep theirs alive) goes to the next
backend, the way a balancer without sticky sessions spreads load. The request body is
read whole, then sent on (as nginx buffers request bodies); the response is streamed back
chunk by chunk as it arrives, so a `text/event-stream` answer flows while the backend is
still writing it. Every end-to-end header passes both ways unchanged (`Host`,
`Authorization`, `Mcp-Session-Id`, `Mcp-Protocol-Version`, ...); only hop-by-hop headers
stop at the proxy. A backend that cannot be reached is a 502.

`GET /_rr/stats` (answered by the proxy itself, not counted) is the JSON object
`{backend URL: requests sent to it}`.
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections import Counter
from typing import Any

import anyio
import httpx
import uvicorn
from starlette.types import Message, Receive, Scope, Send

STATS_PATH = "/_rr/stats"
# RFC 9110 §7.6.1: meaningful for one connection only, never forwarded.
HOP_BY_HOP = {
    b"connection",
    b"keep-alive",
    b"proxy-authenticate",
    b"proxy-authorization",
    b"proxy-connection",
    b"te",
    b"trailer",
    b"transfer-encoding",
    b"upgrade",
}


class RoundRobinProxy:
    """The ASGI app: each request to the next of `backends` (base URLs, no trailing /)."""

    def __init__(self, backends: list[str]) -> None:
        self.backends = backends
        self.turn = itertools.cycle(backends)
        self.counts: Counter[str] = Counter(dict.fromkeys(backends, 0))
        # No read timeout: a long call's stream stays open as long as the backend's does.
        # Few idle connections kept: httpcore's pool does work quadratic in its size on
        # every request.
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(10.0, read=None),
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=8),
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
        elif scope["type"] != "http":
            raise RuntimeError(f"the proxy serves HTTP only, not {scope['type']}")
        elif scope["path"] == STATS_PATH:
            await respond(send, 200, json.dumps(self.counts).encode(), b"application/json")
        else:
            backend = next(self.turn)
            self.counts[backend] += 1
            await self.forward(backend, scope, receive, send)

    async def lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.client.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def forward(self, backend: str, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        if body is None:
            return  # the client left before its request was complete
        url = backend + scope["raw_path"].decode("latin-1")
        if scope["query_string"]:
            url += "?" + scope["query_string"].decode("latin-1")
        request = self.client.build_request(
            scope["method"], url, headers=end_to_end(scope["headers"]), content=body
        )
        try:
            response = await self.client.send(request, stream=True)
        except httpx.TransportError as exc:
            await respond(send, 502, f"backend {backend}: {exc!r}".encode(), b"text/plain")
            return
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(cancel_on_disconnect, receive, tasks.cancel_scope)
                await relay(response, send)
                tasks.cancel_scope.cancel()
        finally:
            await response.aclose()


async def read_body(receive: Receive) -> bytes | None:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def end_to_end(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    return [(name, value) for name, value in headers if name.lower() not in HOP_BY_HOP]


async def relay(response: httpx.Response, send: Send) -> None:
    """The backend's status, headers and body, each chunk sent on as soon as it is read."""
    await send(
        {
            "type": "http.response.start",
            "status": response.status_code,
            "headers": end_to_end(response.headers.raw),
        }
    )
    async for chunk in response.aiter_raw():
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    """Stop relaying (and so close the backend's stream) once the client has gone."""
    message: Message = {"type": ""}
    while message["type"] != "http.disconnect":
        message = await receive()
    scope.cancel()


async def respond(send: Send, status: int, body: bytes, content_type: bytes) -> None:
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--backend", action="append", required=True, help="base URL; repeat")
    options = parser.parse_args(argv)
    app: Any = RoundRobinProxy([url.rstrip("/") for url in options.backend])
    uvicorn.run(app, host=options.host, port=options.port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
