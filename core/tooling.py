"""What every app's `mcp_tools.py` shares: the `Format` argument, answers, progress.

A tool answers through `respond` (text in the asked format plus the same data as
structured content) or `respond_json` (compact JSON of an output model), and reports
progress from its worker thread through `thread_progress`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import Sequence
from typing import Any, Literal, Protocol

import anyio.from_thread
from mcp.server.mcpserver import Context
from mcp_types import (
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)
from pydantic import BaseModel

PROGRESS_SEND_SECONDS = 2.0  # a report waits this long for the loop, then is dropped

Format = Literal["markdown", "json"]  # the text of the reply; the enum says it all


class ProgressReport(Protocol):
    """Report progress: `progress` so far, of `total` when known, with a short message."""

    def __call__(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None: ...


def respond(data: dict[str, Any], markdown: str, response_format: str) -> CallToolResult:
    """`markdown` or `data` as JSON, by `response_format`, plus `data` as structured content."""
    text = markdown if response_format == "markdown" else json.dumps(data, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def respond_json(data: BaseModel, images: Sequence[tuple[bytes, str]] = ()) -> CallToolResult:
    """Compact JSON of `data` (unset fields left out) plus the same as structured content;
    `images` (bytes, MIME type) follow the text as image content, for the model to see."""
    payload = data.model_dump(mode="json", exclude_none=True)
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    content: list[ContentBlock] = [TextContent(type="text", text=text)]
    content += [
        ImageContent(type="image", data=base64.b64encode(raw).decode("ascii"), mime_type=mime)
        for raw, mime in images
    ]
    return CallToolResult(content=content, structured_content=payload)


def file_attach(
    result: CallToolResult, *, data: bytes, uri: str, mime_type: str, name: str, embedded: bool
) -> CallToolResult:
    """`result` with a file any client can open, a stdio one with no web server: the bytes
    embedded (a blob resource at `uri`) when `embedded`, else a link to the resource `uri`,
    which the client reads with `resources/read`."""
    if embedded:
        blob = base64.b64encode(data).decode("ascii")
        resource = BlobResourceContents(uri=uri, mime_type=mime_type, blob=blob)
        result.content.append(EmbeddedResource(type="resource", resource=resource))
    else:
        result.content.append(
            ResourceLink(
                type="resource_link", uri=uri, name=name, mime_type=mime_type, size=len(data)
            )
        )
    return result


def thread_progress(ctx: Context | None) -> ProgressReport | None:
    """A progress callback for a sync tool's worker thread and any thread it starts.

    Call it on the tool's worker thread (it finds the server's event loop from there); the
    callback sends each report on that loop. Progress is best effort: a report that cannot
    be sent within a short wait is dropped and never fails the tool. None without a context.
    """
    if ctx is None:
        return None
    loop = anyio.from_thread.run_sync(asyncio.get_running_loop)

    def report(progress: float, total: float | None = None, message: str | None = None) -> None:
        sending = ctx.report_progress(progress, total, message)
        future = asyncio.run_coroutine_threadsafe(sending, loop)
        with contextlib.suppress(Exception):  # progress is best effort; the result matters
            future.result(timeout=PROGRESS_SEND_SECONDS)

    return report


def call_cancelled_raise() -> None:
    """In a sync tool's worker thread: raise the call's cancellation when its task was
    cancelled (the client sent `notifications/cancelled`, or its session was torn down), so
    that a long wait lets its thread go at once instead of holding one of the server's
    workers to its end. Nothing happens outside an anyio worker thread (a direct call)."""
    try:
        anyio.from_thread.check_cancelled()
    except RuntimeError:  # not on a worker thread (anyio's NoEventLoopError)
        return
