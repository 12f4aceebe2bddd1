"""NormaGPT agent benchmark: overhead per node, recovery from a killed worker, ingestion.

    [DATABASE_URL=postgres://…] [REDIS_URL=redis://…] .venv/bin/python bench/normagpt_agent.py

The agent runs over the sample corpus against the scripted OpenAI-compatible server of the
tests, answering instantly, so the numbers are the agent's own overhead (prompts, search,
checkpoints, claim checks), not a model's. Recovery needs REDIS_URL (two Celery workers).
Search quality and speed on a corpus of norms: bench/normagpt.py. Prints tables.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TMP = tempfile.mkdtemp(prefix="bench-normagpt-")
os.environ.setdefault("DATABASE_URL", f"sqlite:///{TMP}/bench.sqlite3")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_LOG_LEVEL", "WARNING")
os.environ["DJANGO_MEDIA_ROOT"] = f"{TMP}/media"

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.files import File  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from reportlab.lib.pagesizes import A4  # noqa: E402
from reportlab.pdfgen import canvas  # noqa: E402

from bench.common import celery_worker_command, percentile, print_table  # noqa: E402
from core import background  # noqa: E402
from core.fonts import cyrillic_font  # noqa: E402
from normagpt import services  # noqa: E402
from normagpt.demo import demo_corpus_load  # noqa: E402
from normagpt.models import AgentStep, NormDocument  # noqa: E402
from tests.normagpt.scripted_llm import ScriptedLLM, straight_script  # noqa: E402

BENCH_PREFIX = "BENCH "
WORDS = (
    "бетон арматура защитный слой толщина плита перекрытие стена фундамент колонна балка "
    "прочность класс среда влажность агрессивная коррозия анкеровка стержень диаметр "
    "нагрузка расчёт прогиб трещиностойкость морозостойкость водонепроницаемость кладка"
).split()


def stats_row(name: str, ms: list[float], note: str) -> list[str]:
    p50, p95 = percentile(ms, 50), percentile(ms, 95)
    return [name, str(len(ms)), f"{p50:.2f}", f"{p95:.2f}", f"{statistics.fmean(ms):.2f}", note]


def bench_agent(runs: int) -> list[list[str]]:
    llm = ScriptedLLM(straight_script())
    settings.OPENAI_BASE_URL = llm.base_url
    settings.OPENAI_API_KEY = "bench"
    totals = []
    try:
        for _ in range(runs):
            started = time.perf_counter()
            with background.using_broker(False):  # the run works on this process's pool
                run = services.run_create(
                    question="Какая минимальная толщина защитного слоя бетона для плиты перекрытия?"
                )
                background.drain()
            totals.append(time.perf_counter() - started)
            run.refresh_from_db()
            assert run.status == "completed", run.error
    finally:
        llm.close()
    rows = []
    for node in ("planner", "executor", "judge", "finalizer"):
        ms = [
            d * 1000 for d in AgentStep.objects.filter(node=node).values_list("duration", flat=True)
        ]
        rows.append(stats_row(f"node {node}", ms, "1 LLM call"))
    ms = [t * 1000 for t in totals]
    rows.append(stats_row("whole run (4 nodes)", ms, "claim+checkpoints"))
    return rows


class _Workers:
    """Celery workers of this project, quiet (their banners off the bench's table)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    def start(self, name: str) -> None:
        proc = subprocess.Popen(
            celery_worker_command(name),
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.procs[proc.pid] = proc

    def kill(self, pid: int) -> None:
        os.kill(pid, signal.SIGKILL)
        self.procs.pop(pid).wait()

    def close(self) -> None:
        for proc in self.procs.values():
            proc.kill()


def bench_recovery(runs: int) -> list[list[str]]:
    """Two Celery workers, no beat, the default lease; each run's advancer is SIGKILLed
    inside a node picked at random; the time from the kill to the run's next checkpoint
    (another worker took it over and finished that node) and to its end."""
    llm = ScriptedLLM()
    env = {
        **os.environ,
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "bench",
        "DJANGO_MEDIA_ROOT": os.environ["DJANGO_MEDIA_ROOT"],
        "DJANGO_LOG_LEVEL": "ERROR",
    }
    workers = _Workers(env)
    for n in range(2):
        workers.start(f"rb{n}")
    rng = random.Random(11)
    to_checkpoint, to_end, repeated = [], [], 0
    try:
        time.sleep(5)  # the workers connect
        for number in range(runs):
            node = rng.choice(["planner", "executor", "judge", "finalizer"])
            checkpoint, end, again = _run_killed(number, node, llm, workers)
            to_checkpoint.append(checkpoint)
            to_end.append(end)
            repeated += again
    finally:
        workers.close()
        llm.close()
    return [
        stats_row("SIGKILL → next checkpoint", [t * 1000 for t in to_checkpoint], f"{runs} runs"),
        stats_row(
            "SIGKILL → run completed", [t * 1000 for t in to_end], f"{repeated} nodes repeated"
        ),
    ]


def _run_killed(
    number: int, node: str, llm: ScriptedLLM, workers: _Workers
) -> tuple[float, float, int]:
    """One run whose advancer is SIGKILLed while `node`'s model call hangs, and a new worker
    started: seconds from the kill to its next checkpoint and to its end, and the nodes
    called again beside the one in flight."""
    from normagpt.agent.runner import owner_pid
    from normagpt.models import AgentRun
    from tests.normagpt.scripted_llm import (
        ANSWER,
        CORROSION_STEP,
        COVER_FINDING,
        COVER_STEP,
        final,
        plan,
        step,
        verdict,
    )

    script = {
        "planner": [plan(COVER_STEP, CORROSION_STEP)],
        "executor": [step(COVER_FINDING), step(COVER_FINDING)],
        "judge": [verdict("CONTINUE"), verdict("FINALIZE")],
        "finalizer": [final(ANSWER, ("СП 63.13330.2018", "10.3.2", 2))],
    }
    script[node] = [{"hang": True}, *script[node]]
    llm.restart(**script)
    with background.using_broker(True):
        run = services.run_create(question=f"Защитный слой бетона, запуск {number}?")
    while not llm.hanging.wait(0.05):
        pass
    run.refresh_from_db()
    steps, pid = run.step_count, owner_pid(run.owner)
    killed = time.monotonic()
    workers.kill(pid)
    llm.release()
    workers.start(f"rb{number}x")
    while AgentRun.objects.get(pk=run.pk).step_count == steps:
        time.sleep(0.1)
    to_checkpoint = time.monotonic() - killed
    while not AgentRun.objects.get(pk=run.pk).is_finished:
        time.sleep(0.1)
    to_end = time.monotonic() - killed
    assert AgentRun.objects.get(pk=run.pk).status == "completed"
    calls = Counter((call.step, call.node) for call in llm.calls if call.run == run.pk)
    return to_checkpoint, to_end, sum(1 for n in calls.values() if n > 1) - 1


def bench_ingest(pages: int) -> list[list[str]]:
    font = cyrillic_font()
    path = Path(TMP) / "ingest.pdf"
    pdf = canvas.Canvas(str(path), pagesize=A4)
    rng = random.Random(3)
    for n in range(pages):
        pdf.setFont(font, 11)
        for line in range(40):
            pdf.drawString(
                50,
                800 - line * 19,
                f"{n % 9 + 1}.{line % 7 + 1} " + " ".join(rng.choice(WORDS) for _ in range(9)),
            )
        pdf.showPage()
    pdf.save()
    rows = []
    for dpi in (72, settings.NORMAGPT_PAGE_DPI):
        with path.open("rb") as handle:
            document = services.document_save(
                code=f"{BENCH_PREFIX}INGEST", title="ingest", file=File(handle, name="ingest.pdf")
            )
        started = time.perf_counter()
        services.document_ingest(document_id=document.pk, dpi=dpi)
        wall = time.perf_counter() - started
        rows.append([f"ingest at {dpi} DPI", str(pages), f"{wall:.2f}", f"{pages / wall:.1f}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30, help="agent runs")
    parser.add_argument("--ingest-pages", type=int, default=40)
    parser.add_argument("--kills", type=int, default=10, help="runs whose worker is killed")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}; media in {TMP}")
    NormDocument.objects.filter(code__startswith=BENCH_PREFIX).delete()
    demo_corpus_load(directory=Path(TMP))
    print_table(["what", "calls", "p50 ms", "p95 ms", "mean ms", "note"], bench_agent(args.runs))
    print()
    print_table(["what", "pages", "seconds", "pages/s"], bench_ingest(args.ingest_pages))
    print()
    if os.environ.get("REDIS_URL"):
        lease = settings.NORMAGPT_RUN_LEASE_SECONDS
        print(f"Recovery: 2 Celery workers, no beat, lease {lease} s (target: ≤ 30 s)\n")
        print_table(
            ["what", "runs", "p50 ms", "p95 ms", "mean ms", "note"], bench_recovery(args.kills)
        )
    else:
        print("Recovery: skipped (REDIS_URL unset: it needs a broker and two workers)")
    NormDocument.objects.filter(code__startswith=BENCH_PREFIX).delete()


if __name__ == "__main__":
    main()
