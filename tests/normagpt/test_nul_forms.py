"""The NormaGPT pages' ask, follow-up and reply forms refuse a NUL naming the field, and no
query carries it (PostgreSQL answers a NUL in text with a DataError: a 500 page)."""

from __future__ import annotations

import pytest

from normagpt.models import AgentRun
from tests.test_text_rule import no_query_sees

pytestmark = pytest.mark.django_db

QUESTION = "Какая минимальная толщина защитного слоя бетона?"


def test_the_ask_form_refuses_a_nul_naming_the_question(client, user) -> None:  # type: ignore[no-untyped-def]
    client.force_login(user)
    with no_query_sees("\x00"):
        page = client.post("/normagpt/", {"question": QUESTION + "\x00"})
    assert page.status_code == 200
    assert "question: text contains a NUL character" in page.content.decode()
    assert AgentRun.objects.count() == 0


def test_the_reply_form_refuses_a_nul_naming_the_answer(client, user) -> None:  # type: ignore[no-untyped-def]
    run = AgentRun.objects.create(question=QUESTION, user=user)
    client.force_login(user)
    with no_query_sees("\x00"):
        sent = client.post(f"/normagpt/runs/{run.public_id}/reply/", {"answer": "да\x00"})
    assert sent.status_code == 302
    page = client.get(sent["Location"]).content.decode()
    assert "answer: text contains a NUL character" in page
