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
import platform
import pstats
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import MANAGE, PYTHON, ROOT, cpu_seconds, percentile, print_table
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
RUST_RELEASE = "0.1.4"
# The hub's recovery sweeper wakes every half run lease (7.5 s). Under callgrind a call takes
# some 50 times longer, so the sweeper would run 50 times as often per call as it does in
# use: about 0.35 M instructions a call, now and then, on a tool that never touches a run.
# While instructions are counted it waits a day instead (time-based work, not a call's).
COUNTED_ENV = {"NORMAGPT_RUN_LEASE_SECONDS": "172800"}
READY_WITHIN = 600.0  # seconds to initialize (minutes under valgrind on a busy machine)


class RawServer:
    """A server on stdio, driven by JSON lines: no SDK client between the bench and it."""

    def __init__(self, command: list[str], env: dict[str, str], *, under_valgrind: bool) -> None:
        self.proc = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.under_valgrind = under_valgrind
        self.next_id = 1
        hello = {"protocolVersion": "2025-06-18", "capabilities": {},
                 "clientInfo": {"name": "bench", "version": "1"}}  # fmt: skip
        self.request("initialize", hello)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdout is not None
        message_id = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": message_id, "method": method, "params": params})
        while True:  # notifications (logs, progress) may come before the answer
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"the server {self.proc.args!r} closed its stdout")
            answer = json.loads(line)
            if answer.get("id") == message_id:
                if "error" in answer:
                    raise SystemExit(f"{method}: {answer['error']}")
                return answer["result"]  # type: ignore[no-any-return]

    def call(self, tool: str, arguments: dict[str, Any]) -> str:
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        if result.get("isError"):
            raise SystemExit(f"{tool}: {result}")
        return "".join(block.get("text", "") for block in result["content"])

    def instrument(self, on: bool) -> None:
        switch = "on" if on else "off"
        subprocess.run([_tool("callgrind_control"), "-i", switch, str(self.proc.pid)],
                       check=True, capture_output=True)  # fmt: skip

    def dump(self) -> None:
        subprocess.run([_tool("callgrind_control"), "-d", str(self.proc.pid)],
                       check=True, capture_output=True)  # fmt: skip

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise SystemExit(f"--instructions needs valgrind: {name} is not on the PATH")
    return found


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


class RawHttp:
    """A server on streamable HTTP, driven by raw POSTs (one session, one connection)."""

    HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}  # fmt: skip

    def __init__(self, command: list[str], env: dict[str, str], url: str) -> None:
        quiet = subprocess.DEVNULL
        self.proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdin=quiet, stdout=quiet, stderr=quiet
        )
        self.url = url
        self.http = httpx.Client(timeout=60)
        self.headers = dict(self.HEADERS)
        self.next_id = 1
        deadline = time.monotonic() + READY_WITHIN
        while True:
            try:
                hello = {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "1"}}  # fmt: skip
                response = self._post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                       "params": hello})  # fmt: skip
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise SystemExit(f"{command!r} did not serve {url}") from None
                time.sleep(0.2)
        session = response.headers.get("mcp-session-id")
        if session:
            self.headers["mcp-session-id"] = session
        self.headers["mcp-protocol-version"] = "2025-06-18"
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _post(self, message: dict[str, Any]) -> httpx.Response:
        return self.http.post(self.url, json=message, headers=self.headers)

    def call(self, tool: str, arguments: dict[str, Any]) -> str:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}}  # fmt: skip
        response = self._post(message)
        text = response.text
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
        result = json.loads(text)["result"]
        return "".join(block.get("text", "") for block in result["content"])

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.proc.pid)

    def close(self) -> None:
        self.http.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


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
        valgrind = [_tool("valgrind"), "--tool=callgrind", "--instr-atstart=no",
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


START_UP_STEPS = ("initialize", "tools/list", "first call")


GREET = ("greet", {"name": "Алиса"})


def start_up(
    command: list[str],
    env: dict[str, str],
    first: tuple[str, dict[str, Any]] = GREET,
    cwd: Path = ROOT,
) -> list[float]:
    """Seconds from spawn to the answers a desktop client waits on first: `initialize`,
    `tools/list`, and its first tool call (`first`: greet), each sent when the last is
    answered."""
    began = time.perf_counter()
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "bench", "version": "1"}}  # fmt: skip
    asked = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": first[0], "arguments": first[1]}},
    ]  # fmt: skip
    times = []
    try:
        for request in asked:
            proc.stdin.write(json.dumps(request, ensure_ascii=False).encode() + b"\n")
            proc.stdin.flush()
            while True:
                line = proc.stdout.readline()
                if not line:
                    raise SystemExit(f"{command!r} closed its stdout while starting")
                answer = json.loads(line)
                if answer.get("id") == request["id"]:
                    break
            if "error" in answer or answer["result"].get("isError"):
                raise SystemExit(f"{request['method']}: {answer}")
            times.append(time.perf_counter() - began)
            if request["id"] == 1:
                initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                proc.stdin.write(json.dumps(initialized).encode() + b"\n")
    finally:
        proc.stdin.close()
        proc.wait(timeout=120)
    return times


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


