"""ChatOpenAI and ChatAnthropic through their real clients against the scripted model server."""

from __future__ import annotations

from pathlib import Path

from sessionflow import AgentEvent, AgentEventType, AgentSessionClient, MessageRole
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall, ScriptedUsage
from sessionflow.kit import DeltaSubscription
from sessionflow.temporal import StepHistoryEntry, read_step_history
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.conftest import serving, turn_ended, unique
from tests.adapter_langgraph.flows import FlowSpec, Provider, build_flow


async def drain(live: DeltaSubscription) -> list[AgentEvent]:
    """Every live event delivered so far (the turn has ended: nothing more is coming)."""
    events: list[AgentEvent] = []
    while batch := await live.next(0.2):
        events += batch
    return events


async def play_tool_turn(
    temporal_address: str, server: ScriptedModelServer, tmp_path: Path, provider: Provider
) -> None:
    key = unique(f"lg-{provider}")
    server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("c1", "lookup", {"city": "Oslo"}), usage=ScriptedUsage(40, 6)),
            ModelReply.say(
                "It is sunny.", chunks=["It is ", "sunny."], reasoning="the tool said so", delay_seconds=0.3
            ),
        ],
    )
    api = "anthropic" if provider == "anthropic" else "openai"
    spec = FlowSpec(
        flow_type=key, base_url=server.base_url(key, api=api), provider=provider, system_prompt="Be brief."
    )
    flow = build_flow(spec, tmp_path)
    async with serving(temporal_address, flow) as sessions, flow.delta_transport.subscribe(key) as live:
        await sessions.start_session(key, "Weather in Oslo?")
        snapshot = await turn_ended(sessions, key)
        events = await drain(live)
        steps = [s.step_type for s in await read_steps(sessions, key)]

    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    assert [m.message.role for m in snapshot.messages] == [
        MessageRole.USER,
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.ASSISTANT,
    ]
    assert snapshot.messages[-1].message.text == "It is sunny."
    tool_item = snapshot.messages[2].message.framework_item
    assert tool_item["type"] == "tool" and tool_item["data"]["tool_call_id"] == "c1"
    assert tool_item["data"]["status"] == "success"

    requests = server.requests(key)
    # Exactly one model request per RunModel step, and no other step calls the model.
    assert steps == ["sessionflow.RunModel", "sessionflow.CallTool", "sessionflow.RunModel"]
    assert len(requests) == 2
    assert requests[0].api == ("anthropic_messages" if provider == "anthropic" else "chat_completions")
    assert requests[0].stream
    assert requests[0].saw("Be brief.") and requests[0].saw("Weather in Oslo?")
    assert requests[0].tool_names() == ["lookup", "refund", "save"]
    assert requests[1].tool_results() == {"c1": "sunny in Oslo"}

    assert snapshot.usage.requests == 2
    assert (snapshot.usage.input_tokens, snapshot.usage.output_tokens) == (40 + 10, 6 + 5)
    runs = InvocationLog(tmp_path / "invocations.jsonl").entries("tool", "lookup")
    assert [(r["city"], r["key"], r["attempt"]) for r in runs] == [("Oslo", f"{key}/turn-1/c1", 1)]

    texts = "".join(e.data["text"] for e in events if e.type is AgentEventType.TEXT_DELTA)
    reasoning = "".join(e.data["text"] for e in events if e.type is AgentEventType.REASONING_DELTA)
    assert texts == "It is sunny."
    # Plain ChatOpenAI drops Chat Completions' non-standard `reasoning_content`
    # (ChatOpenAICompatible keeps it); ChatAnthropic streams thinking blocks.
    assert reasoning == ("the tool said so" if provider == "anthropic" else "")


async def read_steps(sessions: AgentSessionClient, session_id: str) -> list[StepHistoryEntry]:
    return await read_step_history(sessions.client, session_id)


async def test_chat_openai_full_turn_with_a_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    await play_tool_turn(temporal_address, model_server, tmp_path, "openai")


async def test_chat_anthropic_full_turn_with_a_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    await play_tool_turn(temporal_address, model_server, tmp_path, "anthropic")
