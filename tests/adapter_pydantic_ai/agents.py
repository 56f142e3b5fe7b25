"""Agents and flows shared by the tests and their worker child processes.

A test writes `flow.json` into its state folder; `python -m tests.adapter_pydantic_ai.worker`
reads it back and builds the same flow, so both sides agree on the flow type and options.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, RunContext

from sessionflow import AgentSessionFlow, AgentSessionOptions, ToolEffect
from sessionflow.kit import ModelApi, current_tool_invocation
from sessionflow.testing import InvocationLog
from sessionflow_pydantic_ai import pydantic_ai_session_flow
from sessionflow_pydantic_ai._models import model_for_api
from tests.harness import FAST

MODEL = "scripted-model"


@dataclass
class Deps:
    """The run's deps: `greeting` is state, stored with the session; `log` and `pid` are the
    worker's resources (`deps_resources`), put in by whichever process runs the step."""

    greeting: str
    log: InvocationLog | None = None
    pid: int = 0


def deps_factory() -> Deps:
    return Deps(greeting="hello from deps")


def deps_resources(state_dir: Path) -> Callable[[], AbstractAsyncContextManager[Mapping[str, Any]]]:
    @asynccontextmanager
    async def worker_resources() -> AsyncGenerator[Mapping[str, Any]]:
        log = InvocationLog(state_dir / "invocations.jsonl")
        log.record("deps", "opened")
        try:
            yield {"log": log, "pid": os.getpid()}
        finally:
            log.record("deps", "closed")

    return worker_resources


def weather_agent(base_url: str, api: ModelApi = "chat_completions") -> Agent[Deps, str]:
    """A plain Pydantic AI agent with deps, a read tool and a write tool."""
    agent = Agent(
        model_for_api(api, MODEL, base_url=base_url, api_key="test"),
        deps_type=Deps,
        instructions="You report the weather.",
    )

    @agent.tool(metadata={"sessionflow_effect": "read"})
    def lookup(ctx: RunContext[Deps], city: str) -> str:
        """Look up the weather of a city."""
        invocation = current_tool_invocation()
        assert ctx.deps.log is not None
        ctx.deps.log.record(
            "tool", "lookup", city=city, key=invocation.idempotency_key if invocation else None
        )
        return f"sunny in {city} ({ctx.deps.greeting}, pid {ctx.deps.pid})"

    @agent.tool
    async def delete_file(ctx: RunContext[Deps], path: str) -> str:
        """Delete a file (asks for approval: its effect is unclassified)."""
        assert ctx.deps.log is not None
        ctx.deps.log.record("tool", "delete_file", path=path)
        return f"deleted {path}"

    return agent


def save_flow_spec(
    state_dir: Path, *, flow_type: str, base_url: str, api: ModelApi = "chat_completions"
) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / "flow.json").write_text(
        json.dumps({"flow_type": flow_type, "base_url": base_url, "api": api})
    )


def load_flow(state_dir: Path) -> AgentSessionFlow:
    spec = json.loads((state_dir / "flow.json").read_text())
    return pydantic_ai_session_flow(
        lambda: weather_agent(spec["base_url"], spec["api"]),
        flow_type=spec["flow_type"],
        options=AgentSessionOptions(timings=FAST, default_tool_effect=ToolEffect.UNCLASSIFIED),
        deps_factory=deps_factory,
        deps_resources=deps_resources(state_dir),
    )
