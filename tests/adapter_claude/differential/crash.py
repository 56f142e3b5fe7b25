"""The session run with a SIGKILL: worker children serve the flow, and one dies inside a tool.

The same scenario as `harness.run_session`, served by
``python -m tests.adapter_claude.differential.worker`` children instead of the test process.
The first run of the custom tool ``crash_in`` waits at its gate
(`tests.crash_tool_log.ToolLog`); the test SIGKILLs that worker there and starts another,
which runs the step's next attempt. The result compares with the plain run like any
session's. (The Pydantic AI and OpenAI Agents differential tests have the same harness.)
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field, replace
from importlib import import_module
from pathlib import Path
from typing import Any, cast

from sessionflow import AgentSessionFlow, ToolEffect
from sessionflow.demo import ScriptedModelServer
from sessionflow.testing import AgentTestStack
from tests.adapter_claude.differential.harness import (
    Builder,
    Run,
    RunFolders,
    Scenario,
    play_session,
    scripted,
    session_flow,
)
from tests.crash_tool_log import ToolLog, crash_gate, distinct_tool_runs

__all__ = [
    "SPEC_FILE",
    "WORKER",
    "CrashedRun",
    "distinct_tool_runs",
    "flow_from_spec",
    "run_session_with_crash",
]

SPEC_FILE = "differential-flow.json"
WORKER = "tests.adapter_claude.differential.worker"


@dataclass(frozen=True)
class CrashedRun:
    run: Run
    killed_pid: int
    """The worker killed while the tool waited at its gate."""
    finished_pid: int
    """The worker started after it."""
    effect_pids: list[int]
    """The worker of every completed run of the crashed tool."""
    steps: dict[str, tuple[int, str]]
    """Every step of the session by its ID (``turn-1/tool/<call>``): its final attempt and outcome."""
    step_types: dict[str, str] = field(default_factory=lambda: cast(dict[str, str], {}))
    """Every step's type by its ID (``sessionflow.CallTool``, ``sessionflow.CallSingleAttemptTool``)."""


def flow_from_spec(state_dir: Path) -> tuple[RunFolders, AgentSessionFlow]:
    """The run's folders and the flow a spec file describes, the same in the test process and
    in every worker child (the builder is named, so a worker imports it)."""
    spec = cast(dict[str, Any], json.loads((state_dir / SPEC_FILE).read_text()))
    module_name, _, qualname = str(spec["builder"]).partition(":")
    build = cast(Builder, getattr(import_module(module_name), qualname))
    folders = RunFolders(Path(spec["root"]))
    log = ToolLog(folders.tool_log, state_dir=state_dir, crash_in=spec["crash_in"])
    options = scripted(build(folders.workspace, log), str(spec["base_url"]), folders, plain=False)
    effect = ToolEffect(spec.get("default_tool_effect", ToolEffect.READ.value))
    return folders, session_flow(options, str(spec["key"]), folders, default_tool_effect=effect)


async def run_session_with_crash(
    scenario: Scenario,
    server: ScriptedModelServer,
    key: str,
    root: Path,
    temporal_address: str,
    *,
    crash_in: str,
) -> CrashedRun:
    build = scenario.build
    if "<locals>" in build.__qualname__ or build.__name__ == "<lambda>":
        raise AssertionError("a crash run needs a module-level builder (workers rebuild it)")
    folders = RunFolders(root)
    folders.prepare(scenario.files)
    server.script(key, scenario.replies(folders.workspace))
    state_dir = root / "state"
    state_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        "builder": f"{build.__module__}:{build.__qualname__}",
        "base_url": server.base_url(key, api="anthropic"),
        "key": key,
        "root": str(root),
        "crash_in": crash_in,
        "default_tool_effect": scenario.default_tool_effect.value,
    }
    (state_dir / SPEC_FILE).write_text(json.dumps(spec))
    _, flow = flow_from_spec(state_dir)
    async with AgentTestStack(state_dir, [flow], WORKER, server_address=temporal_address) as stack:
        first = await stack.start_worker()

        async def kill_at_the_gate() -> int:
            await crash_gate(state_dir, crash_in).wait_until_reached(timeout=180)
            first.kill()
            return (await stack.start_worker()).pid

        killer = asyncio.create_task(kill_at_the_gate())
        run = await play_session(scenario, stack.sessions(flow), key, server, folders)
        finished = 0
        if killer.done():
            finished = await killer
        else:
            killer.cancel()
            run = replace(
                run, problems=[*run.problems, f"tool {crash_in!r} never ran, so no worker was killed"]
            )
        history = await stack.read_step_history(key)
    pids = [int(entry["pid"]) for entry in ToolLog(folders.tool_log).entries("tool", crash_in)]
    steps = {step.step_execution_id: (step.final_attempt, step.outcome) for step in history}
    step_types = {step.step_execution_id: step.step_type for step in history}
    return CrashedRun(
        run, killed_pid=first.pid, finished_pid=finished, effect_pids=pids, steps=steps, step_types=step_types
    )
