"""The session run with a SIGKILL: worker children serve the flow, and one dies inside a tool.

The same scenario as `run_session`, served by `python -m tests.adapter_langgraph.differential.worker`
children instead of the test process. The first run of the tool ``crash_in`` waits at its
gate (`ToolLog`); the test SIGKILLs that worker there and starts another, which runs the
step's next attempt. The result compares with the plain run like any session's.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace
from importlib import import_module
from pathlib import Path
from typing import Any, cast

from sessionflow import AgentSessionFlow
from sessionflow.demo import ScriptedModelServer
from sessionflow.testing import AgentTestStack, WorkerProcess
from tests.adapter_langgraph.differential.harness import (
    GraphBuilder,
    Run,
    Scenario,
    model_at,
    play_session,
    refused_run,
    session_flow,
)
from tests.crash_tool_log import ToolLog, crash_gate, distinct_tool_runs

__all__ = ["CrashedRun", "distinct_tool_runs", "flow_from_spec", "run_session_with_crash"]

SPEC_FILE = "differential-flow.json"
WORKER = "tests.adapter_langgraph.differential.worker"


@dataclass(frozen=True)
class CrashedRun:
    run: Run
    killed_pid: int
    """The worker killed while the tool waited at its gate."""
    finished_pid: int
    """The worker started after it (0 when the tool never ran)."""
    effect_pids: list[int]
    """The process of every completed run of the crashed tool."""
    steps: dict[str, tuple[int, str]]
    """Every step of the session by its ID (``turn-1/tool/<call>``): its final attempt and outcome."""


def _save_spec(state_dir: Path, spec: dict[str, Any]) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / SPEC_FILE).write_text(json.dumps(spec))


def flow_from_spec(state_dir: Path) -> AgentSessionFlow:
    """Build the flow a spec file describes (in the test process and in each worker child)."""
    spec = cast(dict[str, Any], json.loads((state_dir / SPEC_FILE).read_text()))
    module_name, _, qualname = str(spec["builder"]).partition(":")
    build = cast(GraphBuilder, getattr(import_module(module_name), qualname))
    log = ToolLog(spec["log_path"], state_dir=state_dir, crash_in=spec["crash_in"])
    built = build(model_at(spec["base_url"]), log, None)
    scenario = Scenario(
        name=spec["flow_type"],
        build=build,
        script=(),
        turns=(),
        tool_node=spec["tool_node"],
        pass_tools=spec["pass_tools"],
    )
    return session_flow(scenario, built, spec["flow_type"])


async def run_session_with_crash(
    scenario: Scenario,
    model_server: ScriptedModelServer,
    key: str,
    state_dir: Path,
    temporal_address: str,
    *,
    crash_in: str = "",
    kill_while_asking: bool = False,
) -> CrashedRun:
    """The session on worker children, one SIGKILLed inside ``crash_in`` or while it asks.

    ``kill_while_asking``: the worker is killed when the session first waits for a person,
    before the answer; another starts, and the answer goes to it.
    """
    build = scenario.build
    if "<locals>" in build.__qualname__ or scenario.flow_options:
        raise AssertionError(
            "a crash run needs a module-level builder and no flow_options (workers rebuild it)"
        )
    model_server.script(key, scenario.script)
    log_path = state_dir / "session.jsonl"
    spec = {
        "builder": f"{build.__module__}:{build.__qualname__}",
        "flow_type": key,
        "base_url": model_server.base_url(key),
        "log_path": str(log_path),
        "crash_in": crash_in,
        "tool_node": scenario.tool_node,
        "pass_tools": scenario.pass_tools,
    }
    _save_spec(state_dir, spec)
    try:
        flow = flow_from_spec(state_dir)
    except ValueError as error:  # UnsupportedOptionError: the adapter refused the graph
        return CrashedRun(refused_run(error), 0, 0, [], {})
    async with AgentTestStack(state_dir, [flow], WORKER, server_address=temporal_address) as stack:
        first = await stack.start_worker()
        if kill_while_asking:
            run, finished = await _kill_while_asking(
                scenario, stack, first, key, model_server, ToolLog(log_path)
            )
            history = await stack.read_step_history(key)
            steps = {step.step_execution_id: (step.final_attempt, step.outcome) for step in history}
            return CrashedRun(run, killed_pid=first.pid, finished_pid=finished, effect_pids=[], steps=steps)

        async def kill_at_the_gate() -> int:
            await crash_gate(state_dir, crash_in).wait_until_reached(timeout=120)
            first.kill()
            return (await stack.start_worker()).pid

        killer = asyncio.create_task(kill_at_the_gate())
        log = ToolLog(log_path)
        run = await play_session(scenario, stack.sessions(), key, model_server, log)
        finished = 0
        if killer.done():
            finished = await killer
        else:
            killer.cancel()
            run = replace(run, errors=[*run.errors, f"tool {crash_in!r} never ran, so no worker was killed"])
        history = await stack.read_step_history(key)
    pids = [int(entry["pid"]) for entry in log.entries("tool", crash_in)]
    steps = {step.step_execution_id: (step.final_attempt, step.outcome) for step in history}
    return CrashedRun(run, killed_pid=first.pid, finished_pid=finished, effect_pids=pids, steps=steps)


async def _kill_while_asking(
    scenario: Scenario,
    stack: AgentTestStack,
    first: WorkerProcess,
    key: str,
    model_server: ScriptedModelServer,
    log: ToolLog,
) -> tuple[Run, int]:
    restarted: list[int] = []

    async def kill_and_restart() -> None:
        first.kill()
        restarted.append((await stack.start_worker()).pid)

    run = await play_session(
        scenario, stack.sessions(), key, model_server, log, before_reviews=kill_and_restart
    )
    if not restarted:
        run = replace(run, errors=[*run.errors, "the session never asked, so no worker was killed"])
    return run, restarted[0] if restarted else 0
