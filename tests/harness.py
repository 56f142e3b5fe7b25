"""Fixtures for the integration tests: a scripted flow per test with short timeouts.

The fixtures (`harness_factory`, `harness`) are registered for every test by `tests/conftest.py`."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sessionflow import AgentSessionClient, AgentSessionFlow, SessionTimings, ToolEffect, ToolPolicy
from sessionflow.temporal import PayloadStore
from sessionflow.testing import CRASH_TIMINGS, AgentTestStack, InvocationLog, save_scripted_flow, write_script

FAST = CRASH_TIMINGS


@dataclass
class Harness:
    """One test's flow, stack, sessions client and invocation log."""

    stack: AgentTestStack
    flow: AgentSessionFlow
    sessions: AgentSessionClient
    log: InvocationLog
    state_dir: Path

    def script(
        self,
        session_id: str,
        turns: Sequence[Sequence[Mapping[str, object]]],
        tools: Mapping[str, Mapping[str, object]] | None = None,
        *,
        log_seen: str = "text",
    ) -> None:
        write_script(self.state_dir, session_id, turns, tools, log_seen=log_seen)

    def seen(self, session_id: str, call: int) -> list[str]:
        """What the model was sent on its `call`-th request in this session (1-based, any attempt)."""
        entries = self.log.entries("model", session=session_id)
        return entries[call - 1]["seen"]


HarnessFactory = Callable[..., Any]


@pytest.fixture
async def harness_factory(
    temporal_address: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[HarnessFactory]:
    stacks: list[AgentTestStack] = []

    async def make(
        *,
        tool_policies: dict[str, ToolPolicy] | None = None,
        timings: SessionTimings = FAST,
        default_tool_effect: ToolEffect = ToolEffect.UNCLASSIFIED,
        continue_as_new_after_events: int = 10_000,
        workers: int = 1,
        redis_url: str | None = None,
        payloads: PayloadStore | None = None,
        max_continues_per_turn: int = 8,
        max_tool_calls_per_turn: int | None = None,
    ) -> Harness:
        digest = hashlib.sha256(f"{request.node.nodeid}/{len(stacks)}".encode()).hexdigest()[:12]
        state_dir = tmp_path / f"state-{len(stacks)}"
        flow = save_scripted_flow(
            state_dir,
            f"test-{digest}",
            tool_policies=tool_policies,
            timings=timings,
            default_tool_effect=default_tool_effect,
            continue_as_new_after_events=continue_as_new_after_events,
            redis_url=redis_url,
            max_continues_per_turn=max_continues_per_turn,
            max_tool_calls_per_turn=max_tool_calls_per_turn,
        )
        stack = AgentTestStack(state_dir, [flow], server_address=temporal_address, payloads=payloads)
        await stack.__aenter__()
        stacks.append(stack)
        for _ in range(workers):
            await stack.start_worker()
        return Harness(
            stack, flow, stack.sessions(flow), InvocationLog(state_dir / "invocations.jsonl"), state_dir
        )

    yield make
    for stack in stacks:
        await stack.__aexit__(None, None, None)


@pytest.fixture
async def harness(harness_factory: HarnessFactory) -> Harness:
    return await harness_factory()
