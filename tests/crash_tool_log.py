"""The log every differential tool writes (OpenAI Agents, LangGraph, Pydantic AI), which can also hold one
tool at a gate to be SIGKILLed.

A tool logs a line when it has done its work (its effect), so a run killed before that
leaves none, and the log says how often each tool's effect really happened.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

from sessionflow.testing import FileGate, InvocationLog

__all__ = ["GATED_KINDS", "ToolLog", "crash_gate", "distinct_tool_runs"]

GATED_KINDS = ("tool", "mcp")
"""The log kinds a crash gate holds: a function tool's run, and a local MCP server's tool."""

_CRASH_DIR_ENV = "SESSIONFLOW_TEST_CRASH_DIR"
_CRASH_IN_ENV = "SESSIONFLOW_TEST_CRASH_IN"


def crash_gate(state_dir: Path, tool_name: str) -> FileGate:
    return FileGate(state_dir, f"crash-{tool_name}")


class ToolLog(InvocationLog):
    """An `InvocationLog`; with ``crash_in``, the first run of that tool waits at its gate.

    The test SIGKILLs the worker while the tool waits; the run after (the step's next
    attempt, in another worker) finds the gate reached and goes on. A tool may be called from
    the event loop or from a thread pool (LangChain's), so the wait is a plain sleep loop that
    blocks whichever it runs on: the process is killed during it, and nothing else in that
    process matters any more.

    A local MCP server (a child of the worker, over stdio) holds its tool at the same gate
    (`env` passes the gate on, `from_env` takes it up). SIGKILL reaches only the worker, so
    the server leaves the gate when its parent is gone: it dies with the worker, as a stdio
    server does once its pipe closes.
    """

    def __init__(
        self, path: Path | str, *, state_dir: Path | None = None, crash_in: str | None = None
    ) -> None:
        super().__init__(path)
        self._state_dir = state_dir
        self._gate = crash_gate(state_dir, crash_in) if state_dir is not None and crash_in else None
        self._crash_in = crash_in

    @classmethod
    def from_env(cls, path: Path | str, environ: Mapping[str, str]) -> ToolLog:
        state_dir = environ.get(_CRASH_DIR_ENV)
        return cls(
            path, state_dir=Path(state_dir) if state_dir else None, crash_in=environ.get(_CRASH_IN_ENV)
        )

    def env(self) -> dict[str, str]:
        """The environment a child process needs to hold its tool at this log's gate."""
        if self._state_dir is None or not self._crash_in:
            return {}
        return {_CRASH_DIR_ENV: str(self._state_dir), _CRASH_IN_ENV: self._crash_in}

    def record(self, kind: str, name: str, **fields: Any) -> None:
        gate = self._gate
        if gate is not None and kind in GATED_KINDS and name == self._crash_in and not gate.is_reached():
            parent = os.getppid()
            gate.mark_reached()
            while not gate.is_released():
                if os.getppid() != parent:
                    os._exit(1)  # the worker above was killed; this run never finished
                time.sleep(0.01)
        super().record(kind, name, **fields)


class _WithToolRuns(Protocol):
    @property
    def tool_runs(self) -> list[dict[str, Any]]: ...


RunT = TypeVar("RunT", bound=_WithToolRuns)


def distinct_tool_runs(run: RunT) -> RunT:
    """``run`` (a differential harness's `Run` dataclass) with each distinct tool run once.

    A read whose work was done in the killed worker, but whose result had not reached the
    server yet, runs again in the next one: its effect allows that. So the crash tests
    compare which runs happened, and check the crashed tool's count apart.
    """
    distinct: list[dict[str, Any]] = []
    for tool_run in run.tool_runs:
        if tool_run not in distinct:
            distinct.append(tool_run)
    return cast(RunT, dataclasses.replace(cast(Any, run), tool_runs=distinct))
