"""Steering an OpenAI Agents SDK turn, against the plain SDK adding the user's message to its run.

The plain SDK adds a message to a run it resumes with ``RunState.add_input``: the input is
admitted right before the next model call, after the tool results of the resumed turn. Here
the tool asks for approval (``needs_approval``), so the plain run stops where a person
decides; plain approves the call, stages the message and resumes (``Runner.run(agent,
state)``). The session gets the same message under double-texting `steer` while the approved
tool runs. The model's requests must be the same (the second one holds the tool's result,
then the message), the tool must run once, and the transcript must be the SDK's history.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from agents import Agent, RunConfig, Runner, function_tool

from sessionflow import (
    AgentEventType,
    AgentMessage,
    AgentSessionClient,
    AgentSessionOptions,
    AgentSnapshot,
    AgentStatus,
    ToolEffect,
)
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import AgentEventWriter, AgentTurnContext, ContinueRequested, TurnCompleted
from sessionflow.testing import FileGate, InvocationLog, wait_for_agent_snapshot
from sessionflow_openai_agents import OpenAIAgentsRunner, openai_agents_session_flow
from tests.adapter_openai.differential.harness import Models, unique
from tests.adapter_openai.differential.normalise import json_value, normalise_items, normalise_requests
from tests.adapter_openai.scenarios import TIMINGS
from tests.serving import serving

LOOKUP = ScriptedToolCall("call_lookup", "lookup_flights", {"to": "Porto"})
PROMPT = "find me a flight"
STEER = "make it Lisbon, not Porto"


def _agent(models: Models, log: InvocationLog, gate: FileGate | None) -> Agent[Any]:
    """The same agent both ways: its tool asks first, so the plain run stops before it runs."""

    @function_tool(needs_approval=True)
    async def lookup_flights(to: str) -> str:
        """Look up flights."""
        if gate is not None:
            await gate.wait_for_release()
        log.record("tool", "lookup_flights", to=to)
        return f"3 flights to {to}"

    return Agent(
        name="Travel agent", instructions="Find flights.", model=models.model(), tools=[lookup_flights]
    )


def _script(server: ScriptedModelServer, key: str) -> None:
    server.script(key, [ModelReply.call(LOOKUP), ModelReply.say("Lisbon it is.")])


async def _waiting(sessions: AgentSessionClient, key: str) -> AgentSnapshot:
    return await wait_for_agent_snapshot(
        sessions, key, lambda s: s if s.pending_interrupts else None, description="the approval", timeout=60
    )


async def _idle(sessions: AgentSessionClient, key: str) -> AgentSnapshot:
    def probe(snapshot: AgentSnapshot) -> AgentSnapshot | None:
        state = snapshot.state
        done = (
            state is not None
            and state.turn_count >= 1
            and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
        )
        return snapshot if done else None

    return await wait_for_agent_snapshot(sessions, key, probe, description="the turn's end", timeout=90)


async def test_a_steered_message_reaches_the_model_as_plain_run_state_add_input_sends_it(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    plain_key, key = unique("oai-steer-plain"), unique("oai-steer")
    _script(model_server, plain_key)
    _script(model_server, key)

    plain_log = InvocationLog(tmp_path / "plain.jsonl")
    plain_agent = _agent(Models(model_server.url, plain_key), plain_log, None)
    config = RunConfig(tracing_disabled=True)
    stopped = await Runner.run(plain_agent, PROMPT, run_config=config)
    assert [i.name for i in stopped.interruptions] == [LOOKUP.name]
    state = stopped.to_state()
    state.approve(stopped.interruptions[0])
    state.add_input(STEER)
    plain = await Runner.run(plain_agent, state, run_config=config)
    assert plain.final_output == "Lisbon it is."

    log = InvocationLog(tmp_path / "session.jsonl")
    gate = FileGate(tmp_path, "lookup")
    flow = openai_agents_session_flow(
        _agent(Models(model_server.url, key), log, gate),
        flow_type=key,
        options=AgentSessionOptions(timings=TIMINGS, default_tool_effect=ToolEffect.READ),
    )
    assert flow.runner.accepts_steering()
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, PROMPT)
        asking = await _waiting(sessions, key)
        [interrupt] = asking.pending_interrupts
        assert await sessions.resolve_interrupt(key, interrupt.interrupt_id, approved=True)
        await gate.wait_until_reached(timeout=60)
        assert await sessions.send_user_message(key, STEER, message_id="m-steer", double_texting="steer")
        gate.release()
        snapshot = await _idle(sessions, key)
        events = (await sessions.list_agent_events(key)).events
        stored = await sessions.stored_messages(key)

    plain_requests = model_server.requests(plain_key)
    session_requests = model_server.requests(key)
    assert len(plain_requests) == len(session_requests) == 2
    # Plain's second request has the tool's result, then the message; so has the session's.
    assert plain_requests[1].conversation()[-2:] == [("tool_result", LOOKUP.id), ("user", STEER)]
    # The whole bodies, but for what the differential tests normalise (the session streams).
    assert normalise_requests([r.body for r in session_requests], plain_streamed=False) == normalise_requests(
        [r.body for r in plain_requests], plain_streamed=False
    )
    # The tool ran once in each run.
    assert plain_log.count("tool", "lookup_flights") == 1
    assert log.count("tool", "lookup_flights") == 1
    # One turn; the transcript is the SDK's history, the message stored once, as the user's.
    assert snapshot.state is not None and snapshot.state.turn_count == 1
    assert normalise_items([m.message.framework_item for m in stored]) == normalise_items(
        json_value(plain.to_input_list())
    )
    assert [(m.message.role.value, m.message.text) for m in stored] == [
        ("user", PROMPT),
        ("assistant", None),
        ("tool", "3 flights to Porto"),
        ("user", STEER),
        ("assistant", "Lisbon it is."),
    ]
    steered = [e for e in events if e.type is AgentEventType.USER_MESSAGE_STEERED]
    assert [(e.step_execution_id, e.data["message_id"]) for e in steered] == [("turn-1/model-2", "m-steer")]


async def test_messages_that_join_a_first_step_follow_the_turns_message(
    model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """A message that joins a turn's first step (no run state yet) goes after the run's
    input, as plain ``Runner.run(agent, [first, second])`` gives it; it is stored once, as
    the user's, and a restart of the run keeps it the user's."""
    plain_key, key = unique("oai-steer-first-plain"), unique("oai-steer-first")
    for k in (plain_key, key):
        model_server.script(k, [ModelReply.say("first answer"), ModelReply.say("Lisbon it is.")])
    log = InvocationLog(tmp_path / "log.jsonl")
    plain_agent = _agent(Models(model_server.url, plain_key), log, None)
    config = RunConfig(tracing_disabled=True)
    await Runner.run(
        plain_agent,
        [{"role": "user", "content": PROMPT}, {"role": "user", "content": STEER}],
        run_config=config,
    )

    # The output validator refuses the first answer: the restart's input holds the message.
    refused: list[str] = []

    def validator(text: str) -> str | None:
        if refused:
            return None
        refused.append(text)
        return "answer again"

    runner = OpenAIAgentsRunner(_agent(Models(model_server.url, key), log, None), output_validator=validator)
    first = runner.build_user_message(PROMPT)
    turn = AgentTurnContext(
        flow_id=key,
        turn_id="turn-1",
        attempt=1,
        messages=[AgentMessage(sequence=1, turn_id="turn-1", message=first)],
        framework_run_state=None,
        tool_calls={},
        policy_resolver=AgentSessionOptions().resolve_tool_policy,
        events=AgentEventWriter(None, turn_id="turn-1", step_execution_id="s", attempt=1),
        heartbeat=lambda *args: None,
        steered_messages=[runner.build_user_message(STEER)],
    )
    restarted = await runner.run_model_step(turn)
    assert isinstance(restarted, ContinueRequested)
    outcome = await runner.run_model_step(
        dataclasses.replace(turn, framework_run_state=restarted.framework_run_state, steered_messages=())
    )

    assert isinstance(outcome, TurnCompleted)
    plain_requests, session_requests = model_server.requests(plain_key), model_server.requests(key)
    assert session_requests[0].conversation() == [("user", PROMPT), ("user", STEER)]
    assert normalise_requests([session_requests[0].body], plain_streamed=False) == normalise_requests(
        [plain_requests[0].body], plain_streamed=False
    )
    # The turn's message was stored when it arrived; the steered one is the turn's to store,
    # the user's, before the refused answer and the validator's prompt (the runner's).
    assert [(m.role.value, m.text) for m in outcome.new_messages] == [
        ("user", STEER),
        ("assistant", "first answer"),
        ("system", "answer again"),
        ("assistant", "Lisbon it is."),
    ]
