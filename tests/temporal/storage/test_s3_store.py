"""Sessions on the S3 payload store, against a real S3 wire protocol (moto's server mode).

The endpoint the sessions use is a proxy in front of moto (see `tests.temporal.storage.s3_server`):
stopping the proxy takes the endpoint down while the objects survive, as in a real S3
outage, and restarting it brings the same URL back.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import timedelta

import pytest

from sessionflow import AgentMessage, MessageRole
from sessionflow.session.bodies import cap_text
from sessionflow.temporal import PayloadStore
from sessionflow.testing import FileGate, read_script, wait_until
from tests.harness import FAST, Harness, HarnessFactory
from tests.harness_helpers import idle_after
from tests.temporal.payload_history import payload_sizes, run_histories, started_steps
from tests.temporal.storage.s3_server import (
    MotoServer,
    S3Proxy,
    create_bucket,
    list_objects,
    running_moto,
)

MIB = 1024 * 1024
BIG = 3 * MIB
"""Bytes one read returns: above Temporal's 2 MiB payload limit, so it must go by reference."""
MODEL_CAP = MIB
"""What the model sees of a tool output (the session default `max_tool_output_bytes`)."""
HISTORY_PAYLOAD_LIMIT = 128 * 1024
PREFIX = "some/prefix"


S3_TIMINGS = dataclasses.replace(
    FAST,
    # A store runs after the tool or model call, outside its heartbeat loop, and a store that
    # meets a down endpoint takes botocore's retries (about 3 s) to fail: with FAST's 2 s the
    # attempt would end as a heartbeat timeout instead of with the store's own error.
    model_heartbeat_timeout=timedelta(seconds=10),
    tool_heartbeat_timeout=timedelta(seconds=10),
)


@dataclass
class S3:
    """A fresh bucket, reached through a proxy the test can stop."""

    proxy: S3Proxy
    moto: MotoServer
    bucket: str

    def store(self, threshold: int = 16 * 1024) -> PayloadStore:
        return PayloadStore(
            location=f"s3://{self.bucket}/{PREFIX}", endpoint=self.proxy.url, threshold=threshold
        )

    async def objects(self) -> dict[str, int]:
        # Straight to moto: the check must not depend on the proxy being up.
        return await list_objects(self.moto.url, self.bucket)


@pytest.fixture(scope="module")
def moto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MotoServer]:
    with running_moto(tmp_path_factory.mktemp("moto") / "moto.log") as server:
        yield server


@pytest.fixture
async def s3(moto: MotoServer) -> AsyncIterator[S3]:
    proxy = S3Proxy(moto.port)
    await proxy.start()
    bucket = f"sessionflow-{uuid.uuid4().hex[:12]}"
    await create_bucket(moto.url, bucket)
    try:
        yield S3(proxy, moto, bucket)
    finally:
        await proxy.stop()


def call(tool_call_id: str, name: str, **arguments: object) -> dict[str, object]:
    return {"id": tool_call_id, "name": name, "arguments": arguments}


def read_turn(n: int, tool: str = "read_file") -> list[dict[str, object]]:
    return [{"tool_calls": [call(f"c{n}", tool, n=n)]}, {"text": f"answer {n}"}]


def script_big_reads(harness: Harness, session_id: str, turns: int, *, gated_turn: int | None = None) -> None:
    """`turns` turns of one 3 MB read each; the read of `gated_turn` waits at gate "read" on attempt 1.

    A gate belongs to a tool name, so the gated read has a name of its own.
    """
    read = {"effect": "read", "output_bytes": BIG, "unique_output": True}
    harness.script(
        session_id,
        [read_turn(n, "read_gated" if n == gated_turn else "read_file") for n in range(1, turns + 1)],
        {"read_file": read, "read_gated": {**read, "gate": "read"}},
    )
    # The model log keeps sizes and digests, not the megabytes the model was sent.
    script = read_script(harness.state_dir, session_id)
    path = harness.state_dir / f"script-{session_id}.json"
    path.write_text(json.dumps({**script, "log_seen": "sizes"}))


