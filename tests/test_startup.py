"""A process starts without the cyclic garbage collector walking what start-up makes
(config/startup.py), and collects again once it works: the pause never outlives start-up."""

from __future__ import annotations

import contextlib
import gc
import json
import subprocess

from config.startup import collector_paused
from tests.conftest import MANAGE, PYTHON, ROOT, subprocess_env

SEEN = (
    "import gc, json, sys; "
    "print(json.dumps([gc.isenabled(), gc.get_freeze_count(), 'mcp' in sys.modules]))"
)


def test_the_block_runs_without_the_collector_and_what_it_made_is_frozen() -> None:
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    with collector_paused():
        assert not gc.isenabled()
        made = [[i] for i in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen + len(made)


def test_a_block_that_fails_gives_the_collector_back() -> None:
    with contextlib.suppress(ValueError), collector_paused():
        raise ValueError("a setting stops start-up")
    assert gc.isenabled()


def test_a_collector_switched_off_before_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_command_runs_with_the_collector_on_and_its_start_up_frozen() -> None:
    done = subprocess.run(
        [PYTHON, MANAGE, "shell", "-c", SEEN],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        check=True,
        timeout=120,
    )
    enabled, frozen, sdk_loaded = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert enabled
    # Django, the apps and their models: far more than any command's own start
    assert frozen > 50_000
    assert not sdk_loaded  # `shell` loads no MCP SDK: each command loads what it needs
