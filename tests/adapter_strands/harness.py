"""The differential harness: one Strands agent, run plainly and as a session, on one scripted model server.

A `Scenario` says how to build the agent (the same builder both times, given the model of
that run and its tool log), what the model answers, and the user's turns. `run_plain`
calls the agent itself turn by turn (``await agent.invoke_async(text)``, the one agent
object keeping its messages and state, as Strands' docs do); `run_session` serves it as a
sessionflow session on the real Temporal dev server, in this process or (with a crash) in
worker children, one of which is SIGKILLed inside a tool. `assert_same_run` compares the
model requests call by call, the final messages, `agent.state` and the real tool runs.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from importlib import import_module
from pathlib import Path
from typing import Any, cast

from strands import Agent
from strands.models import Model
from strands.models.openai import OpenAIModel

from sessionflow import (
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    AgentSnapshot,
    AgentStatus,
    ToolEffect,
)
from sessionflow.demo import ModelReply, ScriptedModelServer
from sessionflow.temporal import read_step_history
from sessionflow.testing import CRASH_TIMINGS, AgentTestStack, InvocationLog, wait_for_agent_snapshot
from sessionflow_strands import history_messages, strands_session_flow
from sessionflow_strands._messages import load_message
from tests.crash_tool_log import ToolLog, crash_gate
from tests.serving import serving

__all__ = [
    "AgentBuilder",
    "Run",
    "Scenario",
    "assert_same_run",
    "model_for",
    "run_both",
    "run_plain",
    "run_session",
    "run_session_with_crash",
]

TIMINGS = replace(CRASH_TIMINGS, model_heartbeat_timeout=timedelta(seconds=30))
SPEC_FILE = "strands-flow.json"
WORKER = "tests.adapter_strands.worker"

AgentBuilder = Callable[[Model, InvocationLog], Agent]
"""Builds the scenario's agent on the given model, its tools logging to the given log."""


def model_for(server_url: str, key: str, api: str = "openai") -> Model:
    """Strands' `OpenAIModel` (Chat Completions), or its `AnthropicModel` (Messages), on the
    scripted server's conversation ``key``."""
    from urllib.parse import quote

    if api == "anthropic":
        from strands.models.anthropic import AnthropicModel

        client_args = {"base_url": f"{server_url}/k/{quote(key, safe='')}", "api_key": "x", "max_retries": 0}
        return AnthropicModel(client_args=client_args, model_id="scripted", max_tokens=512)
    base_url = f"{server_url}/k/{quote(key, safe='')}/v1"
    return OpenAIModel(
        client_args={"base_url": base_url, "api_key": "x", "max_retries": 0}, model_id="scripted"
    )


@dataclass(frozen=True)
class Scenario:
    name: str
    build: AgentBuilder
    script: Sequence[ModelReply]
    turns: Sequence[str]
    api: str = "openai"
    """Which Strands model both runs use: ``openai`` (`OpenAIModel`) or ``anthropic``."""
    history: Sequence[dict[str, Any]] = ()
    """An existing conversation both runs start from: plain's ``agent.messages``, the
    session's ``start_session(history=history_messages(...))``."""


@dataclass(frozen=True)
class Run:
    requests: list[dict[str, Any]]
    """Every model request body, in order."""
    messages: list[dict[str, Any]]
    """The conversation after the last turn (role and content of each message)."""
    state: dict[str, Any]
    """`agent.state` after the last turn."""
    tool_runs: list[dict[str, Any]]
    """Every real run of a tool, as it logged itself, in order."""
    model_steps: int | None = None
    model_attempts: int | None = None
    snapshot: AgentSnapshot | None = None


def tool_runs(log: InvocationLog) -> list[dict[str, Any]]:
    skip = {"kind", "pid", "at", "worker"}
    return [{k: v for k, v in e.items() if k not in skip} for e in log.entries() if e.get("kind") == "tool"]


def _model_fields(message: dict[str, Any]) -> dict[str, Any]:
    """What Strands sends a model of a message (`stream_messages` keeps role and content):
    its ``tracking_id`` and ``metadata`` (latency) differ from run to run."""
    return {"role": message["role"], "content": message["content"]}


def _requests(server: ScriptedModelServer, key: str) -> list[dict[str, Any]]:
    return [r.body for r in server.requests(key)]


async def run_plain(scenario: Scenario, server: ScriptedModelServer, key: str, log_dir: Path) -> Run:
    server.script(key, scenario.script)
    log = InvocationLog(log_dir / "plain.jsonl")
    agent = scenario.build(model_for(server.url, key, scenario.api), log)
    agent.messages = cast(Any, [dict(m) for m in scenario.history])
    for text in scenario.turns:
        await agent.invoke_async(text)
    return Run(
        requests=_requests(server, key),
        messages=[_model_fields(cast(dict[str, Any], m)) for m in agent.messages],
        state=agent.state.get() or {},
        tool_runs=tool_runs(log),
    )


def session_flow(agent: Agent, flow_type: str) -> AgentSessionFlow:
    # Plain Strands asks nobody before a tool runs; the session's default effect
    # (unclassified) would ask about every call.
    options = AgentSessionOptions(timings=TIMINGS, default_tool_effect=ToolEffect.READ)
    return strands_session_flow(agent, flow_type=flow_type, options=options)