def read_output(session_id: str, n: int) -> str:
    """What the scripted read of turn n returns (`unique_output`: seeded by its idempotency key)."""
    seed = f"{session_id}/turn-{n}/c{n}|"
    return (seed * (BIG // len(seed) + 1))[:BIG]


def as_seen(text: str) -> str:
    """A text as the scripted model logs it with ``log_seen: sizes``."""
    return f"{len(text)}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


async def all_messages(harness: Harness, session_id: str) -> list[AgentMessage]:
    messages: list[AgentMessage] = []
    after = 0
    while True:
        page = await harness.sessions.list_agent_messages(session_id, after=after, limit=200)
        messages += page.messages
        if page.next_after is None:
            return messages
        after = page.next_after


async def check_nothing_lost(harness: Harness, session_id: str, turns: int) -> list[AgentMessage]:
    """Every turn's four messages, in order, and each read's output whole behind its tool message."""
    messages = await all_messages(harness, session_id)
    assert [m.sequence for m in messages] == list(range(1, 4 * turns + 1))
    tools = [m for m in messages if m.message.role is MessageRole.TOOL]
    assert len(tools) == turns
    for n, listed in enumerate(tools, start=1):
        assert listed.message.is_stored, "a 1 MiB tool message should be kept by reference"
        whole = await harness.sessions.get_message(session_id, listed.sequence)
        # The model's view of the output: its first MiB and the note, read back from S3.
        assert whole.message.text == cap_text(read_output(session_id, n), MODEL_CAP)
    assert [m.message.text for m in messages if m.message.role is MessageRole.ASSISTANT][1::2] == [
        f"answer {n}" for n in range(1, turns + 1)
    ]
    return messages


def session_objects(objects: dict[str, int], session_id: str) -> dict[str, int]:
    # The SDK's driver keys an object by its workflow: .../wi/<session id>/...
    return {key: size for key, size in objects.items() if f"/wi/{session_id}/" in key}


async def test_large_session_lives_on_s3(harness_factory: HarnessFactory, s3: S3) -> None:
    turns = 4
    harness: Harness = await harness_factory(
        payloads=s3.store(), timings=S3_TIMINGS, continue_as_new_after_events=20
    )
    session_id = "s3-large"
    script_big_reads(harness, session_id, turns)
    await harness.sessions.start_session(session_id, "read 1")
    runs: set[str] = set()
    for n in range(1, turns + 1):
        if n > 1:
            assert await harness.sessions.send_user_message(session_id, f"read {n}")
        await idle_after(harness, session_id, n, timeout=120)
        runs.add((await harness.stack.client.get_workflow_handle(session_id).describe()).run_id)
    assert len(runs) > 1, "the session should have continued as new"

    await check_nothing_lost(harness, session_id, turns)
    # The model read each whole output back from S3 (and saw its capped head).
    model_calls = harness.log.entries("model", session=session_id)
    assert [m["seen"][-1] for m in model_calls[1::2]] == [
        as_seen(cap_text(read_output(session_id, n), MODEL_CAP)) for n in range(1, turns + 1)
    ]

    assert s3.proxy.connections > 0, "the workers and the client should reach S3 through the proxy"
    objects = await s3.objects()
    assert objects and all(key.startswith(f"{PREFIX}/v0/") for key in objects), sorted(objects)[:5]
    mine = session_objects(objects, session_id)
    # Each read's 3 MB output is stored once, whole.
    assert sum(1 for size in mine.values() if size >= BIG) >= turns
    print(f"S3 objects: {len(objects)}, {sum(objects.values()):,} bytes; runs: {len(runs)}")

    histories = await run_histories(harness.stack.client, session_id)
    assert len(histories) >= len(runs)
    largest = max(size for history in histories for event in history.events for size in payload_sizes(event))
    print(f"largest payload in {len(histories)} histories: {largest:,} bytes")
    assert largest <= HISTORY_PAYLOAD_LIMIT


async def test_worker_sigkill_mid_turn_on_s3(harness_factory: HarnessFactory, s3: S3) -> None:
    harness: Harness = await harness_factory(payloads=s3.store(), timings=S3_TIMINGS)
    session_id = "s3-kill"
    script_big_reads(harness, session_id, 2, gated_turn=2)
    await harness.sessions.start_session(session_id, "read 1")
    await idle_after(harness, session_id, 1, timeout=120)
    # Turn 2's read is running when its worker dies; turn 1 lives only in S3 and the history.
    assert await harness.sessions.send_user_message(session_id, "read 2")
    await FileGate(harness.state_dir, "read").wait_until_reached(timeout=60)
    harness.stack.workers[-1].kill()
    await harness.stack.start_worker()
    await idle_after(harness, session_id, 2, timeout=120)

    # A read runs again after a crash (the effects table): once in turn 1, twice in turn 2.
    reads = harness.log.entries("tool", session=session_id)
    assert [(r["turn"], r["attempt"]) for r in reads] == [("turn-1", 1), ("turn-2", 1), ("turn-2", 2)]
    await check_nothing_lost(harness, session_id, 2)
    assert harness.log.entries("model", session=session_id)[-1]["seen"][-1] == as_seen(
        cap_text(read_output(session_id, 2), MODEL_CAP)
    )
    steps = await harness.stack.read_step_history(session_id)
    # Turn 1's read in one attempt, turn 2's in the one after the kill.
    assert [
        (s.step_execution_id, s.final_attempt) for s in steps if s.step_type == "sessionflow.CallTool"
    ] == [
        ("turn-1/tool/c1", 1),
        ("turn-2/tool/c2", 2),
    ]


OUTAGE_TIMINGS = dataclasses.replace(
    S3_TIMINGS,
    # Enough attempts and time that a step outlives the outage: it retries until S3 is back.
    tool_max_attempts=10,
    tool_schedule_to_close=timedelta(seconds=180),
    model_max_attempts=10,
    model_schedule_to_close=timedelta(seconds=180),
    retry_initial_interval=timedelta(seconds=1),
)


async def outage_at_gate(harness: Harness, s3: S3, session_id: str, gate_name: str) -> str:
    """Take S3 down while a step waits at its gate, let the step go on, and bring S3 back
    once the step has failed and been retried. Returns the failure the server kept."""
    gate = FileGate(harness.state_dir, gate_name)
    await gate.wait_until_reached(timeout=60)
    await s3.proxy.stop()
    gate.release()
    handle = harness.stack.client.get_workflow_handle(session_id)

    async def failed_attempt() -> str | None:
        description = await handle.describe()
        for pending in description.raw_description.pending_activities:
            if pending.attempt >= 2 and pending.last_failure.message:
                return pending.last_failure.message
        return None

    failure = await wait_until("the step to fail on the S3 outage", failed_attempt, timeout=60)
    print(f"failure while S3 was down: {failure}")
    await s3.proxy.start()
    return failure


async def last_failure_in_history(
    harness: Harness, session_id: str, step_type: str, attempt: int
) -> str | None:
    """The failure the history keeps on the start of the step's final attempt."""
    (history,) = await run_histories(harness.stack.client, session_id)
    (started,) = [s for s in started_steps(history) if s.step_type == step_type and s.attempt > 1]
    assert started.attempt == attempt
    # The server keeps a retryable failure whole only up to 4 KB (its default limit).
    print(f"{step_type} failure kept in the history: {started.last_failure_bytes:,} bytes")
    return started.last_failure


async def test_s3_outage_while_a_tool_output_is_stored(harness_factory: HarnessFactory, s3: S3) -> None:
    harness: Harness = await harness_factory(payloads=s3.store(), timings=OUTAGE_TIMINGS)
    session_id = "s3-outage-tool"
    script_big_reads(harness, session_id, 1, gated_turn=1)
    await harness.sessions.start_session(session_id, "read 1")
    # The read has run; the endpoint goes down just before its output is stored.
    failure = await outage_at_gate(harness, s3, session_id, "read")
    assert "payload store (sessionflow.s3) cannot store a body" in failure, failure
    assert "S3StorageDriver store failed" in failure and f"s3://{s3.bucket}/{PREFIX}" in failure, failure
    await idle_after(harness, session_id, 1, timeout=120)

    steps = await harness.stack.read_step_history(session_id)
    (tool_step,) = [s for s in steps if s.step_type == "sessionflow.CallTool"]
    assert tool_step.outcome == "completed" and tool_step.final_attempt >= 2
    kept = await last_failure_in_history(harness, session_id, "sessionflow.CallTool", tool_step.final_attempt)
    assert kept is not None and "S3StorageDriver store failed" in kept
    # Each attempt is a real run of the read (a read may run again); the last one's output is kept.
    reads = harness.log.entries("tool", session=session_id)
    assert [r["attempt"] for r in reads] == list(range(1, tool_step.final_attempt + 1))
    await check_nothing_lost(harness, session_id, 1)
    print(f"tool step attempts: {tool_step.final_attempt}")


async def test_s3_outage_while_a_model_answer_is_stored(harness_factory: HarnessFactory, s3: S3) -> None:
    harness: Harness = await harness_factory(payloads=s3.store(), timings=OUTAGE_TIMINGS)
    session_id = "s3-outage-model"
    # About 250 KB: over the 8 KiB inline limit, so the answer is stored by reference.
    answer = "".join(f"line {i} of a long answer\n" for i in range(10_000))
    harness.script(session_id, [[{"gate": "answer", "text": answer}]])
    await harness.sessions.start_session(session_id, "write a lot")
    failure = await outage_at_gate(harness, s3, session_id, "answer")
    assert "payload store (sessionflow.s3) cannot store a body" in failure, failure
    assert f"s3://{s3.bucket}/{PREFIX}" in failure, failure
    await idle_after(harness, session_id, 1, timeout=120)

    (model_step,) = await harness.stack.read_step_history(session_id)
    assert (model_step.step_type, model_step.outcome) == ("sessionflow.RunModel", "completed")
    assert model_step.final_attempt >= 2
    kept = await last_failure_in_history(
        harness, session_id, "sessionflow.RunModel", model_step.final_attempt
    )
    assert kept is not None and "S3StorageDriver store failed" in kept
    calls = harness.log.entries("model", session=session_id)
    assert [c["attempt"] for c in calls] == list(range(1, model_step.final_attempt + 1))
    user, stored = await all_messages(harness, session_id)
    assert user.message.text == "write a lot"
    assert stored.message.is_stored and stored.message.text != answer
    assert (await harness.sessions.get_message(session_id, stored.sequence)).message.text == answer
    print(f"model step attempts: {model_step.final_attempt}")
