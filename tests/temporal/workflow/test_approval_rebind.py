"""A call whose framework rewrites its approved arguments in the tool step asks again, and runs once.

The scripted tool's ``rewrite_arguments`` is what a LangChain ``wrap_tool_call`` middleware
does: the arguments it is about to run are not the approved ones. The step does not run
the tool; the session asks again (interrupt ``#2``, the approved arguments as
``previous_arguments``), and after that approval the step ``#2`` runs it once, even across
a SIGKILL of the worker while the second approval waits.
"""

from __future__ import annotations

import json

import pytest

from sessionflow import AgentEventType, ToolEffect
from sessionflow.kit import approval_digest
from sessionflow.testing import wait_until
from tests.harness import Harness
from tests.harness_helpers import idle_after, pending_interrupt
from tests.temporal.workflow.test_crashes import call


@pytest.mark.parametrize("kill_while_waiting", [False, True])
async def test_a_rewrite_after_the_approval_asks_again_and_runs_once(
    harness: Harness, kill_while_waiting: bool
) -> None:
    sid = f"rebind-{int(kill_while_waiting)}"
    harness.script(
        sid,
        [[{"tool_calls": [call("w", "publish", title="draft")]}, {"text": "published"}]],
        {"publish": {"effect": "non_idempotent_write", "rewrite_arguments": {"title": "final"}}},
    )
    await harness.sessions.start_session(sid, "publish it")
    first = await pending_interrupt(harness, sid)
    assert await harness.sessions.resolve_interrupt(
        sid, first.interrupt_id, approved=True, digest=first.digest, answered_by="ana"
    )

    async def second_raised() -> bool:
        snapshot = await harness.sessions.get_agent_snapshot(sid)
        return any(i.interrupt_id.endswith("#2") for i in snapshot.pending_interrupts)

    await wait_until("the second approval", second_raised)
    second = await pending_interrupt(harness, sid)
    assert harness.log.count("tool", "publish") == 0
    assert second.interrupt_id == f"{first.interrupt_id}#2"
    assert json.loads(second.previous_arguments or "") == {"title": "draft"}
    assert json.loads(second.arguments) == {"title": "final"}
    assert second.digest == approval_digest("publish", {"title": "final"}, ToolEffect.NON_IDEMPOTENT_WRITE)
    if kill_while_waiting:
        harness.stack.workers[-1].kill()
        await harness.stack.start_worker()
    assert await harness.sessions.resolve_interrupt(
        sid, second.interrupt_id, approved=True, digest=second.digest, answered_by="ana"
    )
    await idle_after(harness, sid, 1)
    assert harness.log.count("tool", "publish") == 1
    steps = {s.step_execution_id: s for s in await harness.stack.read_step_history(sid)}
    assert [(s.step_type, s.final_attempt, s.outcome) for k, s in steps.items() if "/tool/" in k] == [
        ("sessionflow.CallSingleAttemptTool", 1, "completed"),
        ("sessionflow.CallSingleAttemptTool", 1, "completed"),
    ]
    assert [k for k in steps if "/tool/" in k] == ["turn-1/tool/w", "turn-1/tool/w#2"]
    page = await harness.sessions.list_agent_events(sid, after=0, limit=1000)
    raised = [e.data for e in page.events if e.type is AgentEventType.INTERRUPT_RAISED]
    assert [(r["interrupt_id"], r["rewritten"]) for r in raised] == [
        (first.interrupt_id, False),
        (second.interrupt_id, True),
    ]
