"""The extension-point matrix (docs/extension-points/claude-agent-sdk.md) covers the installed
SDK: every field of `ClaudeAgentOptions` and every `HookEvent` has a row, and the summary's
counts are the rows' statuses."""

from __future__ import annotations

import dataclasses
import re
import typing
from collections import Counter
from pathlib import Path

import claude_agent_sdk
from claude_agent_sdk import ClaudeAgentOptions

MATRIX = Path(__file__).resolve().parents[2] / "docs" / "extension-points" / "claude-agent-sdk.md"
README = Path(__file__).resolve().parents[2] / "packages" / "adapter-claude" / "README.md"


def _rows() -> list[list[str]]:
    rows: list[list[str]] = []
    for line in MATRIX.read_text().splitlines():
        if re.match(r"\| \d+ \|", line):
            # An escaped pipe (``ls \| wc -l``) is text, not a column.
            rows.append([cell.strip() for cell in line.replace("\\|", "/").split("|")[1:-1]])
    return rows


def _named(text: str) -> set[str]:
    return set(re.findall(r"`([A-Za-z_]+)", text))


def test_every_option_field_and_hook_event_has_a_row() -> None:
    named: set[str] = set()
    for row in _rows():
        named |= _named(row[1])
    fields = {f.name for f in dataclasses.fields(ClaudeAgentOptions)}
    # The hook rows name their events; `hooks` is the field that holds them.
    assert sorted(fields - named - {"hooks"}) == []
    events = {typing.get_args(a)[0] for a in typing.get_args(claude_agent_sdk.types.HookEvent)}
    assert sorted(events - named) == []


def test_the_summary_counts_the_rows() -> None:
    rows = _rows()
    assert [int(row[0]) for row in rows] == list(range(1, len(rows) + 1))
    counts: Counter[str] = Counter()
    for row in rows:
        status = row[4]
        # A row whose status starts "faithful; documented" counts as documented.
        if status.startswith("faithful") and not status.startswith("faithful; documented"):
            counts["faithful"] += 1
        elif status.startswith("refused"):
            counts["refused"] += 1
        else:
            assert status.startswith(("documented", "faithful; documented")), status
            counts["documented"] += 1
    summary = (
        f"{len(rows)} rows: {counts['faithful']} faithful and tested, {counts['refused']} refused "
        f"at build, {counts['documented']} documented differences"
    )
    assert summary in MATRIX.read_text()
    assert summary in " ".join(README.read_text().split())
