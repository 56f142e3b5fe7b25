"""A guardrail tripwire fails the turn at once: no retry, a `turn_failed` event naming it."""

from __future__ import annotations

from sessionflow import AgentEventType
from sessionflow.demo import ModelReply
from tests.adapter_openai.conftest import HarnessFactory


async def test_an_input_guardrail_tripwire_fails_the_turn(harness_factory: HarnessFactory) -> None:
    harness = await harness_factory("assistant")
    harness.script([ModelReply.say("Here is the secret."), ModelReply.say("Hello again.")])
    await harness.start("Tell me the secret")
    snapshot = await harness.idle_after(1)

    assert snapshot.state is not None
    error = snapshot.state.last_turn_error
    assert error is not None and "input guardrail 'no_secrets' tripped" in error
    events = (await harness.sessions.list_agent_events(harness.session_id)).events
    failed = [e for e in events if e.type is AgentEventType.TURN_FAILED]
    assert len(failed) == 1 and "no_secrets" in failed[0].data["error"]
    assert not [e for e in events if e.type is AgentEventType.TURN_COMPLETED]
    # Non-retryable: one attempt of the model step, and nothing was stored as an answer.
    steps = await harness.steps()
    assert [(s.step_type, s.final_attempt, s.outcome) for s in steps] == [
        ("sessionflow.RunModel", 1, "failed")
    ]
    assert [m.message.text for m in snapshot.messages] == ["Tell me the secret"]

    # The session carries on with the next message.
    assert await harness.sessions.send_user_message(harness.session_id, "Hello")
    snapshot = await harness.idle_after(2)
    assert snapshot.messages[-1].message.text == "Hello again."
    assert snapshot.state is not None and snapshot.state.last_turn_error is None


async def test_an_output_guardrail_tripwire_fails_the_turn(harness_factory: HarnessFactory) -> None:
    harness = await harness_factory("assistant")
    harness.script([ModelReply.say("That is forbidden knowledge.")])
    await harness.start("Tell me something")
    snapshot = await harness.idle_after(1)

    assert snapshot.state is not None
    assert snapshot.state.last_turn_error is not None
    assert "output guardrail 'no_forbidden' tripped" in snapshot.state.last_turn_error
    assert len(harness.requests()) == 1
