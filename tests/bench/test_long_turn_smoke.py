"""`bench.long_turn --quick`: its tables print, and sessionflow completed every round once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _rows(out: str, title: str) -> dict[str, list[str]]:
    """The rows of the table under the heading that contains `title`: label -> cells."""
    section = out.split(title, 1)[1].split("\n\n", 2)[1]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] not in ("metric", "---"):
            rows[cells[0]] = cells[1:]
    return rows


@pytest.mark.slow
def test_long_turn_quick() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.long_turn", "--quick"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=170,
        check=False,
    )
    print(done.stdout)
    assert done.returncode == 0, done.stderr[-3000:]
    long = _rows(done.stdout, "one turn of 40 model -> tool rounds")
    for label in (
        "outcome",
        "rounds completed (tool results in history)",
        "tool calls run (each call ID once?)",
        "runs used",
        "history events, total / largest run",
        "history bytes, total / largest run",
        "round to round, first 100 rounds, ms",
        "round to round, last 100 rounds, ms",
    ):
        assert len(long[label]) == 2, (label, long.get(label))  # sessionflow and the plugin
    sessionflow = {label: cells[0] for label, cells in long.items()}
    assert sessionflow["outcome"] == "answered: 'all 40 rounds done (40 results)'"
    assert sessionflow["rounds completed (tool results in history)"] == "40 / 40"
    assert sessionflow["tool calls run (each call ID once?)"] == "40 (yes)"
    big = _rows(done.stdout, "one turn of 4 tool calls returning 1 MB each")
    assert big["tool results in history"][0] == "4 / 4"
    assert big["tool calls run"][0] == "4 (each once)"
    assert len(big["history bytes, total / largest run"]) == 2
    assert "machine: cpus:" in done.stdout
