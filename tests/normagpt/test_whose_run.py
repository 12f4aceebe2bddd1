"""Whose run (issue 24, item 4): a run made over MCP is its caller's, and another identity's
run does not exist for it on any channel — through the real transports.

The served ASGI app (pages, REST and /mcp in one process) takes two HTTP identities: alice's
API token (the token REST takes) and the shared MCP_HTTP_TOKEN (acting as its configured
user); two stdio servers act as two different MCP_STDIO_USERs. Each asks a question over
its own transport (the scripted model sends the run to review); none can read (tool and
resource), subscribe to or resume another's run; REST answers 404; each then resumes its own.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import httpx2
import pytest
from django.contrib.auth import get_user_model
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from rest_framework.authtoken.models import Token

from normagpt.models import AgentRun
from tests.conftest import (
    MANAGE,
    PYTHON,
    ROOT,
    free_port,
    orm,
    raw_initialize,
    subprocess_env,
    text_of,
    wait_for_http,
)
from tests.normagpt.scripted_llm import (
    ANSWER,
    COVER_FINDING,
    COVER_STEP,
    final,
    plan,
    step,
    verdict,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.django_db(transaction=True),
    # resources/subscribe is the handshake-era method the desktop clients speak
    pytest.mark.filterwarnings("ignore:resources/subscribe is removed"),
]

SHARED_TOKEN = "shared-mcp-token-7f3a1c"
QUESTION = "Какая минимальная толщина защитного слоя бетона для плиты перекрытия?"
WAIT = 60  # seconds a tool call may wait for the scripted model's run


@dataclass
class Identity:
    user: str  # the Django user it acts as
    client: Client
    run_id: str = ""


@pytest.fixture
def env(corpus, llm, settings, subprocess_db_env) -> dict[str, str | None]:  # type: ignore[no-untyped-def]
    """The environment of every server: the test database, the scripted model (every run
    asks for review, a FINALIZE resume answers), no broker (each server advances its runs)."""
    llm.play(
        planner=[plan(COVER_STEP)],
        executor=[step(COVER_FINDING)],
        judge=[verdict("HUMAN_REVIEW", "Неясен класс среды.")],
        finalizer=[final(ANSWER, ("СП 63.13330.2018", "10.3.2", 2))],
    )
    return {
        **subprocess_db_env,
        "REDIS_URL": None,
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "test",
        "DJANGO_MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "DJANGO_DEBUG": "1",
        "DJANGO_LOG_LEVEL": "WARNING",
        "MCP_HTTP_TOKEN": SHARED_TOKEN,
        "MCP_HTTP_TOKEN_USER": "desk",
    }


def serve_asgi(spawn, env: dict[str, str | None], *, stateless: bool) -> str:  # type: ignore[no-untyped-def]
    port = free_port()
    command = [PYTHON, "-m", "uvicorn", "config.asgi:application", "--port", str(port)]
    proc = spawn(command, **env, MCP_HTTP_STATELESS="1" if stateless else "0")
    base = f"http://127.0.0.1:{port}"
    wait_for_http(f"{base}/healthz", proc)
    return base


def over_http(base: str, token: str) -> Client:
    headers = {"Authorization": f"Bearer {token}"}
    transport = streamable_http_client(
        f"{base}/mcp", http_client=httpx2.AsyncClient(headers=headers, timeout=WAIT + 30)
    )
    return Client(transport, read_timeout_seconds=WAIT + 30, mode="legacy")


def over_stdio(env: dict[str, str | None], user: str) -> Client:
    parameters = StdioServerParameters(
        command=PYTHON,
        args=[MANAGE, "runmcp", "--apps", "normagpt"],
        cwd=str(ROOT),
        env=subprocess_env(**env, MCP_STDIO_USER=user),
    )
    return Client(parameters, read_timeout_seconds=WAIT + 30, mode="legacy")


@contextlib.asynccontextmanager
async def connected(*identities: tuple[str, Client]) -> AsyncIterator[list[Identity]]:
    async with contextlib.AsyncExitStack() as stack:
        yield [Identity(user, await stack.enter_async_context(c)) for user, c in identities]


async def ask(identity: Identity) -> None:
    """A question over the identity's transport: its run waits for review, owned by it."""
    asked = await identity.client.call_tool(
        "normagpt_ask", {"question": QUESTION, "wait_seconds": WAIT}
    )
    assert asked.structured_content is not None, text_of(asked)
    assert asked.structured_content["status"] == "needs_review", text_of(asked)
    identity.run_id = asked.structured_content["run_id"]
    assert len(identity.run_id) == 22  # random, not guessable
    assert not identity.run_id.isdigit()
    assert await orm(owner_of, identity.run_id) == identity.user


def subscribes(client: Client) -> bool:
    """Whether the server offers `resources/subscribe` (stateless HTTP does not)."""
    resources = client.server_capabilities.resources
    return bool(resources and resources.subscribe)


