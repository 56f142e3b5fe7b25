"""The log every differential tool writes (OpenAI Agents, LangGraph), which can also hold one
tool at a gate to be SIGKILLed.

A tool logs a line when it has done its work (its effect), so a run killed before that
leaves none, and the log says how often each tool's effect really happened.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sessionflow.testing import FileGate, InvocationLog

__all__ = ["ToolLog", "crash_gate"]


def crash_gate(state_dir: Path, tool_name: str) -> FileGate:
    return FileGate(state_dir, f"crash-{tool_name}")


class ToolLog(InvocationLog):
    """An `InvocationLog`; with ``crash_in``, the first run of that tool waits at its gate.

    The test SIGKILLs the worker while the tool waits; the run after (the step's next
    attempt, in another worker) finds the gate reached and goes on. A tool may be called from
    the event loop or from a thread pool (LangChain's), so the wait is a plain sleep loop that
    blocks whichever it runs on: the process is killed during it, and nothing else in that
    process matters any more.
    """

    def __init__(
        self, path: Path | str, *, state_dir: Path | None = None, crash_in: str | None = None
    ) -> None:
        super().__init__(path)
        self._gate = crash_gate(state_dir, crash_in) if state_dir is not None and crash_in else None
        self._crash_in = crash_in

    def record(self, kind: str, name: str, **fields: Any) -> None:
        gate = self._gate
        if gate is not None and kind == "tool" and name == self._crash_in and not gate.is_reached():
            gate.mark_reached()
            while not gate.is_released():
                time.sleep(0.01)
        super().record(kind, name, **fields)
