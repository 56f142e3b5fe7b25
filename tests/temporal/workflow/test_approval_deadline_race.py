"""An approval answered after its deadline is refused, even when the answer and the deadline meet in one task.

The worker is killed while the call waits. The answer is sent after the deadline has
passed, while no worker runs, so the server admits it; the next worker then gets the
deadline's timer and the answer in one workflow task. The answer must lose: the call expires
unrun, and the approval record says nobody answered.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from temporalio.client import WorkflowUpdateFailedError

from sessionflow import AgentEventType
from sessionflow.temporal._payloads import RESOLVE_INTERRUPT, ResolveInterruptRequest
from sessionflow.testing import wait_until
from tests.harness import FAST, Harness, HarnessFactory
from tests.harness_helpers import idle_after, pending_interrupt
from tests.temporal.workflow.test_crashes import admitted, call


async def test_an_answer_that_reaches_the_session_after_its_deadline_is_refused(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory(timings=replace(FAST, interrupt_deadline=timedelta(seconds=3)))
    harness.script(
        "race-deadline",
        [[{"tool_calls": [call("c1", "wire")]}, {"text": "not sent"}]],
        {"wire": {"effect": "non_idempotent_write", "output": "wired"}},
    )
    await harness.sessions.start_session("race-deadline", "wire the money")
    interrupt = await pending_interrupt(harness, "race-deadline")
    assert interrupt.deadline is not None
    deadline = datetime.fromisoformat(interrupt.deadline)
    harness.stack.workers[-1].kill()
    # Wait for the deadline itself (not a timing assertion: the race needs it to have passed).
    await wait_until("the deadline to pass", lambda: datetime.now(UTC) > deadline + timedelta(seconds=1))
    handle = harness.sessions.client.get_workflow_handle("race-deadline")
    request = ResolveInterruptRequest(interrupt_id=interrupt.interrupt_id, approved=True, answered_by="late")

    async def answer() -> bool:
        try:
            return await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
                RESOLVE_INTERRUPT, request, id="late-answer", result_type=bool
            )
        except WorkflowUpdateFailedError:
            return False

    late = asyncio.create_task(answer())
    await wait_until(
        "the server to admit the late answer",
        lambda: admitted(harness.sessions.client, "race-deadline", "late-answer"),
    )
    await harness.stack.start_worker()
    assert await late is False
    await idle_after(harness, "race-deadline", 1)
    assert harness.log.count("tool", "wire") == 0
    page = await harness.sessions.list_agent_events("race-deadline", after=0, limit=1000)
    (resolved,) = [e.data for e in page.events if e.type is AgentEventType.INTERRUPT_RESOLVED]
    assert (resolved["approved"], resolved["expired"], resolved["answered_by"]) == (False, True, None)
    assert resolved["digest"] == interrupt.digest
    assert harness.seen("race-deadline", 2)[-1] == (
        "Tool call not run: The approval deadline passed before anyone answered."
    )
