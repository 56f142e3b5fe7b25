"""Steering where the plain SDK has no counterpart run to compare with: an agent tool's sub-agent
moving, and an agent whose tool result may end the run.

The differential tests (`differential/test_steering.py`) compare a steered turn with plain
``RunState.add_input``; these cover the rest of the runner's paths.
"""

from __future__ import annotations

from typing import Any

from agents import Agent

from sessionflow import AgentEventType
from sessionflow.demo import ModelReply, ScriptedToolCall
from sessionflow.testing import FileGate
from sessionflow_openai_agents import OpenAIAgentsRunner
from tests.adapter_openai.conftest import HarnessFactory

STEER = "make it Lisbon, not Porto"
ASK = ScriptedToolCall("call_ask", "ask_expert", {"input": "weather in Porto?"})
WEATHER = ScriptedToolCall("call_weather", "get_weather", {"city": "Porto"})


async def test_a_message_steered_while_a_sub_agent_runs_joins_the_parents_next_model_call(
    harness_factory: HarnessFactory,
) -> None:
    """The sub-agent's model step after the steer keeps the message staged in the parent's
    state (``pending_input``): the sub-agent never sees it, the parent's next request has it
    right after the agent tool's result, and it is stored once, as the user's."""
    harness = await harness_factory("agent_tool_with_a_tool", gates=["get_weather"])
    harness.script([ModelReply.call(ASK), ModelReply.say("Lisbon it is.")])
    harness.script([ModelReply.call(WEATHER), ModelReply.say("sunny in Porto")], suffix="-expert")
    gate = FileGate(harness.state_dir, "get_weather")
    await harness.start("find me a flight")
    await gate.wait_until_reached(timeout=60)
    sessions = harness.sessions
    assert await sessions.send_user_message(
        harness.session_id, STEER, message_id="m-steer", double_texting="steer"
    )
    gate.release()
    snapshot = await harness.idle_after(1)
    events = (await sessions.list_agent_events(harness.session_id)).events

    main, expert = harness.requests(), harness.requests("-expert")
    assert len(main) == 2 and len(expert) == 2
    assert not any(r.saw(STEER) for r in expert)
    assert main[1].conversation()[-2:] == [("tool_result", ASK.id), ("user", STEER)]
    assert harness.log.count("tool", "get_weather") == 1
    texts = [(m.message.role.value, m.message.text) for m in snapshot.messages]
    assert texts.count(("user", STEER)) == 1
    assert texts[-2:] == [("user", STEER), ("assistant", "Lisbon it is.")]
    steered = [e for e in events if e.type is AgentEventType.USER_MESSAGE_STEERED]
    # It joined the sub-agent's answering step (model-3), which kept it for the parent's (model-4).
    assert [(e.step_execution_id, e.data["message_id"]) for e in steered] == [("turn-1/model-3", "m-steer")]


def test_an_agent_whose_tool_result_may_end_the_run_does_not_steer() -> None:
    """The SDK refuses input for a run a tool's result may end (``add_input``), so the
    session queues such a message for the next turn instead."""
    assert OpenAIAgentsRunner(Agent[Any](name="a")).accepts_steering()
    assert not OpenAIAgentsRunner(
        Agent[Any](name="a", tool_use_behavior="stop_on_first_tool")
    ).accepts_steering()
    assert not OpenAIAgentsRunner(
        Agent[Any](name="a", tool_use_behavior={"stop_at_tool_names": ["x"]})
    ).accepts_steering()
