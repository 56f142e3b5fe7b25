"""What a person approves is what runs: a Claude PreToolUse hook's ``updatedInput``.

Claude Code applies a hook's rewrite before it asks. The adapter does the same, in the model
step, so the session's approval shows the rewritten input, with the model's input beside it
as a diff (`AgentInterrupt.previous_arguments`), and its digest binds the tool step to it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessionflow import AgentEventType, AgentSnapshot, StaleApprovalError, ToolEffect
from sessionflow.demo import ScriptedModelServer
from sessionflow.kit import approval_digest
from sessionflow.testing import InvocationLog, wait_until
from tests.adapter_claude.differential import custom_tools
from tests.adapter_claude.differential.harness import RunFolders, scripted, session_flow, unique
from tests.adapter_claude.differential.test_crash import LOOKUP_SCRIPT
from tests.serving import serving


async def test_a_hooks_rewrite_is_what_the_approval_shows_binds_and_runs(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("claude-bind")
    folders = RunFolders(tmp_path)
    folders.prepare({})
    model_server.script(key, LOOKUP_SCRIPT)
    log = InvocationLog(folders.tool_log)
    options = scripted(
        custom_tools.lookup_pre_hook_rewrite(folders.workspace, log),
        model_server.base_url(key, api="anthropic"),
        folders,
        plain=False,
    )
    # A write nobody classified: the session's floor asks, although the hook allowed it.
    flow = session_flow(options, key, folders, default_tool_effect=ToolEffect.NON_IDEMPOTENT_WRITE)
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "Look up Temporal")

        async def asking() -> AgentSnapshot | None:
            snapshot = await sessions.get_agent_snapshot(key)
            return snapshot if snapshot.pending_interrupts else None

        (interrupt,) = (await wait_until("the approval", asking, timeout=120)).pending_interrupts
        assert json.loads(interrupt.arguments) == {"topic": "temporal (reviewed)"}
        assert json.loads(interrupt.previous_arguments or "") == {"topic": "Temporal"}
        assert interrupt.digest == approval_digest(
            interrupt.tool_name, {"topic": "temporal (reviewed)"}, ToolEffect.NON_IDEMPOTENT_WRITE
        )
        assert log.count("tool") == 0
        # An answer for the model's own input (what a stale screen showed) is refused.
        model_digest = approval_digest(
            interrupt.tool_name, {"topic": "Temporal"}, ToolEffect.NON_IDEMPOTENT_WRITE
        )
        with pytest.raises(StaleApprovalError):
            await sessions.resolve_interrupt(key, interrupt.interrupt_id, approved=True, digest=model_digest)
        assert await sessions.resolve_interrupt(
            key, interrupt.interrupt_id, approved=True, digest=interrupt.digest, answered_by="ana"
        )

        async def ended() -> AgentSnapshot | None:
            snapshot = await sessions.get_agent_snapshot(key)
            state = snapshot.state
            return snapshot if state is not None and state.turn_count == 1 and not state.turn_id else None

        await wait_until("the turn to end", ended, timeout=120)
        page = await sessions.list_agent_events(key, after=0, limit=1000)

    assert [e["args"] for e in log.entries("tool", "lookup")] == [{"topic": "temporal (reviewed)"}]
    (resolved,) = [e.data for e in page.events if e.type is AgentEventType.INTERRUPT_RESOLVED]
    assert (resolved["answered_by"], resolved["digest"], resolved["approved"]) == (
        "ana",
        interrupt.digest,
        True,
    )
    raised = [e.data for e in page.events if e.type is AgentEventType.INTERRUPT_RAISED]
    assert [r["rewritten"] for r in raised] == [True]
