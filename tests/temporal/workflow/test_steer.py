"""Steering against a real worker: a message sent under double-texting `steer` joins the
running turn at its next model step, after the tool results of the step before (issue 46)."""

from __future__ import annotations

import asyncio

from sessionflow import AgentEventType, DoubleTexting, TurnStatus
from sessionflow.testing import FileGate
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after, texts
from tests.temporal.workflow.test_long_turn import gated, run_lengths, scheduled_by_run

LOOKUP = {"lookup": {"effect": "read", "output": "found", "gate": "tool-held"}}
TOOL_RESULT = "found"
NO_ARGUMENTS: dict[str, object] = {}


async def steered_events(harness: Harness, session_id: str) -> list[tuple[str, str, str | None]]:
    events = (await harness.sessions.list_agent_events(session_id, limit=500)).events
    return [
        (e.turn_id, str(e.data["step"]), e.data.get("message_id"))
        for e in events
        if e.type is AgentEventType.USER_MESSAGE_STEERED
    ]


async def test_a_steered_message_joins_the_next_model_step_after_the_tool_results(harness: Harness) -> None:
    harness.script(
        "steer",
        [
            [
                {"tool_calls": [{"id": "c1", "name": "lookup", "arguments": NO_ARGUMENTS}]},
                {"text": "done, in Lisbon"},
            ]
        ],
        LOOKUP,
    )
    await harness.sessions.start_session("steer", "find a flight")
    gate = FileGate(harness.state_dir, "tool-held")
    await gate.wait_until_reached()

    # Recorded at once, with its ID; a resend with the same ID adds nothing.
    for _ in range(2):
        assert await harness.sessions.send_user_message(
            "steer", "make it Lisbon", message_id="s1", double_texting=DoubleTexting.STEER
        )
    running = await harness.sessions.get_agent_snapshot("steer")
    assert (running.steered_message_count, running.queued_message_count) == (1, 0)

    gate.release()
    snapshot = await idle_after(harness, "steer", 1)
    assert snapshot.state is not None and snapshot.state.turn_count == 1
    # The second model request: the tool result, then the steered message, then nothing.
    assert harness.seen("steer", 1) == ["find a flight"]
    assert harness.seen("steer", 2) == [
        "find a flight",
        "calls lookup({})#c1",
        TOOL_RESULT,
        "make it Lisbon",
    ]
    # The transcript holds it where the model saw it, as the person's message.
    assert texts(snapshot) == [
        "find a flight",
        "calls lookup({})#c1",
        TOOL_RESULT,
        "make it Lisbon",
        "done, in Lisbon",
    ]
    assert snapshot.messages[3].message.role.value == "user"
    assert await steered_events(harness, "steer") == [("turn-1", "turn-1/model-2", "s1")]
    assert snapshot.steered_message_count == 0


async def test_steers_racing_the_turns_end_start_the_next_turn_together(harness: Harness) -> None:
    harness.script("race", [[{"gate": "last-step", "text": "one"}], [{"text": "two"}]])
    await harness.sessions.start_session("race", "first")
    gate = FileGate(harness.state_dir, "last-step")
    await gate.wait_until_reached()

    # The running step is the turn's last: nothing joins it.
    for message_id, text in (("a", "also this"), ("b", "and that")):
        assert await harness.sessions.send_user_message(
            "race", text, message_id=message_id, double_texting="steer"
        )
    gate.release()
    snapshot = await idle_after(harness, "race", 2)
    assert snapshot.state is not None and snapshot.state.turn_count == 2
    # The first starts turn 2; the second joins turn 2's first model step, right after it.
    assert harness.seen("race", 2) == ["first", "one", "also this", "and that"]
    assert texts(snapshot) == ["first", "one", "also this", "and that", "two"]
    assert await steered_events(harness, "race") == [("turn-2", "turn-2/model-1", "b")]
    events = (await harness.sessions.list_agent_events("race")).events
    started = [e.data.get("message_id") for e in events if e.type is AgentEventType.TURN_STARTED]
    assert started == [None, "a"]


async def test_a_steered_message_moves_with_the_turn_across_continue_as_new(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory(continue_as_new_after_events=40)
    harness.script("steer-can", [gated(8, {5: "held"})], {"lookup": {"effect": "read", "output": "found"}})
    first = asyncio.create_task(harness.sessions.run_turn("steer-can", "go", timeout=300))
    gate = FileGate(harness.state_dir, "held")
    await gate.wait_until_reached()
    runs_before = len(await run_lengths(harness.stack.client, "steer-can"))
    assert runs_before > 1  # the turn moved before the message came

    assert await harness.sessions.send_user_message(
        "steer-can", "hurry up", message_id="s-can", double_texting="steer"
    )
    gate.release()
    result = await first
    assert (result.status, result.text) == (TurnStatus.COMPLETED, "all 8 rounds done")
    # Model call 5 was running when it came: call 6 has it, after call 5's tool result.
    assert harness.seen("steer-can", 6)[-3:] == ['calls lookup({"n": 5})#c5', "found", "hurry up"]
    assert "hurry up" not in harness.seen("steer-can", 5)
    assert harness.seen("steer-can", 9).count("hurry up") == 1
    # It waited through a move: the run that scheduled call 5 is not the one that scheduled call 6.
    runs = await scheduled_by_run(harness.stack.client, "steer-can")
    run_of = {step: n for n, steps in enumerate(runs) for step in steps}
    assert run_of["turn-1/model-6"] == run_of["turn-1/model-5"] + 1
    snapshot = await harness.sessions.get_agent_snapshot("steer-can")
    assert [m.message.text for m in snapshot.messages].count("hurry up") == 1
    assert await steered_events(harness, "steer-can") == [("turn-1", "turn-1/model-6", "s-can")]