class Unavailable(Exception):
    """The Rust original cannot be had here; its row says why instead of a figure."""


def rust_original(path: Path | None, scratch: Path) -> tuple[Path, str]:
    """The Rust original's binary: `path`, or release RUST_RELEASE's published build for
    this machine, taken from the npm registry into `scratch` (it builds nothing). Raises
    Unavailable, naming the reason, when neither runs (no npm, offline, no such file)."""
    if path is None:
        path = _rust_from_npm(scratch)
    try:
        done = subprocess.run([str(path), "--version"], capture_output=True, text=True,
                              timeout=30)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as error:
        raise Unavailable(f"{path}: {error}") from None
    if done.returncode != 0:
        raise Unavailable(f"{path} --version exited {done.returncode}")
    return path, done.stdout.strip()


def _rust_from_npm(scratch: Path) -> Path:
    os_name = {"linux": "linux", "darwin": "darwin"}.get(sys.platform)
    cpu = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower()
    )
    npm = shutil.which("npm")
    if os_name is None or cpu is None or npm is None:
        raise Unavailable("no PATH given and no npm on linux or macOS (x64, arm64)")
    package = f"oj-mcp-rs-{os_name}-{cpu}@{RUST_RELEASE}"
    try:
        packed = subprocess.run([npm, "pack", package, "--silent"], cwd=scratch,
                                check=True, capture_output=True, text=True,
                                timeout=300)  # fmt: skip
        with tarfile.open(scratch / packed.stdout.strip().splitlines()[-1]) as archive:
            archive.extractall(scratch / "rust", filter="data")
    except (OSError, IndexError, tarfile.TarError, subprocess.SubprocessError) as error:
        raise Unavailable(f"npm pack {package} failed: {error}") from None
    path = scratch / "rust" / "package" / "bin" / "oj-mcp-rs"
    path.chmod(0o755)
    return path


def profile_summary(path: Path) -> None:
    print(f"\nHub profile ({path}), by own time:")
    stats = pstats.Stats(str(path))
    stats.sort_stats("tottime").print_stats(25)


def main() -> None:
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
            capture = [
                PYTHON,
                str(ROOT / "bench" / "cached_calls.py"),
                str(scratch / "captured.json"),
                str(options.norm_pages),
            ]
            subprocess.run(capture, cwd=ROOT, env=env, check=True, capture_output=True)
            captured = json.loads((scratch / "captured.json").read_text(encoding="utf-8"))
            for name in CACHED:
                CALLS[name] = lambda i, arguments=captured[name]["arguments"]: arguments
        commands = {name: command(name, base_url, scratch, None) for name in SERVERS}
        rust_missing = ""
        if options.rust_original is not None:
            given = None if options.rust_original == "npm" else Path(options.rust_original)
            try:
                binary, version = rust_original(given, scratch)
            except Unavailable as error:
                rust_missing = str(error)
                print(f"Rust original: not available ({error})", file=sys.stderr)
            else:
                LABELS["rust"] = f"Rust original ({version})"
                commands["rust"] = [str(binary), "--base-url", base_url, "--token", "bench"]
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
    print_table(header, rows(samples, counted, rust_missing))
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


if __name__ == "__main__":
    main()
