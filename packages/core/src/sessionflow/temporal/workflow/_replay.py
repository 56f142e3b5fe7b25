"""Replay recorded session histories against the current workflow code.

Workflow code, activity names and payload formats may change only when every recorded
history still replays: a failure here means running sessions would break on upgrade.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from pathlib import Path

from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from sessionflow.temporal._plugin import sandbox_runner
from sessionflow.temporal.workflow._workflow import AgentSessionWorkflow

__all__ = ["export_history", "replay_histories"]


async def export_history(client: Client, session_id: str, path: Path, *, run_id: str | None = None) -> None:
    """Write the history of a session's current run (or of `run_id`) as JSON (the `temporal` CLI format)."""
    history = await client.get_workflow_handle(session_id, run_id=run_id).fetch_history()
    text = json.dumps(json.loads(history.to_json()), indent=1)
    await asyncio.to_thread(path.write_text, text)


async def replay_histories(paths: Iterable[Path]) -> list[str]:
    """Replay each history file; returns the IDs replayed, raising on the first mismatch."""
    replayer = Replayer(workflows=[AgentSessionWorkflow], workflow_runner=sandbox_runner())
    replayed: list[str] = []
    for path in paths:
        history = WorkflowHistory.from_json(path.stem, path.read_text())
        await replayer.replay_workflow(history)
        replayed.append(path.stem)
    return replayed
