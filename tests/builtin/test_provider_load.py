"""Model providers under load, on real sessions: the provider's `Retry-After` sets the model
step's next retry delay, and a worker's model call limit makes calls wait instead of fail.

The built-in runner speaks Chat Completions through httpx with no retries of its own, so
every 429 or 503 of the scripted server reaches the model step.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from sessionflow import (
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    AgentSnapshot,
    AgentStatus,
    connect,
    serve_agent_flows,
)
from sessionflow.builtin import ChatCompletionsRunner
from sessionflow.demo import ModelReply, ScriptedModelServer
from sessionflow.temporal import MODEL_CALL_LIMITS_ENV, ModelCallLimits, read_step_history
from sessionflow.temporal._payloads import RUN_MODEL
from sessionflow.testing import wait_for_agent_snapshot
from tests.harness import FAST


@pytest.fixture
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


@dataclass
class ModelStepAttempts:
    """What the history says of a session's first model step."""

    scheduled_at: datetime
    started_at: datetime
    attempt: int
    last_failure_type: str
    next_retry_delay: timedelta | None


async def first_model_step(client: Client, session_id: str) -> ModelStepAttempts:
    history = await client.get_workflow_handle(session_id).fetch_history()
    scheduled: dict[int, datetime] = {}
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            if event.activity_task_scheduled_event_attributes.activity_type.name == RUN_MODEL:
                scheduled[event.event_id] = event.event_time.ToDatetime(UTC)
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started = event.activity_task_started_event_attributes
            if started.scheduled_event_id not in scheduled:
                continue
            failure = started.last_failure
            info = failure.application_failure_info
            delay = info.next_retry_delay.ToTimedelta() if info.HasField("next_retry_delay") else None
            return ModelStepAttempts(
                scheduled_at=scheduled[started.scheduled_event_id],
                started_at=event.event_time.ToDatetime(UTC),
                attempt=started.attempt,
                last_failure_type=info.type,
                next_retry_delay=delay,
            )
    raise AssertionError(f"no model step started in {session_id}")


async def run_turns(
    temporal_address: str,
    flow: AgentSessionFlow,
    session_ids: Sequence[str],
    *,
    limits: ModelCallLimits | None = None,
) -> tuple[Client, list[AgentSnapshot]]:
    """Start one session per id at once, with one worker, and wait for every first turn."""
    client = await connect(temporal_address)
    sessions = AgentSessionClient(client, flow)
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop, model_call_limits=limits))
    try:
        await asyncio.gather(*(sessions.start_session(s, f"hello from {s}") for s in session_ids))

        async def ended(session_id: str) -> AgentSnapshot:
            return await wait_for_agent_snapshot(
                sessions,
                session_id,
                lambda s: (
                    s
                    if s.state
                    and s.state.turn_count == 1
                    and s.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
                    else None
                ),
                description=f"the turn of {session_id} to end",
                timeout=120.0,
            )

        return client, list(await asyncio.gather(*(ended(s) for s in session_ids)))
    finally:
        stop.set()
        await worker


def flow_for(server: ScriptedModelServer, key: str, model: str = "m") -> AgentSessionFlow:
    runner = ChatCompletionsRunner(model=model, base_url=server.base_url(key), api_key="k")
    return AgentSessionFlow(runner, flow_type=f"load-{key}", options=AgentSessionOptions(timings=FAST))


async def test_retry_after_seconds_sets_the_next_retry_delay(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = "ra-429-seconds"
    model_server.script(
        key, [ModelReply.fail("http_429", headers={"retry-after": "3"}), ModelReply.say("recovered")]
    )
    client, [snapshot] = await run_turns(temporal_address, flow_for(model_server, key), [key])
    assert snapshot.messages[-1].message.text == "recovered"
    # The model got the same request twice (the first answered 429), and nothing more.
    first, second = model_server.requests(key)
    assert first.body == second.body and first.last_user_text() == f"hello from {key}"
    assert model_server.remaining(key) == 0
    step = await first_model_step(client, key)
    assert step.attempt == 2
    assert step.last_failure_type == "ModelHTTPError"
    assert step.next_retry_delay == timedelta(seconds=3)
    # Attempt 1 failed after it was scheduled, and attempt 2 started 3 s after that failure
    # at the earliest: so at least 3 s after scheduling. FAST's fixed backoff is 0.1 s.
    assert step.started_at - step.scheduled_at >= timedelta(seconds=3)
    [model_step] = [s for s in await read_step_history(client, key) if s.step_type == RUN_MODEL]
    assert (model_step.final_attempt, model_step.outcome) == (2, "completed")


async def test_retry_after_http_date_on_a_503(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = "ra-503-date"
    # Far enough ahead that a slow start still reads a date in the future.
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=12), usegmt=True)
    model_server.script(
        key, [ModelReply.fail("http_503", headers={"Retry-After": when}), ModelReply.say("up")]
    )
    client, [snapshot] = await run_turns(temporal_address, flow_for(model_server, key), [key])
    assert snapshot.messages[-1].message.text == "up"
    assert len(model_server.requests(key)) == 2
    step = await first_model_step(client, key)
    assert step.attempt == 2 and step.last_failure_type == "ModelHTTPError"
    assert step.next_retry_delay is not None
    assert timedelta(0) < step.next_retry_delay <= timedelta(seconds=12)
    assert step.started_at - step.scheduled_at >= step.next_retry_delay


