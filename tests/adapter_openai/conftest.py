"""Fixtures: a scripted model server and one OpenAI Agents flow per test, served in-process
or by worker child processes a test can SIGKILL."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from sessionflow import (
    AgentSessionClient,
    AgentSessionFlow,
    AgentSnapshot,
    AgentStatus,
    connect,
    serve_agent_flows,
)
from sessionflow.demo import ModelReply, RecordedRequest, ScriptedModelServer
from sessionflow.temporal import StepHistoryEntry, read_step_history
from sessionflow.testing import AgentTestStack, InvocationLog, wait_for_agent_snapshot
from tests.adapter_openai.scenarios import Api, Scenario, save_flow


@dataclass
class Harness:
    """One test's flow, its sessions client, the model conversation and the tool log."""

    scenario: Scenario
    flow: AgentSessionFlow
    sessions: AgentSessionClient
    server: ScriptedModelServer
    log: InvocationLog
    state_dir: Path
    stack: AgentTestStack | None

    @property
    def session_id(self) -> str:
        return self.scenario.key

    def script(self, replies: Sequence[ModelReply], suffix: str = "") -> None:
        self.server.script(self.scenario.key + suffix, replies)

    def requests(self, suffix: str = "") -> list[RecordedRequest]:
        return self.server.requests(self.scenario.key + suffix)

    async def start(self, text: str) -> None:
        await self.sessions.start_session(self.session_id, text)

    async def steps(self) -> list[StepHistoryEntry]:
        return await read_step_history(self.sessions.client, self.session_id)

    async def idle_after(self, turns: int, timeout: float = 60.0) -> AgentSnapshot:
        def done(s: AgentSnapshot) -> AgentSnapshot | None:
            state = s.state
            if state is None or state.turn_count < turns:
                return None
            return s if state.status is AgentStatus.WAITING_FOR_USER_MESSAGE else None

        return await wait_for_agent_snapshot(
            self.sessions, self.session_id, done, description=f"turn {turns} to end", timeout=timeout
        )


HarnessFactory = Callable[..., Awaitable[Harness]]


@pytest.fixture
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


@pytest.fixture
async def harness_factory(
    temporal_address: str, tmp_path: Path, request: pytest.FixtureRequest, model_server: ScriptedModelServer
) -> AsyncIterator[HarnessFactory]:
    cleanups: list[Callable[[], Awaitable[None]]] = []

    async def make(
        kind: str, *, api: Api = "responses", gates: Sequence[str] = (), processes: bool = False
    ) -> Harness:
        digest = hashlib.sha256(f"{request.node.nodeid}/{len(cleanups)}".encode()).hexdigest()[:12]
        state_dir = tmp_path / f"state-{len(cleanups)}"
        scenario = Scenario(
            kind=kind,
            flow_type=f"oa-{digest}",
            model_url=model_server.url,
            key=f"oa-{digest}",
            api=api,
            gates=list(gates),
        )
        flow = save_flow(state_dir, scenario)
        log = InvocationLog(state_dir / "invocations.jsonl")
        if processes:
            stack = AgentTestStack(
                state_dir,
                [flow],
                worker_module="tests.adapter_openai.worker",
                server_address=temporal_address,
            )
            await stack.__aenter__()
            cleanups.append(lambda: stack.__aexit__(None, None, None))
            await stack.start_worker()
            sessions = stack.sessions(flow)
            return Harness(scenario, flow, sessions, model_server, log, state_dir, stack)
        client = await connect(temporal_address)
        stop = asyncio.Event()
        worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))

        async def shutdown() -> None:
            stop.set()
            await worker

        cleanups.append(shutdown)
        return Harness(scenario, flow, AgentSessionClient(client, flow), model_server, log, state_dir, None)

    yield make
    for cleanup in reversed(cleanups):
        await cleanup()
