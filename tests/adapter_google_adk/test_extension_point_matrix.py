"""The extension-point matrix (docs/extension-points/google-adk.md) covers the installed ADK:
every field of `LlmAgent` and every hook of `BasePlugin` has a row, the summary's counts
are the rows' statuses, and every faithful row names a test that exists."""

from __future__ import annotations

import inspect
import re
from collections import Counter
from pathlib import Path

from google.adk.agents import LlmAgent
from google.adk.plugins.base_plugin import BasePlugin

ROOT = Path(__file__).resolve().parents[2]
MATRIX = ROOT / "docs" / "extension-points" / "google-adk.md"
TESTS = Path(__file__).resolve().parent


def _rows() -> list[list[str]]:
    rows: list[list[str]] = []
    for line in MATRIX.read_text().splitlines():
        if line.startswith("| ") and not line.startswith(("| extension point", "| ---")):
            # An escaped pipe (``True \| callable``) is text, not a column.
            rows.append([cell.strip() for cell in line.replace("\\|", "/").split("|")[1:-1]])
    return rows


def _named(text: str) -> set[str]:
    return set(re.findall(r"`([A-Za-z_]+)", text))


def test_every_agent_field_and_plugin_hook_has_a_row() -> None:
    named: set[str] = set()
    for row in _rows():
        named |= _named(row[0])
    # ADK sets `parent_agent` itself, from `sub_agents`.
    fields = set(LlmAgent.model_fields) - {"parent_agent"}
    assert sorted(fields - named) == []
    hooks = {name for name, _ in inspect.getmembers(BasePlugin, inspect.iscoroutinefunction)} - {"close"}
    assert sorted(hooks - named) == []


def test_the_summary_counts_the_rows_and_faithful_rows_name_tests() -> None:
    rows = _rows()
    counts: Counter[str] = Counter()
    tests = "\n".join(path.read_text() for path in TESTS.glob("test_*.py"))
    previous: list[str] = []
    for row in rows:
        status = row[3]
        kind = next(k for k in ("faithful", "refused", "documented", "not verified") if status.startswith(k))
        counts[kind] += 1
        named = re.findall(r"(test_[a-z0-9_]+)(?![a-z0-9_]*\.py)", row[4])
        # "same" names the row above's tests.
        named = named or (previous if row[4].startswith("same") else [])
        if kind == "faithful":
            assert named, row[0]
            for name in named:
                assert f"def {name}(" in tests, name
        previous = named
    summary = (
        f"{len(rows)} rows: {counts['faithful']} faithful and tested, {counts['refused']} refused "
        f"at build, {counts['documented']} documented differences, {counts['not verified']} not verified"
    )
    assert summary in " ".join(MATRIX.read_text().split())
