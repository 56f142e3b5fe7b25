"""The guardrail scenario table, played with the built-in runner and the scripted model."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from sessionflow import (
    AgentEventType,
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    AgentStatus,
    MemoryOptions,
    SessionBudget,
    StopReason,
    ToolEffect,
    ToolPolicy,
    connect,
    serve_agent_flows,
)
from sessionflow.builtin import ChatCompletionsRunner
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall, ScriptedUsage
from sessionflow.kit import ToolInvocation, ToolSpec, memory_tools
from sessionflow.testing import wait_for_agent_snapshot
from sessionflow.testing.conformance._cases import OutputCheck
from tests.harness import FAST

SCENARIOS = Path(__file__).resolve().parents[2] / "conformance" / "scenarios"
ROWS = {path.stem: json.loads(path.read_text()) for path in sorted(SCENARIOS.glob("*.json"))}


def reply(raw: dict[str, Any]) -> ModelReply:
    usage = raw.get("usage")
    scripted_usage = ScriptedUsage(usage["input_tokens"], usage["output_tokens"]) if usage else None
    delay = float(raw.get("delay_seconds", 0.0))
    if "tool_calls" in raw:
        calls = [ScriptedToolCall(c["id"], c["name"], c["arguments"]) for c in raw["tool_calls"]]
        return ModelReply(tool_calls=calls, usage=scripted_usage, delay_seconds=delay)
    return ModelReply.say(raw["text"], usage=scripted_usage, delay_seconds=delay)


def budget_of(raw: dict[str, Any] | None) -> SessionBudget | None:
    if raw is None:
        return None
    values = dict(raw)
    seconds = values.pop("max_turn_seconds", None)
    return SessionBudget(**values, max_turn_duration=timedelta(seconds=seconds) if seconds else None)


@pytest.fixture(scope="module")
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


async def play(row: dict[str, Any], address: str, server: ScriptedModelServer) -> dict[str, Any]:
    key = f"{row['id']}-{uuid.uuid4().hex[:6]}"
    side_effects: dict[str, int] = {"emails_sent": 0}
    ran: list[str] = []

    def handler_for(name: str, spec: dict[str, Any]):
        async def handler(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
            ran.append(name)
            if "side_effect" in spec:
                side_effects[spec["side_effect"]] += 1
            return str(row.get("tool_outputs", {}).get(name, spec["output"]))

        return handler

    tools = [
        ToolSpec(
            name=name,
            description=f"The {name} tool",
            parameters=spec["schema"],
            effect=ToolEffect(spec["effect"]),
            policy=None,
            handler=handler_for(name, spec),
        )
        for name, spec in row["tools"].items()
    ]
    if row.get("memory"):
        tools += memory_tools()
    server.script(key, [reply(r) for r in row["replies"]])
    check = row.get("output_check")
    runner = ChatCompletionsRunner(
        model="scripted",
        tools=tools,
        base_url=server.base_url(key),
        api_key="test",
        output_validator=OutputCheck(**check) if check else None,
    )
    flow = AgentSessionFlow(
        runner,
        flow_type=f"scenario-{key}",
        options=AgentSessionOptions(
            timings=FAST,
            tool_policies={t.name: ToolPolicy(effect=t.effect) for t in tools if t.effect is not None},
            budget=budget_of(row.get("budget")),
            memory=MemoryOptions() if row.get("memory") else None,
            max_continues_per_turn=row.get("max_continues_per_turn", 8),
        ),
    )
    client = await connect(address)
    sessions = AgentSessionClient(client, flow)
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
    try:
        await sessions.start_session(key, "Where is order 7?")
        approve = row.get("approvals") != "deny"

        async def settle() -> bool:
            snapshot = await sessions.get_agent_snapshot(key)
            for interrupt in snapshot.pending_interrupts:
                await sessions.resolve_interrupt(
                    key, interrupt.interrupt_id, approved=approve, rejection_message="no"
                )
            state = snapshot.state
            return bool(
                state and state.turn_count == 1 and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
            )

        await wait_for_agent_snapshot(sessions, key, lambda s: s, description="the session")
        from sessionflow.testing import wait_until

        await wait_until(f"scenario {row['id']} to end", settle, timeout=60)
        events = (await sessions.list_agent_events(key)).events
        snapshot = await sessions.get_agent_snapshot(key)
    finally:
        stop.set()
        await worker
    failed = [e for e in events if e.type is AgentEventType.TURN_FAILED]
    finished = [e for e in events if e.type is AgentEventType.TOOL_CALL_FINISHED]
    refusals = [
        (str(e.data["error"]).split(":")[0] if e.data.get("error") else "rejected")
        for e in finished
        if e.data["status"] == "rejected"
    ]
    memory_refusals = [
        str(e.data["error"]).rsplit(": ", 1)[-1]
        for e in finished
        if e.data["status"] == "failed" and str(e.data.get("error", "")).startswith("memory")
    ]
    requests = server.requests(key)
    return {
        "status": "stopped" if failed else "completed",
        "reason": failed[-1].data["reason"] if failed else None,
        "calls": ran,
        "refusals": refusals,
        "memory_refusals": memory_refusals,
        "side_effects": side_effects,
        "model_calls": len(requests),
        "seen": [text for r in requests for text in r.sent_texts()],
        "next_turn_note": snapshot.messages[-1].message.text if failed else None,
    }


@pytest.mark.parametrize("row_id", sorted(ROWS))
async def test_scenario(row_id: str, temporal_address: str, model_server: ScriptedModelServer) -> None:
    row = ROWS[row_id]
    expect = row["expect"]
    outcome = await play(row, temporal_address, model_server)
    assert (outcome["status"], outcome["reason"]) == (expect["status"], expect["reason"])
    assert outcome["calls"] == expect["calls"]
    assert outcome["side_effects"] == expect["side_effects"]
    assert outcome["refusals"] == expect.get("refusals", [])
    assert outcome["memory_refusals"] == expect.get("memory_refusals", [])
    if "model_calls" in expect:
        assert outcome["model_calls"] == expect["model_calls"]
    for text in expect.get("model_saw", []):
        assert any(text in seen for seen in outcome["seen"]), (text, outcome["seen"])
    if outcome["status"] == "stopped":
        # The next turn's model is told why the turn was cut off.
        assert outcome["next_turn_note"] is not None
        assert outcome["next_turn_note"].startswith(
            f"[sessionflow] The previous turn was stopped ({expect['reason']})"
        )


def test_every_stop_reason_is_reached_by_a_row() -> None:
    reached = {row["expect"]["reason"] for row in ROWS.values()}
    assert {reason.value for reason in StopReason} <= reached


def test_every_scripted_behaviour_has_a_row() -> None:
    behaviours = {row["behaviour"] for row in ROWS.values()}
    assert behaviours >= {
        "sensible",
        "hallucinates_tools",
        "returns_garbage",
        "finishes_early",
        "obeys_injection",
        "wanders",
        "loops",
    }
