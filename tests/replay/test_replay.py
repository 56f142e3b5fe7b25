"""Recorded session histories must replay against the current workflow code."""

from __future__ import annotations

from pathlib import Path

from sessionflow.temporal import replay_histories

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def test_recorded_histories_exist() -> None:
    assert {p.stem for p in HISTORIES} >= {
        "text-turn",
        "tools-and-approval",
        "model-failure-note",
        "early-answer",
        "upgrade-from-v1",
        "continue-steps",
        "continue-limit",
        "carry-between-turns",
        "tool-state-update",
        "framework-approval",
        "question-answered",
        "verify-succeeded",
        "verify-failed",
        "verify-unknown",
        "compact-payloads",
        "start-with-history",
        "local-reads",
        "version-upgrade-after-approval",
        "version-upgrade-idle",
        "search-attributes",
        "double-texting",
        "forked-session",
        "flow-type-client",
        "flow-type-queried-start",
        "long-turn-moved",
        "long-turn-resumed",
        "long-turn-ended",
        "approval-rebound",
        "turn-records",
        "steer",
    }


async def test_recorded_histories_replay() -> None:
    assert await replay_histories(HISTORIES) == [p.stem for p in HISTORIES]
