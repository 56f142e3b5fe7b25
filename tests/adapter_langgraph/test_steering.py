"""Steering a LangGraph turn, against plain LangGraph adding the same message to a paused run.

Plain LangGraph adds a user's message to a run paused before its tool node this way: run
the tool node and stop after it (``interrupt_after``), ``update_state`` the messages as the
tool node, then go on. The session does it when a message is sent under double-texting
`steer` while the tool step runs. The model's second request must be the same, byte for
byte, and the stored transcript must be the plain thread's messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain_core.messages import HumanMessage
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver

from sessionflow import AgentEventType, AgentSessionOptions, ToolEffect
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import FileGate, InvocationLog
from sessionflow_langgraph import langgraph_session_flow
from tests.adapter_langgraph.conftest import serving, turn_ended, unique
from tests.adapter_langgraph.differential.harness import scripted_model
from tests.adapter_langgraph.flows import FAST

LOOKUP = ScriptedToolCall("call_lookup", "lookup_flights", {"to": "Porto"})
STEER = "make it Lisbon, not Porto"


def _script(model_server: ScriptedModelServer, key: str) -> None:
    model_server.script(key, [ModelReply.call(LOOKUP), ModelReply.say("Lisbon it is.")])


def _lookup(log: InvocationLog, gate: FileGate | None) -> StructuredTool:
    async def lookup_flights(to: str) -> str:
        """Look up flights."""
        if gate is not None:
            await gate.wait_for_release()
        log.record("tool", "lookup_flights", to=to)
        return f"3 flights to {to}"

    return StructuredTool.from_function(coroutine=lookup_flights)


async def _plain(model_server: ScriptedModelServer, key: str, log: InvocationLog) -> list[Any]:
    graph: Any = create_agent(  # pyright: ignore[reportUnknownVariableType] - partial stubs
        scripted_model(model_server, key, "openai"), tools=[_lookup(log, None)], checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "plain"}}

    async def run(graph_input: Any, **interrupts: list[str]) -> None:
        # As a client that shows tokens runs it (the session streams too).
        async for _ in graph.astream(graph_input, config, stream_mode="messages", **interrupts):
            pass

    await run({"messages": [HumanMessage(content="find me a flight")]}, interrupt_before=["tools"])
    await run(None, interrupt_after=["tools"])
    await graph.aupdate_state(config, {"messages": [HumanMessage(content=STEER)]}, as_node="tools")
    await run(None)
    return list((await graph.aget_state(config)).values["messages"])


async def test_a_steered_message_reaches_the_model_as_plain_update_state_sends_it(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    plain_key, key = unique("lg-steer-plain"), unique("lg-steer")
    _script(model_server, plain_key)
    _script(model_server, key)
    plain_messages = await _plain(model_server, plain_key, InvocationLog(tmp_path / "plain.jsonl"))

    log = InvocationLog(tmp_path / "session.jsonl")
    gate = FileGate(tmp_path, "lookup")
    graph: Any = create_agent(  # pyright: ignore[reportUnknownVariableType] - partial stubs
        scripted_model(model_server, key, "openai"), tools=[_lookup(log, gate)]
    )
    flow = langgraph_session_flow(
        flow_type=key,
        graph=graph,
        options=AgentSessionOptions(timings=FAST, default_tool_effect=ToolEffect.READ),
    )
    assert flow.runner.accepts_steering()
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "find me a flight")
        await gate.wait_until_reached(timeout=60)
        assert await sessions.send_user_message(key, STEER, message_id="m-steer", double_texting="steer")
        gate.release()
        snapshot = await turn_ended(sessions, key)
        events = (await sessions.list_agent_events(key)).events

    plain, session = model_server.requests(plain_key), model_server.requests(key)
    assert len(plain) == len(session) == 2
    # The plain run's second request has the tool's result, then the message; so has the session's.
    assert plain[1].conversation()[-2:] == [("tool_result", "call_lookup"), ("user", STEER)]
    assert session[1].body["messages"] == plain[1].body["messages"]
    assert session[1].body == plain[1].body
    # One turn, its transcript the plain thread's messages; the tool ran once.
    assert snapshot.state is not None and snapshot.state.turn_count == 1
    stored = [(m.message.role.value, m.message.text) for m in snapshot.messages]
    assert stored == [
        ("user", "find me a flight"),
        ("assistant", None),
        ("tool", "3 flights to Porto"),
        ("user", STEER),
        ("assistant", "Lisbon it is."),
    ]
    assert [type(m).__name__ for m in plain_messages] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "HumanMessage",
        "AIMessage",
    ]
    assert log.count("tool", "lookup_flights") == 1
    steered = [e for e in events if e.type is AgentEventType.USER_MESSAGE_STEERED]
    assert [(e.step_execution_id, e.data["message_id"]) for e in steered] == [("turn-1/model-2", "m-steer")]
