"""Tool results, rejections and MCP annotations on real sessions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from sessionflow import AgentSessionOptions, ToolEffect, ToolPolicy
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import ToolInvocation, ToolSpec
from sessionflow.testing import InvocationLog, wait_until
from sessionflow_langgraph import langgraph_session_flow
from tests.adapter_langgraph.conftest import serving, turn_ended, unique
from tests.adapter_langgraph.flows import FAST, FlowSpec, build_flow

EMPTY: dict[str, Any] = {"type": "object", "properties": {}}


async def test_rejection_reaches_the_model_verbatim_as_an_error_result(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("lg-reject")
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("c1", "refund", {"order": 7})),
            ModelReply.say("ok, not refunding"),
        ],
    )
    flow = build_flow(FlowSpec(flow_type=key, base_url=model_server.base_url(key)), tmp_path)
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "refund order 7")
        snapshot = await wait_until(
            "the refund to wait for approval",
            lambda: _pending(sessions, key),
        )
        interrupt = snapshot.pending_interrupts[0]
        assert (interrupt.tool_call_id, interrupt.tool_name) == ("c1", "refund")
        assert await sessions.resolve_interrupt(
            key,
            interrupt.interrupt_id,
            approved=False,
            rejection_message="too risky: call the customer first",
        )
        snapshot = await turn_ended(sessions, key)

    assert snapshot.messages[-1].message.text == "ok, not refunding"
    requests = model_server.requests(key)
    assert len(requests) == 2
    assert requests[1].tool_results() == {
        "c1": "Tool call rejected by the user: too risky: call the customer first"
    }
    tool_item = snapshot.messages[2].message.framework_item
    assert tool_item["data"]["status"] == "error"
    assert (
        tool_item["data"]["content"] == "Tool call rejected by the user: too risky: call the customer first"
    )
    assert InvocationLog(tmp_path / "invocations.jsonl").count("tool", "refund") == 0


async def _pending(sessions: Any, key: str) -> Any:
    snapshot = await sessions.get_agent_snapshot(key)
    return snapshot if snapshot.pending_interrupts else None


async def test_mcp_annotations_and_tool_source_policies_become_effects(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("lg-mcp")
    ran: list[tuple[str, str]] = []

    def handler(name: str) -> Any:
        def run(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
            ran.append((name, invocation.idempotency_key))
            return f"{name} ok"

        return run

    sources = [
        ToolSpec(
            name="mcp_search",
            description="Search (MCP, read-only).",
            parameters=EMPTY,
            effect=None,
            policy=None,
            handler=handler("mcp_search"),
            mcp_annotations={"readOnlyHint": True},
        ),
        ToolSpec(
            name="mcp_put",
            description="Put (MCP, idempotent).",
            parameters=EMPTY,
            effect=None,
            policy=None,
            handler=handler("mcp_put"),
            mcp_annotations={"readOnlyHint": False, "idempotentHint": True},
        ),
        ToolSpec(
            name="mcp_delete",
            description="Delete (MCP, destructive).",
            parameters=EMPTY,
            effect=None,
            policy=None,
            handler=handler("mcp_delete"),
            mcp_annotations={"destructiveHint": True},
        ),
        ToolSpec(
            name="mcp_send",
            description="Send (MCP, no hints; its source says it needs no approval).",
            parameters=EMPTY,
            effect=None,
            policy=ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False),
            handler=handler("mcp_send"),
            mcp_annotations={},
        ),
    ]
    model_server.script(
        key,
        [
            ModelReply.call(
                ScriptedToolCall("c1", "mcp_search"),
                ScriptedToolCall("c2", "mcp_put"),
                ScriptedToolCall("c3", "mcp_delete"),
                ScriptedToolCall("c4", "mcp_send"),
            ),
            ModelReply.say("all done"),
        ],
    )
    model = ChatOpenAI(
        model="gpt-test", base_url=model_server.base_url(key), api_key=SecretStr("k"), max_retries=0
    )
    flow = langgraph_session_flow(
        flow_type=key, model=model, tool_sources=sources, options=AgentSessionOptions(timings=FAST)
    )
    assert flow.options.tool_policies == {"mcp_send": sources[3].policy}
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "use the MCP tools")
        snapshot = await wait_until("the delete to wait for approval", lambda: _pending(sessions, key))
        assert [i.tool_call_id for i in snapshot.pending_interrupts] == ["c3"]
        policies = {
            r.tool_call_id: (r.policy.effect, r.policy.is_approval_required) for r in snapshot.tool_calls
        }
        assert policies == {
            "c1": (ToolEffect.READ, False),
            "c2": (ToolEffect.IDEMPOTENT_WRITE, False),
            "c3": (ToolEffect.UNCLASSIFIED, True),
            "c4": (ToolEffect.NON_IDEMPOTENT_WRITE, False),
        }
        assert await sessions.resolve_interrupt(
            key, snapshot.pending_interrupts[0].interrupt_id, approved=True
        )
        snapshot = await turn_ended(sessions, key)

    assert snapshot.messages[-1].message.text == "all done"
    assert sorted(ran) == sorted(
        (f"mcp_{n}", f"{key}/turn-1/c{i}") for i, n in enumerate(["search", "put", "delete", "send"], 1)
    )
    requests = model_server.requests(key)
    assert len(requests) == 2
    assert requests[1].tool_results() == {
        "c1": "mcp_search ok",
        "c2": "mcp_put ok",
        "c3": "mcp_delete ok",
        "c4": "mcp_send ok",
    }
