"""MCP overhead: the hub beside a minimal server on the same SDK doing the same work.

    .venv/bin/python bench/mcp_overhead.py [--calls 1000] [--instructions N] [--profile DIR]

Both servers are spawned over stdio in the same run and driven raw, as a desktop client's
pipe is: each call one JSON line written to the server's stdin, its answer one line read
from its stdout — no SDK client in the timed loop (an SDK client adds about 4 ms a call to
both sides and hides the gap). `manage.py runmcp` (every app) and `bench/minimal_server.py`
(two plain SDK tools, no Django) each get `--calls` sequential `greet` calls and as many
`get_problem` calls against the same local HTTP/1.1 keep-alive stub of the online-judge
API (the LeetCode "Two Sum" body): GET, validate, upsert into SQLite, render Markdown.
Both answers are checked to be the same text. Calls go in blocks of 100 that alternate
between the servers, so a change of machine load touches them alike. Prints p50/p95 per
tool and server; each other server's row gives the hub's ratio to it (hub ÷ this).
Targets, against the same-SDK floor only: greet ≤ 1.15×, get_problem ≤ 1.2× (issues 27 and
54: in instructions).

`--start-ups N` (10 by default) spawns each server N times, interleaved, and times what a
desktop client waits on at each session's start: spawn → `initialize` answered, →
`tools/list` answered, → its first tool call (`greet`) answered; the hub also on a fresh
data directory (an SQLite file that does not exist yet, migrated before serving).

`--http` also drives `greet` over streamable HTTP — `runmcp --transport http` beside the
minimal server's own streamable HTTP, raw POSTs on one keep-alive connection each — and
prints wall time and the server's CPU time per call (from /proc).

`--rust-original [PATH]` adds the Rust original of the online-judge tools (oj-mcp-rs, the
server document 003 describes) as a third server on `get_problem`, against the same stub,
as a reference figure with no target: a server on the Python MCP SDK cannot come near it
(the SDK alone costs 4× its instructions), so issue 27's "≤ 4×" was withdrawn (issue 54).
PATH is its binary; without PATH the bench takes the published build of release 0.1.4 from
the npm registry (`npm pack oj-mcp-rs-<os>-<cpu>`, the package `npx oj-mcp-rs` runs) into
its scratch directory. Where neither can be had (no npm, no network, no such binary) its
row says "not available" and the rest runs. Its answer is checked to be the same problem
(the same title line; its Markdown differs: it keeps `<sup>` as plain digits, "10^4" reads
"104"). It stores nothing: the hub and the minimal server also upsert the problem.

`--instructions N` (valgrind installed) also counts the instructions of N calls of each
tool on each server with callgrind (instrumentation switched on only around those calls:
start-up and warm-up are not counted) and prints millions per call and the ratio. The hub's
recovery sweeper (time-based, not per call) is kept out of the counted calls.

`normagpt_search_norms` searches a corpus of `--norm-pages` pages (2,000 by default) built
by `bench/norm_corpus.py` from real norm vocabulary, with the keywords of one of its
questions; `--norm-pages 0` searches the six sample pages of `normagpt_demo` instead.

The hub uses DATABASE_URL when it is set, else a scratch SQLite file (migrated first).
`--profile DIR` runs both servers under cProfile (all threads; `bench/profiled.py`),
writes DIR/hub.prof and DIR/minimal.prof and prints the hub's costliest functions.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import MANAGE, PYTHON, ROOT, percentile, print_table
from bench.mcp_raw import START_UP_STEPS, RawHttp, RawServer, free_port, start_up, valgrind_tool
from bench.mcp_rust import Unavailable, rust_original
from bench.ojclient import Handler

TARGETS = {
    "greet": 1.15, "get_problem": 1.2, "sdamgia_get_problem": 2.0, "normagpt_search_norms": 2.0,
}  # fmt: skip
CALLS: dict[str, Callable[[int], dict[str, Any]]] = {
    "greet": lambda i: {"name": f"Алиса {i}"},
    "get_problem": lambda i: {"source": "leetcode", "id": "1"},
}
CACHED = ("sdamgia_get_problem", "normagpt_search_norms")  # on SQLite: the floor replays SQL
BLOCK = 100
WARM_UP = 20
SERVERS = ("minimal", "hub")
LABELS = {"minimal": "minimal (same SDK, same work)", "hub": "tool hub (manage.py runmcp)",
          "rust": "Rust original"}  # fmt: skip
RUST_TOOLS = ("get_problem",)  # the only tool both serve
# The hub's recovery sweeper wakes every half run lease (7.5 s). Under callgrind a call takes
# some 50 times longer, so the sweeper would run 50 times as often per call as it does in
# use: about 0.35 M instructions a call, now and then, on a tool that never touches a run.
# While instructions are counted it waits a day instead (time-based work, not a call's).
COUNTED_ENV = {"NORMAGPT_RUN_LEASE_SECONDS": "172800"}


def command(name: str, base_url: str, scratch: Path, profile: Path | None) -> list[str]:
    if name == "hub":
        script = [MANAGE, "runmcp", "--oj-base-url", base_url, "--oj-token", "bench"]
    else:
        script = [str(ROOT / "bench" / "minimal_server.py"), base_url, str(scratch / "min.db")]
        if (scratch / "captured.json").exists():
            script += [str(scratch / "captured.json"), str(scratch / "hub.db")]
    if profile is not None:
        script = [str(ROOT / "bench" / "profiled.py"), str(profile / f"{name}.prof"), *script]
    return [PYTHON, *script]


def http_greet(calls: int, base_url: str, scratch: Path, env: dict[str, str]) -> list[list[str]]:
    """`greet` over streamable HTTP on both servers: wall p50 and server CPU per call."""
    servers: dict[str, RawHttp] = {}
    for name in SERVERS:
        port = free_port()
        if name == "hub":
            cmd = [PYTHON, MANAGE, "runmcp", "--transport", "http", "--port", str(port)]
            server_env = env
        else:
            cmd = command(name, base_url, scratch, None)
            server_env = {**env, "MINIMAL_HTTP_PORT": str(port)}
        servers[name] = RawHttp(cmd, server_env, f"http://127.0.0.1:{port}/mcp")
    try:
        for server in servers.values():
            for i in range(WARM_UP):
                server.call("greet", CALLS["greet"](i))
        times: dict[str, list[float]] = {name: [] for name in SERVERS}
        cpu: dict[str, float] = dict.fromkeys(SERVERS, 0.0)
        for block, start in enumerate(range(0, calls, BLOCK)):
            for name in SERVERS if block % 2 == 0 else SERVERS[::-1]:
                server = servers[name]
                before = server.cpu_seconds()
                for i in range(start, min(start + BLOCK, calls)):
                    t0 = time.perf_counter()
                    server.call("greet", CALLS["greet"](i))
                    times[name].append(time.perf_counter() - t0)
                cpu[name] += server.cpu_seconds() - before
    finally:
        for server in servers.values():
            server.close()
    floor_wall = percentile(times["minimal"], 50)
    floor_cpu = cpu["minimal"] / calls
    table = []
    for name in SERVERS:
        wall, used = percentile(times[name], 50), cpu[name] / calls
        hub = name == "hub"
        table.append([
            "greet (HTTP)", LABELS[name], str(calls), f"{wall * 1000:.2f}",
            f"{wall / floor_wall:.2f}×" if hub else "", f"{used * 1000:.2f}",
            f"{used / floor_cpu:.2f}×" if hub else "", "≤ 1.15×" if hub else "",
        ])  # fmt: skip
    return table


def serving(tool: str, servers: dict[str, Any]) -> list[str]:
    """The servers that serve `tool`, in the order of `servers` (the Rust original serves
    only `get_problem`)."""
    return [name for name in servers if name != "rust" or tool in RUST_TOOLS]


def warm_up(servers: dict[str, RawServer]) -> None:
    """Imports, connections and caches warm on every side; the answers must agree (the
    Rust original's on the problem: its Markdown renders some markup otherwise)."""
    for tool, arguments in CALLS.items():
        answers = {}
        for name in serving(tool, servers):
            for i in range(WARM_UP):
                answers[name] = servers[name].call(tool, arguments(i))
        if answers["hub"] != answers["minimal"]:
            raise SystemExit(f"{tool}: the two servers answer differently; not the same work")
        if "rust" in answers and answers["rust"].split("\n")[0] != answers["hub"].split("\n")[0]:
            raise SystemExit(f"{tool}: the Rust original answers another problem")
    print(f"warm: {', '.join(CALLS)} answer the same text on both servers", file=sys.stderr)


def measure(servers: dict[str, RawServer], calls: int) -> dict[tuple[str, str], list[float]]:
    samples: dict[tuple[str, str], list[float]] = {
        (tool, name): [] for tool in CALLS for name in serving(tool, servers)
    }
    for tool, arguments in CALLS.items():
        names = serving(tool, servers)
        for block, start in enumerate(range(0, calls, BLOCK)):
            for name in names if block % 2 == 0 else names[::-1]:
                times = samples[(tool, name)]
                for i in range(start, min(start + BLOCK, calls)):
                    t0 = time.perf_counter()
                    servers[name].call(tool, arguments(i))
                    times.append(time.perf_counter() - t0)
    return samples


def instructions(
    calls: int, commands: dict[str, list[str]], scratch: Path, env: dict[str, str]
) -> dict[tuple[str, str], float]:
    """Millions of instructions per call of each tool on each server (callgrind)."""
    counts: dict[tuple[str, str], float] = {}
    for name, argv in commands.items():
        out = scratch / f"callgrind.{name}"
        valgrind = [valgrind_tool("valgrind"), "--tool=callgrind", "--instr-atstart=no",
                    f"--callgrind-out-file={out}.%p"]  # fmt: skip
        server = RawServer([*valgrind, *argv], {**env, **COUNTED_ENV}, under_valgrind=True)
        for tool, arguments in CALLS.items():
            if name not in serving(tool, commands):
                continue
            for i in range(3):  # warm, not counted
                server.call(tool, arguments(i))
            before = set(scratch.glob(f"callgrind.{name}.*"))
            server.instrument(True)
            for i in range(calls):
                server.call(tool, arguments(i))
            server.dump()
            server.instrument(False)
            dumps = sorted(set(scratch.glob(f"callgrind.{name}.*")) - before)
            total = sum(_totals(path) for path in dumps)
            for path in dumps:
                path.unlink()
            if total:
                counts[(tool, name)] = total / calls / 1e6
        server.close()
    return counts


def _totals(path: Path) -> int:
    """The dump's instruction count (a count past 2**60 is callgrind's wrapped counter: 0)."""
    counts = [int(n) for n in re.findall(r"^(?:totals|summary):\s*(\d+)", path.read_text(), re.M)]
    return max((n for n in counts if n < 2**60), default=0)


def run(
    calls: int, commands: dict[str, list[str]], env: dict[str, str]
) -> dict[tuple[str, str], list[float]]:
    servers = {name: RawServer(argv, env, under_valgrind=False) for name, argv in commands.items()}
    try:
        warm_up(servers)
        return measure(servers, calls)
    finally:
        for server in servers.values():
            server.close()


def rows(
    samples: dict[tuple[str, str], list[float]],
    counted: dict[tuple[str, str], float],
    rust_missing: str = "",
) -> list[list[str]]:
    """One row per tool and server. The hub's ratios are to the minimal server, against
    its target; the Rust original's row gives the hub's ratios to it (hub ÷ Rust) as a
    reference, with no target (issue 54), or why it is not available."""
    table = []
    for tool in CALLS:
        hub_p50 = percentile(samples[(tool, "hub")], 50)
        hub_instr = counted.get((tool, "hub"))
        for name in (*SERVERS, "rust"):
            if (tool, name) not in samples:
                continue
            times = samples[(tool, name)]
            p50 = percentile(times, 50)
            instr = counted.get((tool, name))
            ratios = name != "hub"
            table.append(
                [
                    tool,
                    LABELS[name],
                    str(len(times)),
                    f"{p50 * 1000:.2f}",
                    f"{percentile(times, 95) * 1000:.2f}",
                    f"{len(times) / sum(times):.0f}",
                    f"{hub_p50 / p50:.2f}×" if ratios else "",
                    f"{instr:.2f}" if instr is not None else "—",
                    f"{hub_instr / instr:.2f}×" if ratios and instr and hub_instr else "",
                    {"minimal": f"hub ≤ {TARGETS[tool]}×", "rust": "reference"}.get(name, ""),
                ]
            )
        if rust_missing and tool in RUST_TOOLS:
            table.append([tool, f"{LABELS['rust']}: not available ({rust_missing})", *[""] * 8])
    return table


def start_ups(runs: int, base_url: str, scratch: Path, env: dict[str, str]) -> list[list[str]]:
    """`runs` start-ups of each server, interleaved; the hub also on a fresh data
    directory (an SQLite file that does not exist yet: it migrates before serving)."""
    kinds = {
        "minimal": (command("minimal", base_url, scratch, None), env),
        "hub": (command("hub", base_url, scratch, None), env),
    }
    samples: dict[str, list[list[float]]] = {name: [] for name in [*kinds, "hub, fresh data"]}
    for run_number in range(runs):
        for name, (argv, server_env) in kinds.items():
            samples[name].append(start_up(argv, server_env))
        fresh = {**env, "DATABASE_URL": f"sqlite:///{scratch / f'fresh-{run_number}.db'}"}
        samples["hub, fresh data"].append(start_up(kinds["hub"][0], fresh))
    floor = [percentile([s[i] for s in samples["minimal"]], 50) for i in range(3)]
    table = []
    for name, runs_of in samples.items():
        medians = [percentile([s[i] for s in runs_of], 50) for i in range(3)]
        cells = [f"{m:.3f}" + (f" ({m / f:.2f}×)" if name != "minimal" else "")
                 for m, f in zip(medians, floor, strict=True)]  # fmt: skip
        table.append([name, str(len(runs_of)), *cells])
    return table


def profile_summary(path: Path) -> None:
    print(f"\nHub profile ({path}), by own time:")
    stats = pstats.Stats(str(path))
    stats.sort_stats("tottime").print_stats(25)


def options_parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="calls per tool and server")
    parser.add_argument(
        "--instructions", type=int, default=0, metavar="N",
        help="count the instructions of N calls per tool and server with callgrind",
    )  # fmt: skip
    parser.add_argument("--profile", type=Path, help="run the servers under cProfile into DIR")
    parser.add_argument(
        "--rust-original", nargs="?", const="npm", metavar="PATH",
        help="also run the Rust original's get_problem (its binary; without PATH, from npm)",
    )  # fmt: skip
    parser.add_argument("--http", action="store_true", help="greet over streamable HTTP too")
    parser.add_argument(
        "--start-ups", type=int, default=10, metavar="N",
        help="spawn each server N times and time its first answers (0: skip)",
    )  # fmt: skip
    parser.add_argument(
        "--norm-pages", type=int, default=2000, metavar="N",
        help="pages of the norms corpus searched (bench/norm_corpus.py); 0: the 6 sample pages",
    )  # fmt: skip
    options = parser.parse_args()
    if options.instructions and shutil.which("callgrind_control") is None:
        raise SystemExit("--instructions needs valgrind (callgrind_control is not on the PATH)")
    if options.profile is not None:
        options.profile.mkdir(parents=True, exist_ok=True)
    return options


