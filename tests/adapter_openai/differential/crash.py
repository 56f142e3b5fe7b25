"""The session run with a SIGKILL: worker children serve the flow, and one dies inside a tool.

The same scenario as `run_session`, served by `python -m tests.adapter_openai.differential.worker`
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

from sessionflow import AgentSessionFlow, RedisDeltaTransport
from sessionflow.demo import ScriptedModelServer
from sessionflow.testing import AgentTestStack
from tests.adapter_openai.differential.harness import (
    AgentBuilder,
    Built,
    Models,
    Run,
    Scenario,
    play_session,
    refused_run,
    session_flow,
)
from tests.crash_tool_log import ToolLog, crash_gate
from tests.crash_tool_log import distinct_tool_runs as _distinct_tool_runs

__all__ = ["CrashedRun", "distinct_tool_runs", "flow_from_spec", "run_session_with_crash"]

SPEC_FILE = "differential-flow.json"
WORKER = "tests.adapter_openai.differential.worker"


def distinct_tool_runs(run: Run) -> Run:
    """``run`` with each distinct tool run once (`tests.crash_tool_log.distinct_tool_runs`),
    in `Run.code_runs` too: a read whose work was done in the killed worker runs again in
    the next one, as its effect allows."""
    distinct: list[dict[str, Any]] = []
    for code_run in run.code_runs:
        if code_run not in distinct:
            distinct.append(code_run)
    return replace(_distinct_tool_runs(run), code_runs=distinct)


@dataclass(frozen=True)
class CrashedRun:
    run: Run
    killed_pid: int
    """The worker killed while the tool waited at its gate."""
    finished_pid: int
    """The worker started after it (0 when the tool never ran)."""
    effect_pids: list[int]
    """The worker of every completed run of the crashed tool."""
    steps: dict[str, tuple[int, str]]
    """Every step of the session by its ID (``turn-1/tool/<call>``): its final attempt and outcome."""


def _save_spec(state_dir: Path, spec: dict[str, Any]) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / SPEC_FILE).write_text(json.dumps(spec))


def flow_from_spec(state_dir: Path) -> tuple[Built, AgentSessionFlow]:
    """The agent a spec file describes (with its tool log) and its flow, the same in the test
    process and in every worker child. A streamed run's live events go through Redis, since
    the workers are other processes than the test's follower."""
    spec = cast(dict[str, Any], json.loads((state_dir / SPEC_FILE).read_text()))
    module_name, _, qualname = str(spec["builder"]).partition(":")
    build = cast(AgentBuilder, getattr(import_module(module_name), qualname))
    log = ToolLog(spec["log_path"], state_dir=state_dir, crash_in=spec["crash_in"])
    built = build(Models(spec["server_url"], spec["key"]), log)
    redis_url = spec.get("redis_url")
    transport = RedisDeltaTransport(redis_url) if redis_url else None
    return built, session_flow(built, str(spec["key"]), delta_transport=transport)


async def run_session_with_crash(
    scenario: Scenario,
    server: ScriptedModelServer,
    key: str,
    state_dir: Path,
    temporal_address: str,
    *,
    crash_in: str,
    redis_url: str | None = None,
) -> CrashedRun:
    build = scenario.build
    if "<locals>" in build.__qualname__:
        raise AssertionError("a crash run needs a module-level builder (workers rebuild it)")
    if scenario.streamed and redis_url is None:
        raise AssertionError("a streamed crash run needs Redis: its workers are other processes")
    server.script(key, scenario.script)
    for name, replies in scenario.side_scripts.items():
        server.script(key + name, replies)
    log_path = state_dir / "session.jsonl"
    spec = {
        "builder": f"{build.__module__}:{build.__qualname__}",
        "server_url": server.url,
        "key": key,
        "log_path": str(log_path),
        "crash_in": crash_in,
        "redis_url": redis_url,
    }
    _save_spec(state_dir, spec)
    try:
        built, flow = flow_from_spec(state_dir)
    except (ValueError, TypeError) as error:  # an option refused, or one the adapter lacks
        return CrashedRun(refused_run(error), 0, 0, [], {})
    async with AgentTestStack(state_dir, [flow], WORKER, server_address=temporal_address) as stack:
        first = await stack.start_worker()

        async def kill_at_the_gate() -> int:
            await crash_gate(state_dir, crash_in).wait_until_reached(timeout=120)
            first.kill()
            return (await stack.start_worker()).pid

        killer = asyncio.create_task(kill_at_the_gate())
        log = ToolLog(log_path)
        run = await play_session(scenario, built, stack.sessions(flow), key, server, log)
        finished = 0
        if killer.done():
            finished = await killer
        else:
            killer.cancel()
            run = replace(
                run, problems=[*run.problems, f"tool {crash_in!r} never ran, so no worker was killed"]
            )
        history = await stack.read_step_history(key)
    # A local MCP server's tool logs the worker that started the server.
    entries = [*log.entries("tool", crash_in), *log.entries("mcp", crash_in)]
    pids = [int(entry.get("worker", entry["pid"])) for entry in entries]
    steps = {step.step_execution_id: (step.final_attempt, step.outcome) for step in history}
    return CrashedRun(run, killed_pid=first.pid, finished_pid=finished, effect_pids=pids, steps=steps)
