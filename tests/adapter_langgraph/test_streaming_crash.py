# redis-py ships partial annotations.
# pyright: reportUnknownMemberType=false
"""Streaming across processes (Redis) through a SIGKILL of the worker inside a tool.

The worker is a child process (this module: ``python -m tests.adapter_langgraph.test_streaming_crash``)
publishing on Redis; the test follows the session from its own process. The tool writes a
custom event, then the worker is SIGKILLed inside it; another worker runs the tool again
(a read repeats by its effect) and the turn ends as the plain run did.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from pydantic import SecretStr
from temporalio.service import RPCError

from sessionflow import (
    AgentEvent,
    AgentEventType,
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    RedisDeltaTransport,
    run_agent_worker,
)
from sessionflow.demo import ScriptedModelServer
from sessionflow.testing import STATE_DIR_ENV, AgentTestStack, FileGate, InvocationLog, wait_until
from sessionflow_langgraph import langgraph_session_flow
from tests.adapter_langgraph.conftest import turn_ended, unique
from tests.adapter_langgraph.flows import FAST
from tests.adapter_langgraph.test_streaming import (
    FIRST,
    SECOND,
    plain_run,
    query_tool,
    script,
    stored_messages,
    streaming_graph,
)
from tests.redis_server import running_redis

T = AgentEventType
WORKER = "tests.adapter_langgraph.test_streaming_crash"
SPEC_FILE = "streaming-flow.json"
TOOL_STEP = "turn-1/tool/c1"


def build_flow(state_dir: Path) -> AgentSessionFlow:
    """The streaming graph's flow, publishing live events on Redis, as the spec file says."""
    spec: dict[str, str] = json.loads((state_dir / SPEC_FILE).read_text())
    model = ChatOpenAI(model="gpt-test", base_url=spec["base_url"], api_key=SecretStr("k"), max_retries=0)
    tool = query_tool(InvocationLog(state_dir / "invocations.jsonl"), FileGate(state_dir, "query"))
    return langgraph_session_flow(
        flow_type=spec["flow_type"],
        graph=streaming_graph(model, [tool]),
        options=AgentSessionOptions(timings=FAST),
        delta_transport=RedisDeltaTransport(spec["redis_url"]),
    )


@pytest.fixture
def redis_url() -> Iterator[str]:
    with running_redis() as url:
        yield url


@dataclass
class Follower:
    """Follows a session as a client does: on an error, again from the last durable offset it
    saw. `events()` itself waits out a time with no worker (its queries refused), so the test
    expects no error at all."""

    sessions: AgentSessionClient
    session_id: str
    seen: list[AgentEvent] = field(default_factory=lambda: list[AgentEvent]())
    failures: int = 0

    async def run(self) -> None:
        offset = 0
        while True:
            try:
                async for event in self.sessions.events(self.session_id, after=offset):
                    self.seen.append(event)
                    offset = event.offset or offset
            except RPCError:
                self.failures += 1


def custom_of(seen: list[AgentEvent], step: str, attempt: int) -> list[Any]:
    return [
        e.data["data"]
        for e in seen
        if e.type is T.CUSTOM_EVENT and e.step_execution_id == step and e.attempt == attempt
    ]


def text_of(seen: list[AgentEvent], step: str) -> list[str]:
    return [str(e.data["text"]) for e in seen if e.type is T.TEXT_DELTA and e.step_execution_id == step]


async def test_custom_events_cross_processes_and_a_sigkill_inside_the_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path, redis_url: str
) -> None:
    plain_key, key = unique("lg-stream-plain"), unique("lg-stream-kill")
    script(model_server, plain_key)
    script(model_server, key)
    plain = await plain_run(model_server, plain_key, InvocationLog(tmp_path / "plain.jsonl"))
    (tmp_path / SPEC_FILE).write_text(
        json.dumps({"flow_type": key, "base_url": model_server.base_url(key), "redis_url": redis_url})
    )
    flow = build_flow(tmp_path)
    log = InvocationLog(tmp_path / "invocations.jsonl")
    async with AgentTestStack(tmp_path, [flow], WORKER, server_address=temporal_address) as stack:
        first = await stack.start_worker()
        sessions = stack.sessions()
        follower = Follower(sessions, key)
        seen = follower.seen
        following = asyncio.create_task(follower.run())
        try:
            await wait_until(
                "the follower to subscribe", lambda: flow.delta_transport.has_subscribers(key) or None
            )
            await sessions.start_session(key, "How many records?")
            await FileGate(tmp_path, "query").wait_until_reached()
            # The first attempt's progress crossed to this process before the worker dies.
            await wait_until("the first attempt's progress", lambda: custom_of(seen, TOOL_STEP, 1) or None)
            first.kill()
            # No worker answers its queries while the next one starts: the follow goes on.
            second = await stack.start_worker()
            assert flow.delta_transport.has_subscribers(key) and not following.done()
            snapshot = await turn_ended(sessions, key)
            await wait_until(
                "the last step's live events",
                lambda: len(text_of(seen, "turn-1/model-2")) == len(SECOND) or None,
            )
        finally:
            following.cancel()

    assert follower.failures == 0, "the follow broke while no worker served the session"
    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    assert stored_messages(snapshot) == plain.messages
    # The read tool ran again, in the second worker, with the same key: its effect says so.
    runs = log.entries("tool", "query_database")
    assert [(r["pid"], r["attempt"]) for r in runs] == [(first.pid, 1), (second.pid, 2)]
    # Each attempt's custom events, tagged with their attempt; the second's are the plain run's.
    assert custom_of(seen, TOOL_STEP, 1) == [plain.custom[1]]
    assert custom_of(seen, TOOL_STEP, 2) == plain.custom[1:3]
    restarted = [e for e in seen if e.type is T.ATTEMPT_RESTARTED]
    assert [(e.step_execution_id, e.attempt) for e in restarted] == [(TOOL_STEP, 2)]
    assert custom_of(seen, "turn-1/model-1", 1) + custom_of(seen, "turn-1/model-2", 1) == [
        plain.custom[0],
        plain.custom[3],
    ]
    assert (
        [text_of(seen, "turn-1/model-1"), text_of(seen, "turn-1/model-2")] == plain.texts == [FIRST, SECOND]
    )
    requests, plain_requests = model_server.requests(key), model_server.requests(plain_key)
    assert [r.body["messages"] for r in requests] == [r.body["messages"] for r in plain_requests]


if __name__ == "__main__":
    run_agent_worker([build_flow(Path(os.environ[STATE_DIR_ENV]))])
