"""A run's lease names its advancer's process (`core.holders`): an advancer killed on this
host (a closed desktop client's server, a SIGKILLed worker) gives the run up at once, not
when its lease lapses; a live advancer's lease and another host's hold."""

from __future__ import annotations

import pytest
from django.utils import timezone

from core.holders import holder_token
from normagpt import selectors
from normagpt.agent.runner import run_claim
from normagpt.models import AgentRun
from tests.conftest import gone_holder_token

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def long_lease(settings) -> None:  # type: ignore[no-untyped-def]
    settings.NORMAGPT_RUN_LEASE_SECONDS = 600  # no lease lapses during a test


def running(owner: str) -> AgentRun:
    """A run in the executor whose advancer beat just now."""
    return AgentRun.objects.create(
        question="Толщина защитного слоя бетона?",
        status=AgentRun.Status.RUNNING,
        next_node="executor",
        owner=owner,
        heartbeat_at=timezone.now(),
    )


def test_a_killed_advancers_run_is_taken_over_at_once_and_said_so() -> None:
    dead = gone_holder_token()
    run = running(dead)
    assert selectors.run_is_stalled(run=run)
    assert run.pk in selectors.runs_stalled()
    mine = holder_token()
    assert run_claim(run_id=run.pk, owner=mine)
    run.refresh_from_db()
    assert run.owner == mine
    (event,) = run.events.filter(kind="takeover")
    assert event.message.startswith(f"the advancer {dead} stopped (its process no longer runs)")
    assert event.node == "executor"


def test_a_live_advancers_run_stays_its_own() -> None:
    run = running(holder_token())  # this process: it runs
    assert not selectors.run_is_stalled(run=run)
    assert run.pk not in selectors.runs_stalled()
    assert not run_claim(run_id=run.pk, owner=holder_token())


def test_another_hosts_advancer_keeps_its_run_until_its_lease_lapses() -> None:
    run = running("another-host:4242:1:0123456789ab")  # cannot be checked from here
    assert run.pk not in selectors.runs_stalled()
    assert not run_claim(run_id=run.pk, owner=holder_token())
