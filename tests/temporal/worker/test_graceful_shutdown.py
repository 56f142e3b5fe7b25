"""Real SIGTERMs of worker processes: the grace period, and what happens to the steps they run."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.temporal import shutdown_grace
from sessionflow.temporal.worker._shutdown import DEFAULT_SHUTDOWN_GRACE
from sessionflow.testing import FileGate, WorkerProcess
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after

GRACE_ENV = "SESSIONFLOW_SHUTDOWN_GRACE"
PAY = {"pay": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)}


def call(tool_call_id: str, name: str, **arguments: object) -> dict[str, object]:
    return {"id": tool_call_id, "name": name, "arguments": arguments}


async def workers_with_grace(harness_factory: HarnessFactory, grace: float, **options: object) -> Harness:
    harness: Harness = await harness_factory(workers=0, **options)
    harness.stack.worker_env[GRACE_ENV] = str(grace)
    await harness.stack.start_worker()
    return harness


async def sigterm_and_replace(harness: Harness) -> WorkerProcess:
    """SIGTERM the newest worker (it shuts down on its own) and start a second one beside it."""
    first = harness.stack.workers[-1]
    first.sigterm()
    await harness.stack.start_worker()
    return first


async def stopped(worker: WorkerProcess) -> int:
    """The exit code of a worker that shuts down on its own (a hang guard, not a timing)."""
    return await asyncio.wait_for(asyncio.to_thread(worker.process.wait), 120)


def identity_pid(identity: str | None) -> int:
    assert identity is not None
    return int(identity.split("@", 1)[0])


async def test_sigterm_during_slow_model_call_retries_it_on_another_worker(
    harness_factory: HarnessFactory,
) -> None:
    harness = await workers_with_grace(harness_factory, 1)
    harness.script("t-model", [[{"gate": "slow-model", "gate_attempts": 1, "text": "final"}]])
    await harness.sessions.start_session("t-model", "go")
    await FileGate(harness.state_dir, "slow-model").wait_until_reached()
    first = await sigterm_and_replace(harness)
    second = harness.stack.workers[-1]
    snapshot = await idle_after(harness, "t-model", 1)
    assert snapshot.messages[-1].message.text == "final"
    assert await stopped(first) == 0
    assert "sessionflow worker stopped" in first.log()
    # The model call was cancelled in the first worker once the grace ran out, and ran again
    # in the second one.
    models = harness.log.entries("model", session="t-model")
    assert [(m["attempt"], m["pid"]) for m in models] == [(1, first.pid), (2, second.pid)]
    assert [(c["attempt"], c["pid"]) for c in harness.log.entries("cancelled", "model")] == [(1, first.pid)]
    [step] = await harness.stack.read_step_history("t-model")
    assert (step.step_type, step.final_attempt, step.outcome) == ("sessionflow.RunModel", 2, "completed")
    assert identity_pid(step.worker) == second.pid
    assert step.previous_failure is not None
    assert f"worker {first.pid}@" in step.previous_failure and "shut down" in step.previous_failure


async def test_sigterm_during_write_that_finishes_within_the_grace(harness_factory: HarnessFactory) -> None:
    harness = await workers_with_grace(harness_factory, 120, tool_policies=PAY)
    harness.script(
        "t-write",
        [[{"tool_calls": [call("c1", "pay", amount=10)]}, {"text": "paid"}]],
        {"pay": {"gate": "pay", "gate_attempts": 99, "output": "payment done"}},
    )
    await harness.sessions.start_session("t-write", "pay 10")
    gate = FileGate(harness.state_dir, "pay")
    await gate.wait_until_reached()
    first = await sigterm_and_replace(harness)
    second = harness.stack.workers[-1]
    gate.release()  # the write finishes while its worker shuts down
    snapshot = await idle_after(harness, "t-write", 1)
    assert await stopped(first) == 0
    [run] = harness.log.entries("tool", "pay")
    assert run["pid"] == first.pid
    assert harness.log.entries("cancelled", "pay") == []
    assert harness.seen("t-write", 2)[-1] == "payment done"
    assert snapshot.messages[-1].message.text == "paid"
    # The first worker stopped polling: the turn's next model call ran on the second.
    assert [m["pid"] for m in harness.log.entries("model", session="t-write")] == [first.pid, second.pid]
    steps = await harness.stack.read_step_history("t-write")
    assert [(s.step_type, s.final_attempt, s.outcome) for s in steps] == [
        ("sessionflow.RunModel", 1, "completed"),
        ("sessionflow.CallSingleAttemptTool", 1, "completed"),
        ("sessionflow.RunModel", 1, "completed"),
    ]
    assert identity_pid(steps[1].worker) == first.pid


async def test_sigterm_during_write_longer_than_the_grace_is_outcome_unknown(
    harness_factory: HarnessFactory,
) -> None:
    harness = await workers_with_grace(harness_factory, 1, tool_policies=PAY)
    harness.script(
        "t-long",
        [[{"tool_calls": [call("c1", "pay", amount=10)]}, {"text": "checking"}]],
        {"pay": {"gate": "pay-long", "gate_attempts": 99, "output": "payment done"}},
    )
    await harness.sessions.start_session("t-long", "pay 10")
    await FileGate(harness.state_dir, "pay-long").wait_until_reached()
    first = await sigterm_and_replace(harness)
    snapshot = await idle_after(harness, "t-long", 1)
    assert await stopped(first) == 0
    # Cut short after the grace, and never run again.
    assert [r["pid"] for r in harness.log.entries("tool", "pay")] == [first.pid]
    assert [c["pid"] for c in harness.log.entries("cancelled", "pay")] == [first.pid]
    told = harness.seen("t-long", 2)[-1]
    assert told.startswith("The outcome of this tool call is unknown")
    assert "shut down" in told
    steps = await harness.stack.read_step_history("t-long")
    assert (steps[1].step_type, steps[1].final_attempt, steps[1].outcome) == (
        "sessionflow.CallSingleAttemptTool",
        1,
        "failed",
    )
    assert steps[1].failure is not None and f"worker {first.pid}@" in steps[1].failure
    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    assert snapshot.messages[-1].message.text == "checking"


def test_grace_period_from_argument_environment_or_default() -> None:
    assert shutdown_grace(None, {}) == DEFAULT_SHUTDOWN_GRACE == timedelta(seconds=20)
    assert shutdown_grace(None, {GRACE_ENV: " 7.5 "}) == timedelta(seconds=7.5)
    assert shutdown_grace(3, {GRACE_ENV: "7.5"}) == timedelta(seconds=3)
    assert shutdown_grace(timedelta(minutes=1), {}) == timedelta(seconds=60)
    assert shutdown_grace(0, {}) == timedelta(0)
    with pytest.raises(ValueError, match="SESSIONFLOW_SHUTDOWN_GRACE='soon' is not a number of seconds"):
        shutdown_grace(None, {GRACE_ENV: "soon"})
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="must be 0 or more seconds"):
            shutdown_grace(bad, {})