async def play_session(
    scenario: Scenario,
    sessions: AgentSessionClient,
    session_id: str,
    server: ScriptedModelServer,
    log: InvocationLog,
) -> Run:
    snapshot: AgentSnapshot | None = None
    for number, text in enumerate(scenario.turns, 1):
        if number == 1:
            await sessions.start_session(session_id, text, history=history_messages(scenario.history))
        else:
            assert await sessions.send_user_message(session_id, text)

        def ended(s: AgentSnapshot, number: int = number) -> AgentSnapshot | None:
            state = s.state
            done = (
                state and state.turn_count >= number and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
            )
            return s if done else None

        snapshot = await wait_for_agent_snapshot(
            sessions, session_id, ended, description=f"turn {number} to end", timeout=90
        )
        assert snapshot.state is not None
        assert snapshot.state.last_turn_error is None, snapshot.state.last_turn_error
    assert snapshot is not None
    stored = await sessions.stored_messages(session_id)
    history = await read_step_history(sessions.client, session_id)
    model_steps = [s for s in history if s.step_type == "sessionflow.RunModel"]
    view = snapshot.framework_state or {}
    return Run(
        requests=_requests(server, session_id),
        messages=[_model_fields(load_message(m.message.framework_item)) for m in stored],
        state=cast(dict[str, Any], view.get("agent_state") or {}),
        tool_runs=tool_runs(log),
        model_steps=len(model_steps),
        model_attempts=sum(s.final_attempt for s in model_steps),
        snapshot=snapshot,
    )


async def run_session(
    scenario: Scenario, server: ScriptedModelServer, key: str, log_dir: Path, temporal_address: str
) -> Run:
    server.script(key, scenario.script)
    log = InvocationLog(log_dir / "session.jsonl")
    agent = scenario.build(model_for(server.url, key, scenario.api), log)
    async with serving(temporal_address, session_flow(agent, key)) as sessions:
        return await play_session(scenario, sessions, key, server, log)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def run_both(
    scenario: Scenario, server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> tuple[Run, Run]:
    key = unique(f"strands-{scenario.name}")
    plain = await run_plain(scenario, server, f"{key}-plain", tmp_path)
    session = await run_session(scenario, server, key, tmp_path, temporal_address)
    return plain, session


def assert_same_run(plain: Run, session: Run) -> None:
    """Same requests call by call, same final messages and state, same real tool runs; and
    every model call was its own step, run once."""
    assert len(session.requests) == len(plain.requests)
    for number, (p, s) in enumerate(zip(plain.requests, session.requests, strict=True), 1):
        assert s == p, f"model request {number} differs:\nplain   {json.dumps(p)}\nsession {json.dumps(s)}"
    assert session.messages == plain.messages
    assert session.state == plain.state
    assert session.tool_runs == plain.tool_runs
    assert session.model_steps == len(plain.requests)
    assert session.model_attempts == session.model_steps


# -- a session whose worker dies inside a tool -------------------------------------------


def flow_from_spec(state_dir: Path) -> AgentSessionFlow:
    """The flow a spec file describes, the same in the test process and every worker child."""
    spec = cast(dict[str, Any], json.loads((state_dir / SPEC_FILE).read_text()))
    module_name, _, qualname = str(spec["builder"]).partition(":")
    build = cast(AgentBuilder, getattr(import_module(module_name), qualname))
    log = ToolLog(spec["log_path"], state_dir=state_dir, crash_in=spec["crash_in"])
    agent = build(model_for(str(spec["server_url"]), str(spec["key"])), log)
    return session_flow(agent, str(spec["key"]))


def _save_spec(state_dir: Path, spec: dict[str, Any]) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / SPEC_FILE).write_text(json.dumps(spec))


@dataclass(frozen=True)
class CrashedRun:
    run: Run
    killed_pid: int
    finished_pid: int
    effect_pids: list[int]
    steps: dict[str, tuple[int, str]]


async def run_session_with_crash(
    scenario: Scenario,
    server: ScriptedModelServer,
    key: str,
    state_dir: Path,
    temporal_address: str,
    *,
    crash_in: str,
) -> CrashedRun:
    """The session served by worker children; the first run of ``crash_in`` waits at its gate,
    where the test SIGKILLs that worker and starts another."""
    if "<locals>" in scenario.build.__qualname__:
        raise AssertionError("a crash run needs a module-level builder (workers rebuild it)")
    server.script(key, scenario.script)
    log_path = state_dir / "session.jsonl"
    spec = {
        "builder": f"{scenario.build.__module__}:{scenario.build.__qualname__}",
        "server_url": server.url,
        "key": key,
        "log_path": str(log_path),
        "crash_in": crash_in,
    }
    _save_spec(state_dir, spec)
    flow = flow_from_spec(state_dir)
    async with AgentTestStack(state_dir, [flow], WORKER, server_address=temporal_address) as stack:
        first = await stack.start_worker()

        async def kill_at_the_gate() -> int:
            await crash_gate(state_dir, crash_in).wait_until_reached(timeout=120)
            first.kill()
            return (await stack.start_worker()).pid

        killer = asyncio.create_task(kill_at_the_gate())
        log = ToolLog(log_path)
        run = await play_session(scenario, stack.sessions(flow), key, server, log)
        assert killer.done(), f"tool {crash_in!r} never ran, so no worker was killed"
        finished = await killer
        history = await stack.read_step_history(key)
    pids = [int(entry["pid"]) for entry in log.entries("tool", crash_in)]
    steps = {step.step_execution_id: (step.final_attempt, step.outcome) for step in history}
    return CrashedRun(run, killed_pid=first.pid, finished_pid=finished, effect_pids=pids, steps=steps)
