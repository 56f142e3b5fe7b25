"""Real SIGKILLs of the worker process at exact moments, and what the session does after."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import UpdateWorkflowExecutionLifecycleStage
from temporalio.api.update.v1 import UpdateRef, WaitPolicy
from temporalio.api.workflowservice.v1 import PollWorkflowExecutionUpdateRequest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.service import RPCError, RPCStatusCode

from sessionflow import AgentToolCallStatus, ToolEffect, ToolPolicy
from sessionflow.temporal._payloads import RESOLVE_INTERRUPT, ResolveInterruptRequest
from sessionflow.testing import FileGate, wait_until
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after, kill_at_gate, pending_interrupt


def call(tool_call_id: str, name: str, **arguments: object) -> dict[str, object]:
    return {"id": tool_call_id, "name": name, "arguments": arguments}


async def test_sigkill_during_read_runs_it_again(harness: Harness) -> None:
    harness.script(
        "k-read",
        [[{"tool_calls": [call("c1", "lookup")]}, {"text": "done"}]],
        {"lookup": {"effect": "read", "gate": "read", "output": "value"}},
    )
    await harness.sessions.start_session("k-read", "go")
    await kill_at_gate(harness, "read")
    await idle_after(harness, "k-read", 1)
    assert [e["attempt"] for e in harness.log.entries("tool", "lookup")] == [1, 2]
    assert harness.seen("k-read", 2)[-1] == "value"
    steps = await harness.stack.read_step_history("k-read")
    assert (steps[1].step_type, steps[1].final_attempt) == ("sessionflow.CallTool", 2)


async def test_sigkill_during_idempotent_write_repeats_it_with_the_same_key(harness: Harness) -> None:
    harness.script(
        "k-iw",
        [[{"tool_calls": [call("c1", "upsert", id=3)]}, {"text": "done"}]],
        {"upsert": {"effect": "idempotent_write", "gate": "upsert", "output": "upserted"}},
    )
    await harness.sessions.start_session("k-iw", "go")
    await kill_at_gate(harness, "upsert")
    await idle_after(harness, "k-iw", 1)
    runs = harness.log.entries("tool", "upsert")
    assert [r["attempt"] for r in runs] == [1, 2]
    assert {r["idempotency_key"] for r in runs} == {"k-iw/turn-1/c1"}
    assert harness.seen("k-iw", 2)[-1] == "upserted"


async def test_sigkill_during_non_idempotent_write_never_runs_it_twice(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory(
        tool_policies={"pay": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)}
    )
    harness.script(
        "k-niw",
        [[{"tool_calls": [call("c1", "pay", amount=10)]}, {"text": "checking"}]],
        {"pay": {"gate": "pay", "gate_attempts": 99}},
    )
    await harness.sessions.start_session("k-niw", "pay 10")
    await kill_at_gate(harness, "pay")
    snapshot = await idle_after(harness, "k-niw", 1)
    assert harness.log.count("tool", "pay") == 1
    assert harness.seen("k-niw", 2)[-1].startswith("The outcome of this tool call is unknown")
    assert "timed out" in harness.seen("k-niw", 2)[-1]
    steps = await harness.stack.read_step_history("k-niw")
    assert (steps[1].step_type, steps[1].final_attempt, steps[1].outcome) == (
        "sessionflow.CallSingleAttemptTool",
        1,
        "timed_out",
    )
    assert snapshot.state is not None and snapshot.state.last_turn_error is None


async def test_sigkill_while_waiting_for_approval(harness: Harness) -> None:
    harness.script(
        "k-approval",
        [[{"tool_calls": [call("c1", "refund", order=7)]}, {"text": "refunded"}]],
        {"refund": {"effect": "non_idempotent_write", "output": "refund ok"}},
    )
    await harness.sessions.start_session("k-approval", "refund order 7")
    interrupt = await pending_interrupt(harness, "k-approval")
    harness.stack.workers[-1].kill()
    await harness.stack.start_worker()
    assert await harness.sessions.resolve_interrupt("k-approval", interrupt.interrupt_id, approved=True)
    snapshot = await idle_after(harness, "k-approval", 1)
    assert harness.log.count("tool", "refund") == 1
    assert snapshot.messages[-1].message.text == "refunded"


async def test_sigkill_during_model_call_repeats_only_that_call(harness: Harness) -> None:
    harness.script(
        "k-model",
        [[{"tool_calls": [call("c1", "lookup")]}, {"gate": "model-2", "text": "final"}]],
        {"lookup": {"effect": "read", "output": "v"}},
    )
    await harness.sessions.start_session("k-model", "go")
    await kill_at_gate(harness, "model-2")
    snapshot = await idle_after(harness, "k-model", 1)
    assert snapshot.messages[-1].message.text == "final"
    models = harness.log.entries("model", session="k-model")
    assert [(m["call"], m["attempt"]) for m in models] == [(1, 1), (2, 1), (2, 2)]
    assert harness.log.count("tool", "lookup") == 1
    steps = await harness.stack.read_step_history("k-model")
    assert [(s.step_type, s.final_attempt) for s in steps] == [
        ("sessionflow.RunModel", 1),
        ("sessionflow.CallTool", 1),
        ("sessionflow.RunModel", 2),
    ]


async def test_sigkill_after_tools_before_resume_keeps_the_run_state(harness: Harness) -> None:
    # The worker dies right as the resumed model call starts: the new worker must resume
    # from the stored run state and the recorded results, without running the tool again.
    harness.script(
        "k-resume",
        [[{"tool_calls": [call("c1", "lookup")]}, {"gate": "resume", "text": "resumed"}]],
        {"lookup": {"effect": "read", "output": "kept"}},
    )
    await harness.sessions.start_session("k-resume", "go")
    await FileGate(harness.state_dir, "resume").wait_until_reached()
    snapshot = await harness.sessions.get_agent_snapshot("k-resume")
    assert [r.status for r in snapshot.tool_calls] == [AgentToolCallStatus.SUCCEEDED]
    harness.stack.workers[-1].kill()
    await harness.stack.start_worker()
    await idle_after(harness, "k-resume", 1)
    assert harness.seen("k-resume", 3)[-1] == "kept"
    assert harness.log.count("tool", "lookup") == 1
    await wait_until("worker logs to exist", lambda: harness.stack.workers[-1].log())


async def test_two_answers_delivered_together_apply_once(harness: Harness) -> None:
    # Two answers race while no worker runs: exactly one applies and the other reports False.
    # (The handler re-checks, because answers delivered in one activation all pass the
    # validator before any handler runs; the chaos soak found that case.) Both answers are
    # admitted by the server before a worker starts, so one workflow task brings them together.
    harness.script(
        "k-twice",
        [[{"tool_calls": [call("c1", "refund")]}, {"text": "done"}]],
        {"refund": {"effect": "non_idempotent_write", "output": "ok"}},
    )
    await harness.sessions.start_session("k-twice", "refund")
    interrupt = await pending_interrupt(harness, "k-twice")
    harness.stack.workers[-1].kill()
    approve = ResolveInterruptRequest(interrupt_id=interrupt.interrupt_id, approved=True)
    reject = ResolveInterruptRequest(
        interrupt_id=interrupt.interrupt_id, approved=False, rejection_message="no"
    )
    handle = harness.sessions.client.get_workflow_handle("k-twice")

    async def answer(update_id: str, request: ResolveInterruptRequest) -> bool:
        # As `resolve_interrupt` reports them: a refusal by the validator (the other answer
        # was applied first) is False, like the handler's own re-check.
        try:
            return await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
                RESOLVE_INTERRUPT, request, id=update_id, result_type=bool
            )
        except WorkflowUpdateFailedError:
            return False

    answers = [asyncio.create_task(answer("approve", approve)), asyncio.create_task(answer("reject", reject))]
    for update_id in ("approve", "reject"):
        await wait_until(
            f"the server to admit the answer {update_id!r}",
            lambda update_id=update_id: admitted(harness.sessions.client, "k-twice", update_id),
        )
    await harness.stack.start_worker()
    results = await asyncio.gather(*answers)
    assert sorted(results) == [False, True]
    await idle_after(harness, "k-twice", 1)
    assert harness.log.count("tool", "refund") == (1 if results[0] else 0)


async def admitted(client: Client, workflow_id: str, update_id: str) -> bool:
    """Whether the server holds the update (admitted, or further), with or without a worker."""
    request = PollWorkflowExecutionUpdateRequest(
        namespace=client.namespace,
        update_ref=UpdateRef(
            workflow_execution=WorkflowExecution(workflow_id=workflow_id), update_id=update_id
        ),
        identity=client.identity,
        wait_policy=WaitPolicy(
            lifecycle_stage=UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED
        ),
    )
    try:
        await client.workflow_service.poll_workflow_execution_update(request, timeout=timedelta(seconds=5))
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return True