async def cannot_reach(client: Client, run_id: str) -> None:
    """`run_id` does not exist for `client`: not by the tool, the resource, a subscription,
    nor a resume."""
    fetched = await client.call_tool("normagpt_get_run", {"run_id": run_id})
    assert fetched.is_error
    assert f"run {run_id} does not exist" in text_of(fetched)
    for attempt in (client.read_resource, client.subscribe_resource)[: 1 + subscribes(client)]:
        with pytest.raises(MCPError) as refused:
            await attempt(f"normagpt://run/{run_id}")
        assert refused.value.error.code == -32002  # the spec's "resource not found"
        assert f"run {run_id} does not exist" in refused.value.error.message
    resumed = await client.call_tool(
        "normagpt_resume",
        {"run_id": run_id, "note": "Сухое помещение.", "decision": "FINALIZE", "wait_seconds": 0},
    )
    assert resumed.is_error
    assert f"run {run_id} does not exist" in text_of(resumed)
    replied = await client.call_tool(
        "normagpt_reply", {"run_id": run_id, "answer": "Сухое помещение.", "wait_seconds": 0}
    )
    assert replied.is_error
    assert f"run {run_id} does not exist" in text_of(replied)


async def reaches_its_own(identity: Identity) -> None:
    """The owner reads, subscribes to and resumes its run, untouched by the others."""
    client, uri = identity.client, f"normagpt://run/{identity.run_id}"
    fetched = await client.call_tool("normagpt_get_run", {"run_id": identity.run_id})
    assert fetched.structured_content["status"] == "needs_review", text_of(fetched)  # type: ignore[index]
    assert "needs_review" in (await client.read_resource(uri)).contents[0].text  # type: ignore[union-attr]
    if subscribes(client):
        await client.subscribe_resource(uri)
    resumed = await client.call_tool(
        "normagpt_resume",
        {"run_id": identity.run_id, "note": "Сухое помещение.", "decision": "FINALIZE",
         "wait_seconds": WAIT},
    )  # fmt: skip
    assert resumed.structured_content["status"] == "completed", text_of(resumed)  # type: ignore[index]
    assert ANSWER in text_of(resumed)


async def isolated(identities: list[Identity]) -> None:
    for identity in identities:
        await ask(identity)
    for identity in identities:
        for other in identities:
            if other is not identity:
                await cannot_reach(identity.client, other.run_id)
    for identity in identities:
        await reaches_its_own(identity)


async def rest_hides_others_runs(base: str, key: str, own: str, others: list[str]) -> None:
    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Token {key}"}) as api:
        assert (await api.get(f"/api/normagpt/runs/{own}/")).status_code == 200
        for run_id in others:
            hidden = await api.get(f"/api/normagpt/runs/{run_id}/")
            assert hidden.status_code == 404, run_id
            assert hidden.json()["code"] == "run_not_found"
        listed = (await api.get("/api/normagpt/runs/")).json()["runs"]
        assert [run["run_id"] for run in listed] == [own]


def owner_of(run_id: str) -> str:
    return str(AgentRun.objects.select_related("user").get(public_id=run_id).user)


def make_alice() -> str:
    alice = get_user_model().objects.create_user("alice", password="pw-123456")
    return str(Token.objects.create(user=alice).key)


def stdio_user_made(name: str) -> tuple[bool, bool]:
    user = get_user_model().objects.get(username=name)
    return user.is_staff, user.has_usable_password()


@pytest.mark.long
async def test_two_http_identities_and_two_stdio_users_never_reach_each_others_runs(
    env, spawn
) -> None:  # type: ignore[no-untyped-def]
    key = await orm(make_alice)
    base = serve_asgi(spawn, env, stateless=False)
    async with connected(
        ("alice", over_http(base, key)),  # a user's API token
        ("desk", over_http(base, SHARED_TOKEN)),  # the shared token: MCP_HTTP_TOKEN_USER
        ("carol", over_stdio(env, "carol")),
        ("dave", over_stdio(env, "dave")),
    ) as identities:
        await isolated(identities)
    alice, *others = identities
    await rest_hides_others_runs(base, key, alice.run_id, [o.run_id for o in others])
    # a configured user is made on first use: not staff, no password to sign in with
    assert await orm(stdio_user_made, "dave") == (False, False)
    session_stays_its_openers(base, key)  # the same server: one start for both checks


async def test_in_stateless_http_the_two_identities_stay_apart_too(env, spawn) -> None:  # type: ignore[no-untyped-def]
    key = await orm(make_alice)
    base = serve_asgi(spawn, env, stateless=True)
    async with connected(
        ("alice", over_http(base, key)), ("desk", over_http(base, SHARED_TOKEN))
    ) as identities:
        await isolated(identities)
    await rest_hides_others_runs(base, key, identities[0].run_id, [identities[1].run_id])


def session_stays_its_openers(base: str, key: str) -> None:
    """A session opened by one identity (alice's API token) is not another's (the shared
    token): its id alone opens nothing."""
    accept = {"Accept": "application/json, text/event-stream"}

    def post(token: str, body: dict[str, Any], **headers: str) -> httpx.Response:
        auth = {"Authorization": f"Bearer {token}"}
        return httpx.post(f"{base}/mcp", json=body, headers={**accept, **auth, **headers})

    opened = post(key, raw_initialize("alice"))
    session = opened.headers["mcp-session-id"]
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    version = {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
    assert post(SHARED_TOKEN, ping, **version).status_code == 404  # as if it did not exist
    assert post(key, ping, **version).status_code == 200
