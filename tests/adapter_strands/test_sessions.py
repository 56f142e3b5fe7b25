"""Effects, build refusals and the plugin: what the adapter adds over plain Strands."""

from __future__ import annotations

from pathlib import Path

import pytest
from strands import Agent, tool  # pyright: ignore[reportUnknownVariableType]
from strands.session.file_session_manager import FileSessionManager

import sessionflow
from sessionflow import AgentSessionOptions, AgentSnapshot, AgentStatus, ToolEffect, UnsupportedOptionError
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog, wait_for_agent_snapshot
from sessionflow.testing.conformance import discover_frameworks
from sessionflow_strands import strands_session_flow
from tests.adapter_strands.harness import TIMINGS, model_for, unique
from tests.serving import serving


async def test_effect_marks_decide_which_call_waits(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    log = InvocationLog(tmp_path / "log.jsonl")

    @sessionflow.tool_effect("read")
    @tool
    def order_status(order_id: int) -> str:
        """Where an order is.

        Args:
            order_id: The order
        """
        log.record("tool", "order_status", order_id=order_id)
        return "shipped"

    @tool
    def cancel_order(order_id: int) -> str:
        """Cancel an order.

        Args:
            order_id: The order
        """
        log.record("tool", "cancel_order", order_id=order_id)
        return "cancelled"

    key = unique("strands-effects")
    model_server.script(
        key,
        [
            ModelReply(
                tool_calls=[
                    ScriptedToolCall(id="s1", name="order_status", arguments={"order_id": 7}),
                    ScriptedToolCall(id="c1", name="cancel_order", arguments={"order_id": 7}),
                ]
            ),
            ModelReply(text="Done."),
        ],
    )
    agent = Agent(
        model=model_for(model_server.url, key), tools=[order_status, cancel_order], callback_handler=None
    )
    # The default effect (unclassified) asks; the mark on order_status says it reads.
    flow = strands_session_flow(agent, flow_type=key, options=AgentSessionOptions(timings=TIMINGS))
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "Cancel order 7")

        def asks(s: AgentSnapshot) -> AgentSnapshot | None:
            return s if s.pending_interrupts and log.count("tool", "order_status") == 1 else None

        waiting = await wait_for_agent_snapshot(sessions, key, asks, description="the approval", timeout=60)
        assert [i.tool_name for i in waiting.pending_interrupts] == ["cancel_order"]
        assert log.count("tool", "cancel_order") == 0
        assert await sessions.resolve_interrupt(
            key, waiting.pending_interrupts[0].interrupt_id, approved=False
        )

        def ended(s: AgentSnapshot) -> AgentSnapshot | None:
            done = (
                s.state and s.state.turn_count >= 1 and s.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
            )
            return s if done else None

        await wait_for_agent_snapshot(sessions, key, ended, description="the turn to end", timeout=60)
    # The rejected write never ran; the model saw the rejection as an error result.
    assert log.count("tool", "cancel_order") == 0
    last = model_server.requests(key)[-1].tool_results()
    assert last["s1"] == "shipped"
    assert "reject" in last["c1"].lower(), last


def test_a_session_manager_is_refused_at_build(tmp_path: Path, model_server: ScriptedModelServer) -> None:
    agent = Agent(
        model=model_for(model_server.url, "x"),
        session_manager=FileSessionManager(session_id="s", storage_dir=str(tmp_path)),
        callback_handler=None,
    )
    with pytest.raises(UnsupportedOptionError, match="the durable session already stores"):
        strands_session_flow(
            agent, flow_type="refused", options=AgentSessionOptions(default_tool_effect=ToolEffect.READ)
        )


def test_initial_messages_are_refused_at_build(model_server: ScriptedModelServer) -> None:
    model = model_for(model_server.url, "x")
    options = AgentSessionOptions(default_tool_effect=ToolEffect.READ)
    seeded = Agent(
        model=model, messages=[{"role": "user", "content": [{"text": "hi"}]}], callback_handler=None
    )
    with pytest.raises(UnsupportedOptionError, match=r"start_session\(history=history_messages"):
        strands_session_flow(seeded, flow_type="refused", options=options)


def test_the_plugin_registers_the_framework() -> None:
    (spec,) = [f for f in discover_frameworks() if f.name == "strands-agents"]
    caps = spec.capabilities
    assert caps.parallel_tool_calls and caps.reasoning_deltas and caps.mcp_annotations
    assert caps.framework_approvals and caps.questions and caps.verified_outcomes
    assert caps.carry_state and caps.continue_steps and caps.images and caps.tool_state


def test_every_export_resolves_and_the_plugin_loads_no_strands() -> None:
    import subprocess
    import sys

    import sessionflow_strands

    for name in sessionflow_strands.__all__:
        assert getattr(sessionflow_strands, name) is not None
    # Listing frameworks stays fast: discovering the plugin does not import Strands.
    code = "import sys, sessionflow_strands._plugin; print('strands' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
