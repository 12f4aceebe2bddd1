"""`bench/mcp_overhead.py` keeps the Rust original's row as a reference figure, with no
target (issue 54, item 8: the hub is held to 1.2× the same-SDK floor, not to the Rust
original), and a machine where its binary cannot be had gets a row saying so instead of a
bench that stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import mcp_overhead as bench

SAMPLES = {
    (tool, name): [0.001 * factor] * 4
    for tool in bench.CALLS
    for name, factor in (("minimal", 1.0), ("hub", 1.1), ("rust", 0.2))
    if name != "rust" or tool in bench.RUST_TOOLS
}


def by_server(table: list[list[str]], tool: str) -> dict[str, list[str]]:
    return {row[1]: row for row in table if row[0] == tool}


def test_the_rust_row_is_a_reference_and_the_floor_holds_the_target() -> None:
    table = by_server(bench.rows(SAMPLES, {}), "get_problem")
    rust = table[bench.LABELS["rust"]]
    assert rust[-1] == "reference"
    assert rust[6] == "5.50×"  # the hub's ratio to it is still shown
    assert table[bench.LABELS["minimal"]][-1] == "hub ≤ 1.2×"
    assert not hasattr(bench, "RUST_TARGET")


def test_a_missing_rust_binary_is_a_row_saying_so(tmp_path: Path) -> None:
    with pytest.raises(bench.Unavailable, match="oj-mcp-rs"):
        bench.rust_original(tmp_path / "oj-mcp-rs", tmp_path)
    without_rust = {key: value for key, value in SAMPLES.items() if key[1] != "rust"}
    table = bench.rows(without_rust, {}, "no npm")
    (row,) = [row for row in table if "not available" in row[1]]
    assert row[:2] == ["get_problem", f"{bench.LABELS['rust']}: not available (no npm)"]
    assert set(row[2:]) == {""}
