"""Steering a Strands turn, against plain Strands given the person's next message after the tool results.

Plain Strands goes on from a conversation that ends with a tool's results when it is given
the person's next message as a message (``agent.invoke_async([{"role": "user", ...}])``):
the message joins ``agent.messages`` after the results, and the model is called. The
session does that when a message is sent under double-texting `steer` while the tool step
runs. The model's second request must be the same, and the transcript must read as the
model saw it: the tool's result, then the person's message.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, cast

from strands import Agent, tool  # pyright: ignore[reportUnknownVariableType]
from strands.models import Model

from sessionflow import AgentEventType, AgentSnapshot, AgentStatus
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import FileGate, InvocationLog, wait_for_agent_snapshot
from sessionflow_strands._messages import load_message
from tests.adapter_strands.harness import model_for, session_flow, unique
from tests.serving import serving

STEER = "make it Lisbon, not Porto"
LOOKUP = ScriptedToolCall(id="c1", name="lookup_flights", arguments={"to": "Porto"})


def _agent(model: Model, log: InvocationLog, gate: FileGate | None) -> Agent:
    @tool
    async def lookup_flights(to: str) -> str:
        """Look up flights.

        Args:
            to: Where to
        """
        if gate is not None:
            await gate.wait_for_release()
        log.record("tool", "lookup_flights", to=to)
        return f"3 flights to {to}"

    return Agent(
        model=model, tools=[lookup_flights], system_prompt="You book flights.", callback_handler=None
    )


def _script(server: ScriptedModelServer, key: str) -> None:
    server.script(key, [ModelReply(tool_calls=[LOOKUP]), ModelReply(text="Lisbon it is.")])


async def test_a_steered_message_reaches_the_model_after_the_tool_results_as_plain_sends_it(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    key = unique("strands-steer")
    _script(model_server, key)
    log = InvocationLog(tmp_path / "session.jsonl")
    gate = FileGate(tmp_path, "lookup")
    flow = session_flow(_agent(model_for(model_server.url, key), log, gate), key)
    assert flow.runner.accepts_steering()
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "find me a flight")
        await gate.wait_until_reached(timeout=60)
        assert await sessions.send_user_message(key, STEER, message_id="m-steer", double_texting="steer")
        gate.release()

        def idle(s: AgentSnapshot) -> AgentSnapshot | None:
            done = (
                s.state and s.state.turn_count >= 1 and s.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
            )
            return s if done else None

        snapshot = await wait_for_agent_snapshot(
            sessions, key, idle, description="the turn to end", timeout=90
        )
        events = (await sessions.list_agent_events(key)).events
        stored = [load_message(m.message.framework_item) for m in await sessions.stored_messages(key)]

    # Plain Strands, from the conversation up to the tool's result, given the message.
    plain_key = f"{key}-plain"
    model_server.script(plain_key, [ModelReply(text="Lisbon it is.")])
    plain = _agent(model_for(model_server.url, plain_key), InvocationLog(tmp_path / "plain.jsonl"), None)
    plain.messages = cast(Any, copy.deepcopy(stored[:3]))
    await plain.invoke_async(cast(Any, [{"role": "user", "content": [{"text": STEER}]}]))

    session_requests = [r.body for r in model_server.requests(key)]
    plain_requests = [r.body for r in model_server.requests(plain_key)]
    assert len(session_requests) == 2
    assert STEER not in str(session_requests[0])
    assert session_requests[1] == plain_requests[0]
    assert session_requests[1]["messages"][-2:] == [
        {"role": "tool", "tool_call_id": "c1", "content": "3 flights to Porto"},
        {"role": "user", "content": [{"text": STEER, "type": "text"}]},
    ]
    # One turn; the transcript stores the message as the user's, where the model saw it.
    assert snapshot.state is not None and snapshot.state.turn_count == 1
    assert [(m.message.role.value, m.message.text) for m in snapshot.messages] == [
        ("user", "find me a flight"),
        ("assistant", '[tool call lookup_flights({"to": "Porto"})]'),
        ("tool", "[tool result success: 3 flights to Porto]"),
        ("user", STEER),
        ("assistant", "Lisbon it is."),
    ]
    assert [{"role": m["role"], "content": m["content"]} for m in plain.messages] == stored
    assert log.count("tool", "lookup_flights") == 1
    steered = [e for e in events if e.type is AgentEventType.USER_MESSAGE_STEERED]
    assert [(e.step_execution_id, e.data["message_id"]) for e in steered] == [("turn-1/model-2", "m-steer")]