async def test_a_429_without_retry_after_keeps_the_normal_backoff(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = "ra-429-bare"
    model_server.script(key, [ModelReply.fail("http_429", headers={}), ModelReply.say("fine")])
    client, [snapshot] = await run_turns(temporal_address, flow_for(model_server, key), [key])
    assert snapshot.messages[-1].message.text == "fine"
    assert len(model_server.requests(key)) == 2
    step = await first_model_step(client, key)
    assert step.attempt == 2 and step.last_failure_type == "ModelHTTPError"
    assert step.next_retry_delay is None  # the retry policy's own backoff decided


async def test_hostile_retry_after_keeps_the_normal_backoff(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = "ra-429-hostile"
    model_server.script(
        key,
        [
            ModelReply.fail("http_429", headers={"retry-after": "-5"}),
            ModelReply.fail("http_503", headers={"retry-after": "NaN", "retry-after-ms": "soon"}),
            ModelReply.say("fine"),
        ],
    )
    client, [snapshot] = await run_turns(temporal_address, flow_for(model_server, key), [key])
    assert snapshot.messages[-1].message.text == "fine"
    step = await first_model_step(client, key)
    assert step.attempt == 3 and step.next_retry_delay is None


async def test_a_model_call_limit_makes_calls_wait_without_failing(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = "limit-2"
    sessions = [f"{key}-s{i}" for i in range(6)]
    # Each reply takes 2 s: the calls beyond the limit wait longer than FAST's 2 s heartbeat
    # timeout, so an attempt that did not heartbeat while waiting would time out and retry.
    model_server.script(key, [ModelReply.say("done", delay_seconds=2.0) for _ in sessions])
    flow = flow_for(model_server, key, model="openai:gpt-limited")
    client, snapshots = await run_turns(
        temporal_address, flow, sessions, limits=ModelCallLimits({"gpt-limited": 2})
    )
    assert [s.messages[-1].message.text for s in snapshots] == ["done"] * 6
    assert len(model_server.requests(key)) == 6
    # Never more than two at once; and two did run at once (six sessions started together).
    assert model_server.peak_in_flight(key) == 2
    for session_id in sessions:
        steps = await read_step_history(client, session_id)
        model_steps = [s for s in steps if s.step_type == RUN_MODEL]
        assert [(s.final_attempt, s.outcome) for s in model_steps] == [(1, "completed")], session_id


async def test_without_a_limit_the_same_load_runs_at_once(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    # The control for the test above: the scripted server does see more than two at once.
    key = "limit-none"
    sessions = [f"{key}-s{i}" for i in range(6)]
    model_server.script(key, [ModelReply.say("done", delay_seconds=2.0) for _ in sessions])
    flow = flow_for(model_server, key, model="openai:gpt-limited")
    await run_turns(temporal_address, flow, sessions, limits=ModelCallLimits({"another-model": 1}))
    assert model_server.peak_in_flight(key) > 2


async def test_the_environment_gives_a_worker_its_limits(
    temporal_address: str, model_server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the `sessionflow` command's worker gets: it passes no limits in code.
    monkeypatch.setenv(MODEL_CALL_LIMITS_ENV, "openai=1")
    key = "limit-env"
    sessions = [f"{key}-s{i}" for i in range(3)]
    model_server.script(key, [ModelReply.say("done", delay_seconds=1.0) for _ in sessions])
    await run_turns(temporal_address, flow_for(model_server, key, model="openai:gpt-limited"), sessions)
    assert len(model_server.requests(key)) == 3
    assert model_server.peak_in_flight(key) == 1
