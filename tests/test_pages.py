"""The home page and the admin."""

from __future__ import annotations

import json

import pytest
from django.utils import translation
from django.utils.html import escape
from django.utils.translation import gettext

from config.templatetags.hub import code_spans
from core.mcp_server import load_registries, tool_specs
from tests.conftest import ROOT


@pytest.mark.django_db
def test_home_lists_every_registered_tool_and_how_to_connect(client) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/", HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 200
    html = response.content.decode()
    for spec in tool_specs():
        assert f"<code>{spec.name}</code>" in html
        assert code_spans(spec.summary) in html  # its `code` as <code>
    russian = client.get("/").content.decode()  # the default: each summary in Russian
    for spec in tool_specs():
        with translation.override("ru"):
            summary = gettext(spec.summary)
        assert summary != spec.summary, f"{spec.name}: its summary has no Russian translation"
        assert code_spans(summary) in russian
    for app in ("problems", "anki_bridge", "ojclient", "normagpt"):
        assert f'id="app-{app}"' in html
    assert "http://testserver/mcp" in html
    snippet = html.split('<pre id="desktop-config">', 1)[1].split("</pre>", 1)[0]
    config = json.loads(snippet.replace("&quot;", '"'))
    server = config["mcpServers"]["tool-hub"]
    assert server["args"] == [str(ROOT / "manage.py"), "runmcp"]
    assert 'href="/admin/"' in html
    assert 'href="/api/docs/"' in html


@pytest.mark.django_db
def test_home_lists_the_resources_and_prompts_beside_the_tools(client) -> None:  # type: ignore[no-untyped-def]
    html = client.get("/").content.decode()
    for registry in load_registries():
        for resource in registry.resources:
            assert f"<code>{escape(resource.uri)}</code>" in html
        for prompt in registry.prompts:
            assert f"<code>{prompt.name}</code>" in html
    assert "<code>normagpt://run/{id}</code>" in html
    assert "<code>problems_to_flashcards</code>" in html


@pytest.mark.django_db
def test_admin_login_page_loads(client) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/admin/login/")
    assert response.status_code == 200
    assert "Администрирование центра инструментов" in response.content.decode()
    english = client.get("/admin/login/", HTTP_ACCEPT_LANGUAGE="en")
    assert b"Tool hub" in english.content