def cached_calls_capture(scratch: Path, env: dict[str, str], norm_pages: int) -> None:
    """On the scratch SQLite file, the cached tools' arguments as `bench/cached_calls.py`
    captured them (the floor replays their SQL): CALLS gains those tools."""
    capture = [
        PYTHON,
        str(ROOT / "bench" / "cached_calls.py"),
        str(scratch / "captured.json"),
        str(norm_pages),
    ]
    subprocess.run(capture, cwd=ROOT, env=env, check=True, capture_output=True)
    captured = json.loads((scratch / "captured.json").read_text(encoding="utf-8"))
    for name in CACHED:
        CALLS[name] = lambda i, arguments=captured[name]["arguments"]: arguments


def rust_add(option: str, commands: dict[str, list[str]], base_url: str, scratch: Path) -> str:
    """The Rust original among `commands` (its label naming its version), or why it is not
    available ("" when it is)."""
    given = None if option == "npm" else Path(option)
    try:
        binary, version = rust_original(given, scratch)
    except Unavailable as error:
        print(f"Rust original: not available ({error})", file=sys.stderr)
        return str(error)
    LABELS["rust"] = f"Rust original ({version})"
    commands["rust"] = [str(binary), "--base-url", base_url, "--token", "bench"]
    return ""


def report(
    options: argparse.Namespace,
    database: str,
    table: list[list[str]],
    over_http: list[list[str]],
    launched: list[list[str]],
) -> None:
    print(
        f"MCP overhead over stdio, raw JSON lines (no SDK client): {options.calls} sequential "
        f"calls per tool and server, in alternating blocks of {BLOCK}; hub database: {database}"
        + (
            f"; norms corpus: {options.norm_pages} pages (bench/norm_corpus.py)"
            if options.norm_pages
            else "; norms corpus: the 6 sample pages"
        )
        + (" (under cProfile: times inflated)" if options.profile else "")
        + (
            f"; instructions: callgrind over {options.instructions} calls"
            if options.instructions
            else ""
        )
        + "\n"
    )
    header = ["tool", "server", "calls", "p50 ms", "p95 ms", "calls/s", "hub ÷ this p50",
              "M instr/call", "hub ÷ this instr", "target"]  # fmt: skip
    print_table(header, table)
    if over_http:
        print("\nOver streamable HTTP (raw POSTs on one keep-alive connection, one session):\n")
        print_table(["tool", "server", "calls", "p50 ms", "ratio p50", "server CPU ms/call",
                     "ratio CPU", "target"], over_http)  # fmt: skip
    if launched:
        print(
            f"\nStart-up over stdio, seconds from spawn (median of {options.start_ups}, "
            "interleaved); each request sent when the one before is answered. Targets: "
            "initialize ≤ 1.2× the minimal server (issue 27); ≤ 5 s on fresh data (issue 28).\n"
        )
        print_table(["server", "runs", *(f"{step} s" for step in START_UP_STEPS)], launched)
    if options.profile is not None:
        profile_summary(options.profile / "hub.prof")


