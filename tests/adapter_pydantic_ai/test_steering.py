"""Steering a Pydantic AI turn, against plain Pydantic AI giving the user's message with the results.

Plain Pydantic AI goes on from a run stopped for a tool's result with ``agent.run(prompt,
message_history=..., deferred_tool_results=...)``: the prompt goes into the request right
after the tool's result. The session does it when a message is sent under double-texting
`steer` while the tool step runs (the runner enqueues it on the step's run). The model's
second request must be the same, byte for byte, and the transcript must read as the model
saw it: the tool's result, then the user's message.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, CallDeferred, DeferredToolRequests, DeferredToolResults
from pydantic_ai.messages import ModelRequest, ToolReturnPart, UserPromptPart

from sessionflow import AgentEventType, AgentSessionOptions, ToolEffect
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import TurnCompleted
from sessionflow.testing import FileGate, InvocationLog
from sessionflow_pydantic_ai import PydanticAIRunner, pydantic_ai_session_flow
from sessionflow_pydantic_ai._messages import load_messages
from sessionflow_pydantic_ai._models import model_for_api
from tests.adapter_pydantic_ai.differential.normalise import normalise_requests
from tests.adapter_pydantic_ai.test_sessions import idle, serving
from tests.adapter_pydantic_ai.turns import PlayedTurn, context, stored
from tests.harness import FAST

LOOKUP = ScriptedToolCall("call_lookup", "lookup_flights", {"to": "Porto"})
STEER = "make it Lisbon, not Porto"


def _agent(
    model_server: ScriptedModelServer, key: str, log: InvocationLog, gate: FileGate | None
) -> Agent[None, Any]:
    """The same agent both ways; plain's tool defers its result (``CallDeferred``), so the
    plain run stops where the session's tool step runs, and is given the result after."""
    model = model_for_api(
        "chat_completions", "scripted-model", base_url=model_server.base_url(key, "openai"), api_key="x"
    )
    agent: Agent[None, Any] = Agent(model)

    @agent.tool_plain
    async def lookup_flights(to: str) -> str:
        """Look up flights."""
        if gate is None:
            raise CallDeferred
        await gate.wait_for_release()
        log.record("tool", "lookup_flights", to=to)
        return f"3 flights to {to}"

    return agent


def _script(model_server: ScriptedModelServer, key: str) -> None:
    model_server.script(key, [ModelReply.call(LOOKUP), ModelReply.say("Lisbon it is.")])


async def test_a_steered_message_reaches_the_model_as_plain_deferred_tool_results_sends_it(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    plain_key, key = "pai-steer-plain", "pai-steer"
    _script(model_server, plain_key)
    _script(model_server, key)

    plain_agent = _agent(model_server, plain_key, InvocationLog(tmp_path / "plain.jsonl"), None)
    stopped = await plain_agent.run("find me a flight", output_type=[str, DeferredToolRequests])
    assert isinstance(stopped.output, DeferredToolRequests)
    results = DeferredToolResults(calls={LOOKUP.id: "3 flights to Porto"})
    plain_run = await plain_agent.run(
        STEER, message_history=stopped.all_messages(), deferred_tool_results=results
    )
    assert plain_run.output == "Lisbon it is."

    log = InvocationLog(tmp_path / "session.jsonl")
    gate = FileGate(tmp_path, "lookup")
    flow = pydantic_ai_session_flow(
        _agent(model_server, key, log, gate),
        flow_type=key,
        options=AgentSessionOptions(timings=FAST, default_tool_effect=ToolEffect.READ),
    )
    assert flow.runner.accepts_steering()
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "find me a flight")
        await gate.wait_until_reached(timeout=60)
        assert await sessions.send_user_message(key, STEER, message_id="m-steer", double_texting="steer")
        gate.release()
        snapshot = await idle(sessions, key)
        events = (await sessions.list_agent_events(key)).events

    plain, session = model_server.requests(plain_key), model_server.requests(key)
    assert len(plain) == len(session) == 2
    # Plain's second request has the tool's result, then the message; so has the session's.
    assert plain[1].conversation()[-2:] == [("tool_result", LOOKUP.id), ("user", STEER)]
    assert session[1].body["messages"] == plain[1].body["messages"]
    # The whole body, but for what the differential tests normalise (the session streams).
    assert normalise_requests([session[1].body]) == normalise_requests([plain[1].body])
    # Plain holds the message in the results request, after the result.
    resumed = plain_run.new_messages()[0]
    assert isinstance(resumed, ModelRequest)
    assert [type(p) for p in resumed.parts] == [ToolReturnPart, UserPromptPart]
    # One turn; the transcript stores the message as the user's, where the model saw it.
    assert snapshot.state is not None and snapshot.state.turn_count == 1
    stored = [(m.message.role.value, m.message.text) for m in snapshot.messages]
    assert stored == [
        ("user", "find me a flight"),
        ("assistant", None),
        ("tool", "3 flights to Porto"),
        ("user", STEER),
        ("assistant", "Lisbon it is."),
    ]
    assert log.count("tool", "lookup_flights") == 1
    steered = [e for e in events if e.type is AgentEventType.USER_MESSAGE_STEERED]
    assert [(e.step_execution_id, e.data["message_id"]) for e in steered] == [("turn-1/model-2", "m-steer")]


async def test_messages_that_join_a_first_step_follow_the_turns_prompt(
    model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Messages still waiting when a turn ends start the next: the first is its prompt, the
    others join its first step. The model gets them as plain gets a prompt after a history
    holding the first (``agent.run(second, message_history=[first])``), and each is stored
    as the user's."""
    plain_key, key = "pai-steer-first-plain", "pai-steer-first"
    for k in (plain_key, key):
        model_server.script(k, [ModelReply.say("Lisbon it is.")])
    log = InvocationLog(tmp_path / "log.jsonl")
    runner = PydanticAIRunner(_agent(model_server, key, log, None))
    first = runner.build_user_message("find me a flight")
    await _agent(model_server, plain_key, log, None).run(
        STEER, message_history=load_messages([first.framework_item])
    )

    played = PlayedTurn()
    turn = replace(
        context(stored([first]), played, run_state=None),
        steered_messages=[runner.build_user_message(STEER)],
    )
    outcome = await runner.run_model_step(turn)

    assert isinstance(outcome, TurnCompleted)
    plain, session = model_server.requests(plain_key), model_server.requests(key)
    assert session[0].conversation() == [("user", "find me a flight"), ("user", STEER)]
    assert normalise_requests([session[0].body]) == normalise_requests([plain[0].body])
    # The prompt was stored when it arrived; the steered message is the turn's to store.
    assert [(m.role.value, m.text) for m in outcome.new_messages] == [
        ("user", STEER),
        ("assistant", "Lisbon it is."),
    ]
