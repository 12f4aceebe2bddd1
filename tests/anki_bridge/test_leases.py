"""Leases that die with their holder: a sender killed mid-delivery leaves nothing stuck, a
working sender keeps its notes, a process that ends lets them go, a flush takes nothing
while Anki is away, and `anki_flush` says in its exit status whether anything is left."""

from __future__ import annotations

import json
import subprocess
import textwrap
import time
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from anki_bridge import journal, ledger, services
from anki_bridge.exceptions import AnkiUnavailable
from anki_bridge.models import Note
from core.holders import holder_gone, holder_token
from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.conftest import (
    MANAGE,
    PYTHON,
    ROOT,
    STARTUP_DEADLINE,
    gone_holder_token,
    raw_initialize,
    subprocess_env,
)

pytestmark = pytest.mark.django_db(transaction=True)

DEADLINE = STARTUP_DEADLINE  # seconds a spawned process may take on a busy machine


def queue(count: int, deck: str = "Аренда") -> None:
    """`count` notes queued while Anki is closed (the caller stops it)."""
    items = [{"Prompt": f"Вопрос {i}", "Response": f"Ответ {i}"} for i in range(count)]
    details = services.notes_add_from_model(items=items, deck=deck).details
    assert {d.status for d in details} == {"queued"}


def in_a_process(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run `code` in a new Django process on the test database."""
    return subprocess.run(
        [PYTHON, MANAGE, "shell", "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=subprocess_env(**env),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )


def flush_in_a_process(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, MANAGE, "anki_flush"],
        cwd=ROOT,
        env=subprocess_env(**env),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )


def test_a_token_names_its_process_and_a_dead_one_is_told_at_once() -> None:
    mine = holder_token()
    assert holder_gone(mine) is False
    assert holder_gone(gone_holder_token()) is True  # it has exited
    assert holder_gone("other-host:1:1:abc") is False  # another host: its lease tells
    assert holder_gone("") is False


def test_notes_of_a_sender_killed_mid_delivery_go_at_once_from_a_new_process(
    anki: FakeAnki,
    subprocess_db_env: dict[str, str],
    settings: Any,
) -> None:
    """A process takes the queued notes with a ten-minute lease and is killed (SIGKILL):
    a flush from a new process delivers every note once, in its deck, at once."""
    anki.stop()
    queue(50)
    killed = in_a_process(
        """
        import os, signal
        from datetime import timedelta
        from django.utils import timezone
        from anki_bridge import ledger
        from anki_bridge.models import Note
        token, _ = ledger.lease()
        Note.objects.update(claim=token, claimed_until=timezone.now() + timedelta(minutes=10))
        os.kill(os.getpid(), signal.SIGKILL)
        """,
        subprocess_db_env,
    )
    assert killed.returncode == -9, killed.stderr
    assert Note.objects.exclude(claim="").count() == 50  # its lease, ten minutes long
    anki.start()

    env = {**subprocess_db_env, "ANKI_CONNECT_URL": settings.ANKI_CONNECT_URL}
    done = flush_in_a_process(env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "sent 50, duplicates 0, failed 0; 0 still pending"
    notes = anki.notes()
    assert len(notes) == 50
    assert {n["decks"][0] for n in notes} == {"Аренда"}
    assert Note.objects.filter(status="sent", anki_note_id__isnull=False).count() == 50


def test_notes_a_live_sender_holds_stay_its_own_and_the_flush_says_so(
    anki: FakeAnki,
    subprocess_db_env: dict[str, str],
    settings: Any,
) -> None:
    anki.stop()
    queue(3)
    token, _ = ledger.lease()  # this process: alive
    Note.objects.update(claim=token, claimed_until=timezone.now() + timedelta(minutes=10))
    anki.start()
    env = {**subprocess_db_env, "ANKI_CONNECT_URL": settings.ANKI_CONNECT_URL}
    done = flush_in_a_process(env)
    assert done.returncode == 3, done.stderr
    assert "3 note(s) still pending" in done.stderr
    assert anki.notes() == []


def test_the_flush_exit_status_tells_a_closed_anki_from_nothing_left(anki: FakeAnki) -> None:
    out = StringIO()
    call_command("anki_flush", stdout=out)  # nothing pending: status 0
    assert out.getvalue().strip() == "sent 0, duplicates 0, failed 0; 0 still pending"

    anki.stop()
    queue(2)
    with pytest.raises(CommandError) as closed:
        call_command("anki_flush", stdout=StringIO())
    assert closed.value.returncode == 2
    assert "Anki is not reachable" in str(closed.value)
    assert "2 note(s) wait" in str(closed.value)


def test_a_flush_takes_no_note_while_anki_is_away(anki: FakeAnki) -> None:
    anki.stop()
    queue(4)
    with pytest.raises(AnkiUnavailable):
        journal.notes_flush()
    assert list(Note.objects.values_list("claim", flat=True)) == [""] * 4


def test_a_working_sender_renews_its_lease_and_lets_go_when_done(settings: Any) -> None:
    settings.ANKI_JOURNAL_LEASE = 1  # renewed every third of a second
    note = Note.objects.create(deck="d", model="m", fields={"Prompt": "x"})
    token, until = ledger.lease()
    Note.objects.filter(pk=note.pk).update(claim=token, claimed_until=until)
    with ledger.held(token):
        deadline = time.monotonic() + DEADLINE
        while Note.objects.get(pk=note.pk).claimed_until <= until:
            assert time.monotonic() < deadline, "the lease was never renewed"
            time.sleep(0.05)
        assert not ledger.claim_free(Note.objects.get(pk=note.pk))
    renewed = Note.objects.get(pk=note.pk).claimed_until
    time.sleep(0.5)  # longer than a renewal period: none comes after the block
    assert Note.objects.get(pk=note.pk).claimed_until == renewed


# A process whose delivery thread holds every note (and is never answered).
HOLDING = """
    import threading
    from anki_bridge import ledger
    from anki_bridge.models import Note
    token, until = ledger.lease()
    Note.objects.update(claim=token, claimed_until=until)
    taken = threading.Event()

    def deliver():
        with ledger.held(token):
            taken.set()
            threading.Event().wait()  # never answered

    threading.Thread(target=deliver, daemon=True).start()
    taken.wait()
"""


def test_a_process_that_ends_while_delivering_lets_its_notes_go(
    subprocess_db_env: dict[str, str],
) -> None:
    """The MCP session closes (stdin at its end): the process exits with a delivery thread
    still holding notes; they wait free, not held for a lease."""
    Note.objects.create(deck="d", model="m", fields={"Prompt": "x"})
    ended = in_a_process(HOLDING, subprocess_db_env)
    assert ended.returncode == 0, ended.stderr
    (row,) = Note.objects.all()
    assert (row.claim, row.claimed_until) == ("", None)
    assert row.last_error == "the process delivering it ended"


def test_a_process_stopped_by_a_signal_lets_its_notes_go(
    subprocess_db_env: dict[str, str],
) -> None:
    """SIGTERM (a desktop client stopping its server) ends the process as an exit does."""
    Note.objects.create(deck="d", model="m", fields={"Prompt": "x"})
    code = (
        textwrap.dedent(
            """
        from core.holders import exit_on_signals
        exit_on_signals()
        """
        )
        + textwrap.dedent(HOLDING)
        + textwrap.dedent(
            """
        print("holding", flush=True)
        threading.Event().wait()
        """
        )
    )
    proc = subprocess.Popen(
        [PYTHON, MANAGE, "shell", "-c", code],
        cwd=ROOT,
        env=subprocess_env(**subprocess_db_env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = iter(proc.stdout.readline, "")
        assert "holding" in (line.strip() for line in lines)  # (after the shell's banner)
        assert Note.objects.exclude(claim="").count() == 1
        proc.terminate()
        assert proc.wait(timeout=DEADLINE) == 128 + 15
    finally:
        proc.kill()
    (row,) = Note.objects.all()
    assert (row.claim, row.claimed_until) == ("", None)


def fifty() -> list[dict[str, str]]:
    return [{"Prompt": f"Вопрос {i}", "Response": f"Ответ {i}"} for i in range(50)]


@pytest.mark.parametrize(
    "kill",
    [
        ("before", "addNote", 1),  # Anki dies as the batch arrives
        ("after", "addNote", 25),  # during the multi: half added, the answer lost
        ("before", "changeDeck", 1),  # after it: added, the misfiled cards not yet moved
    ],
    ids=lambda k: f"{k[0]}-{k[1]}-{k[2]}",
)
def test_anki_and_the_mcp_server_killed_a_new_process_delivers_every_note_once(
    anki: FakeAnki,
    subprocess_db_env: dict[str, str],
    settings: Any,
    kill: tuple[str, str, int],
) -> None:
    """A 50-note `anki.add_from_model` over stdio; Anki is killed at a point of the batch,
    then the MCP server process too (SIGKILL, as a desktop client's crash). Anki restarts:
    `anki_flush` from a new process delivers every note once, in its deck, each journal
    row with its note id — no lease to wait out."""
    services.model_info_get()  # the model exists, as in daily use
    when, action, nth = kill
    (anki.state.kill_before if when == "before" else anki.state.kill_after)(action, nth)
    env = {**subprocess_db_env, "ANKI_CONNECT_URL": settings.ANKI_CONNECT_URL}
    server = subprocess.Popen(
        [PYTHON, MANAGE, "runmcp", "--apps", "anki_bridge"],
        cwd=ROOT,
        env=subprocess_env(**env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert server.stdin is not None
        assert server.stdout is not None
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "anki.add_from_model",
                "arguments": {"items": fifty(), "deck": "Колода"},
            },
        }
        for message in (
            raw_initialize("crash"),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            call,
        ):
            server.stdin.write(json.dumps(message).encode() + b"\n")
            server.stdin.flush()
        anki.wait_killed(timeout=DEADLINE)
    finally:
        server.kill()  # the client and its server gone, whatever they were doing
        server.wait(timeout=DEADLINE)
    anki.start()

    done = flush_in_a_process(env)
    assert done.returncode == 0, done.stderr
    notes = anki.notes()
    assert sorted(n["fields"]["Prompt"] for n in notes) == sorted(i["Prompt"] for i in fifty())
    assert {n["decks"][0] for n in notes} == {"Колода"}
    rows = list(Note.objects.all())
    assert len(rows) == 50
    assert {r.status for r in rows} == {"sent"}
    assert sorted(r.anki_note_id or 0 for r in rows) == sorted(n["id"] for n in notes)
    assert all(r.placed for r in rows)