def main() -> None:
    options = options_parse()
    backend = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{backend.server_address[1]}"
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as directory:
        scratch = Path(directory)
        env = {**os.environ, "DJANGO_LOG_LEVEL": "WARNING"}
        env.setdefault("DATABASE_URL", f"sqlite:///{scratch / 'hub.db'}")
        migrate = [PYTHON, MANAGE, "migrate", "--noinput", "--verbosity", "0"]
        subprocess.run(migrate, cwd=ROOT, env=env, check=True)
        if env["DATABASE_URL"] == f"sqlite:///{scratch / 'hub.db'}":
            cached_calls_capture(scratch, env, options.norm_pages)
        commands = {name: command(name, base_url, scratch, None) for name in SERVERS}
        rust_missing = ""
        if options.rust_original is not None:
            rust_missing = rust_add(options.rust_original, commands, base_url, scratch)
        launched = start_ups(options.start_ups, base_url, scratch, env) if options.start_ups else []
        profiled = {name: command(name, base_url, scratch, options.profile) for name in SERVERS}
        samples = run(options.calls, {**commands, **profiled}, env)
        over_http = http_greet(options.calls, base_url, scratch, env) if options.http else []
        counted = (
            instructions(options.instructions, commands, scratch, env)
            if options.instructions
            else {}
        )
    backend.shutdown()
    database = "PostgreSQL" if "postgres" in env["DATABASE_URL"] else "SQLite"
    report(options, database, rows(samples, counted, rust_missing), over_http, launched)


if __name__ == "__main__":
    main()
