"""An approval answered before the workflow has handled the model step that raises it.

A worker can answer a query from a workflow task it then dies before completing: the
person sees the approval and answers, and the retried task carries the model step's
result and the answer together. Temporal applies updates before activity results, so
the answer must wait for the result instead of being refused.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType, UpdateWorkflowExecutionLifecycleStage
from temporalio.api.update.v1 import UpdateRef, WaitPolicy
from temporalio.api.workflowservice.v1 import PollWorkflowExecutionUpdateRequest
from temporalio.client import Client, WorkflowHandle, WorkflowHistoryEventFilterType
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import Worker

from sessionflow.temporal._payloads import RESOLVE_INTERRUPT, ResolveInterruptRequest
from sessionflow.temporal._plugin import sandbox_runner
from sessionflow.temporal.activities._flow_router import FlowRouter
from sessionflow.temporal.workflow._workflow import AgentSessionWorkflow
from sessionflow.testing import FileGate
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after

ADMITTED = UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED
REFUND = {"refund": {"effect": "non_idempotent_write", "output": "refund ok"}}


def refund_call() -> dict[str, object]:
    return {"id": "c1", "name": "refund", "arguments": {"order": 7}}


async def test_answer_sent_while_the_model_step_runs_waits_for_the_approval(harness: Harness) -> None:
    harness.script(
        "early", [[{"gate": "model", "tool_calls": [refund_call()]}, {"text": "refunded"}]], REFUND
    )
    await harness.sessions.start_session("early", "refund order 7")
    gate = FileGate(harness.state_dir, "model")
    await gate.wait_until_reached()
    answer = asyncio.create_task(harness.sessions.resolve_interrupt("early", "turn-1:c1", approved=True))
    # Accepted into the session's history, and waiting: not decided before the step ends.
    await _wait_for_event(
        harness.stack.client.get_workflow_handle("early"), "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED"
    )
    assert not answer.done()
    gate.release()
    assert await asyncio.wait_for(answer, 30)
    snapshot = await idle_after(harness, "early", 1)
    assert harness.log.count("tool", "refund") == 1
    assert snapshot.messages[-1].message.text == "refunded"


async def test_answer_for_a_call_the_model_step_does_not_make_is_refused_after_it(harness: Harness) -> None:
    harness.script("early-none", [[{"gate": "model", "text": "nothing to refund"}]], REFUND)
    await harness.sessions.start_session("early-none", "refund order 7")
    gate = FileGate(harness.state_dir, "model")
    await gate.wait_until_reached()
    answer = asyncio.create_task(harness.sessions.resolve_interrupt("early-none", "turn-1:c1", approved=True))
    handle = harness.stack.client.get_workflow_handle("early-none")
    await _wait_for_event(handle, "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED")
    assert not answer.done()
    gate.release()
    assert not await asyncio.wait_for(answer, 30)
    snapshot = await idle_after(harness, "early-none", 1)
    assert snapshot.messages[-1].message.text == "nothing to refund"
    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    # Answers naming another turn, or sent while no model step runs, are refused at once.
    assert not await harness.sessions.resolve_interrupt("early-none", "turn-2:c1", approved=True)
    assert not await harness.sessions.resolve_interrupt("early-none", "turn-1:c1", approved=True)


async def test_answer_delivered_with_the_model_result_in_one_workflow_task(
    harness_factory: HarnessFactory,
) -> None:
    """No workflow worker polls while the model step ends and the answer arrives, so the
    next workflow task carries both: the case of a worker killed before completing its task."""
    harness: Harness = await harness_factory(workers=0)
    harness.script(
        "same-task", [[{"gate": "model", "tool_calls": [refund_call()]}, {"text": "refunded"}]], REFUND
    )
    flow = harness.flow
    client = harness.stack.client

    def workflow_worker() -> Worker:
        return Worker(
            client,
            task_queue=flow.task_queue,
            workflows=[AgentSessionWorkflow],
            # Local activities (the user message) run here; the model step runs elsewhere.
            activities=FlowRouter([flow], client).activities(),
            no_remote_activities=True,
            workflow_runner=sandbox_runner(),
            max_cached_workflows=0,
        )

    activities = Worker(
        client, task_queue=flow.task_queue, activities=FlowRouter([flow], client).activities()
    )
    first = workflow_worker()
    handle = client.get_workflow_handle("same-task")
    async with activities:
        async with first:
            await harness.sessions.start_session("same-task", "refund order 7")
            gate = FileGate(harness.state_dir, "model")
            await gate.wait_until_reached()
        # The answer is admitted (the server holds it) before the model step ends, and no
        # workflow worker polls until the step's result is in the history too.
        request = ResolveInterruptRequest(interrupt_id="turn-1:c1", approved=True)
        answer = asyncio.create_task(
            handle.execute_update(RESOLVE_INTERRUPT, request, id="answer-1", result_type=bool)  # pyright: ignore[reportUnknownMemberType]
        )
        await _admitted(client, "same-task", "answer-1")
        gate.release()
        await _wait_for_event(handle, "EVENT_TYPE_ACTIVITY_TASK_COMPLETED")
        async with workflow_worker():
            assert await asyncio.wait_for(answer, 30)
            snapshot = await idle_after(harness, "same-task", 1)
    assert harness.log.count("tool", "refund") == 1
    assert snapshot.messages[-1].message.text == "refunded"
    names = [EventType.Name(e.event_type) for e in (await handle.fetch_history()).events]
    result = names.index("EVENT_TYPE_ACTIVITY_TASK_COMPLETED")
    accepted = names.index("EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED")
    # The model step's result and the answer came in one workflow task: only that task's
    # events lie between the result and the accepted update.
    task = ["EVENT_TYPE_WORKFLOW_TASK_STARTED", "EVENT_TYPE_WORKFLOW_TASK_COMPLETED"]
    assert names[result + 1 : accepted] in (task, ["EVENT_TYPE_WORKFLOW_TASK_SCHEDULED", *task])


async def _admitted(client: Client, workflow_id: str, update_id: str) -> None:
    """Return once the server holds the update (the public client waits until the workflow
    accepts it, which needs a workflow worker; the server refuses to wait for admission)."""
    request = PollWorkflowExecutionUpdateRequest(
        namespace=client.namespace,
        update_ref=UpdateRef(
            workflow_execution=WorkflowExecution(workflow_id=workflow_id), update_id=update_id
        ),
        wait_policy=WaitPolicy(lifecycle_stage=ADMITTED),
    )
    for _ in range(300):
        try:
            response = await client.workflow_service.poll_workflow_execution_update(request)
        except RPCError as error:
            if error.status is not RPCStatusCode.NOT_FOUND:
                raise
        else:
            if response.stage >= ADMITTED:
                return
        await asyncio.sleep(0.05)
    raise TimeoutError(f"update {update_id!r} was not admitted")


async def _wait_for_event(handle: WorkflowHandle[Any, Any], name: str) -> None:
    for _ in range(300):
        history = await handle.fetch_history(event_filter_type=WorkflowHistoryEventFilterType.ALL_EVENT)
        if any(EventType.Name(e.event_type) == name for e in history.events):
            return
        await asyncio.sleep(0.1)
    raise TimeoutError(f"no {name} in the history")
