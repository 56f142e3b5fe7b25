"""Double-texting against a real worker: a message sent while a turn runs is queued,
interrupts the turn, or is refused, by the session's policy or the message's own."""

from __future__ import annotations

import pytest

from sessionflow import AgentSnapshot, DoubleTexting, MessageRejectedError
from sessionflow.testing import FileGate, wait_until
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after, texts


def model_requests(harness: Harness, session_id: str) -> list[list[str]]:
    """What the model was sent, request by request."""
    return [entry["seen"] for entry in harness.log.entries("model", session=session_id)]


async def failed_turns(harness: Harness, session_id: str) -> list[tuple[str, str, str]]:
    events = (await harness.sessions.list_agent_events(session_id)).events
    return [(e.turn_id, e.data["reason"], e.data["error"]) for e in events if e.type.value == "turn_failed"]


async def test_interrupt_cancels_the_running_turn_and_runs_the_message(harness: Harness) -> None:
    harness.script("dt-int", [[{"gate": "dt-int", "text": "never"}], [{"text": "about the second"}]])
    await harness.sessions.start_session("dt-int", "first", double_texting=DoubleTexting.INTERRUPT)
    await FileGate(harness.state_dir, "dt-int").wait_until_reached()

    assert await harness.sessions.send_user_message("dt-int", "second", message_id="m2")
    snapshot = await idle_after(harness, "dt-int", 2)

    # Turn 1 ended as a cancel does; the model step learned of it through its heartbeat.
    assert await failed_turns(harness, "dt-int") == [("turn-1", "cancelled", "turn cancelled")]
    await wait_until("the runner to see the cancel", lambda: harness.log.count("cancelled", "model") == 1)
    assert texts(snapshot) == ["first", "second", "about the second"]
    assert [m.turn_id for m in snapshot.messages] == ["turn-1", "turn-2", "turn-2"]
    # The second turn's model request carries the second message.
    assert model_requests(harness, "dt-int")[-1] == ["first", "second"]
    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    assert snapshot.double_texting is DoubleTexting.INTERRUPT


async def test_reject_refuses_the_message_and_the_turn_goes_on(harness: Harness) -> None:
    harness.script("dt-rej", [[{"gate": "dt-rej", "text": "answer one"}], [{"text": "answer three"}]])
    await harness.sessions.start_session("dt-rej", "first", double_texting="reject")
    gate = FileGate(harness.state_dir, "dt-rej")
    await gate.wait_until_reached()

    with pytest.raises(MessageRejectedError, match="double-texting policy is 'reject'"):
        await harness.sessions.send_user_message("dt-rej", "second", message_id="m2")
    # A retry gets the same answer; nothing was queued.
    with pytest.raises(MessageRejectedError):
        await harness.sessions.send_user_message("dt-rej", "second", message_id="m2")
    running = await harness.sessions.get_agent_snapshot("dt-rej")
    assert running.queued_message_count == 0
    assert running.state is not None and running.state.turn_id == "turn-1"

    gate.release()
    snapshot = await idle_after(harness, "dt-rej", 1)
    assert texts(snapshot) == ["first", "answer one"]
    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    assert await failed_turns(harness, "dt-rej") == []
    assert model_requests(harness, "dt-rej") == [["first"]]

    # Idle now, the rejected ID is still refused; a new message runs.
    with pytest.raises(MessageRejectedError):
        await harness.sessions.send_user_message("dt-rej", "second", message_id="m2")
    assert await harness.sessions.send_user_message("dt-rej", "third", message_id="m3")
    snapshot = await idle_after(harness, "dt-rej", 2)
    assert texts(snapshot) == ["first", "answer one", "third", "answer three"]
    assert model_requests(harness, "dt-rej")[-1] == ["first", "answer one", "third"]


async def test_enqueue_runs_both_in_order(harness: Harness) -> None:
    harness.script("dt-enq", [[{"gate": "dt-enq", "text": "one"}], [{"text": "two"}]])
    await harness.sessions.start_session("dt-enq", "first")
    gate = FileGate(harness.state_dir, "dt-enq")
    await gate.wait_until_reached()

    assert await harness.sessions.send_user_message("dt-enq", "second", message_id="m2")
    assert await harness.sessions.send_user_message("dt-enq", "second", message_id="m2")  # a retry
    assert (await harness.sessions.get_agent_snapshot("dt-enq")).queued_message_count == 1
    gate.release()
    snapshot = await idle_after(harness, "dt-enq", 2)
    assert texts(snapshot) == ["first", "one", "second", "two"]
    assert model_requests(harness, "dt-enq") == [["first"], ["first", "one", "second"]]
    assert await failed_turns(harness, "dt-enq") == []
    assert snapshot.double_texting is DoubleTexting.ENQUEUE


async def test_a_message_overrides_the_session_policy(harness: Harness) -> None:
    harness.script(
        "dt-over",
        [
            [{"gate": "dt-over-1", "text": "one"}],
            [{"gate": "dt-over-2", "text": "never"}],
            [{"text": "three"}],
        ],
    )
    await harness.sessions.start_session("dt-over", "first", double_texting=DoubleTexting.REJECT)
    first_gate = FileGate(harness.state_dir, "dt-over-1")
    await first_gate.wait_until_reached()

    # The session refuses; this message asks to be queued instead.
    assert await harness.sessions.send_user_message("dt-over", "second", double_texting="enqueue")
    with pytest.raises(MessageRejectedError):
        await harness.sessions.send_user_message("dt-over", "not this one")
    first_gate.release()
    await FileGate(harness.state_dir, "dt-over-2").wait_until_reached()

    # Turn 2 runs: a message that interrupts it.
    assert await harness.sessions.send_user_message(
        "dt-over", "third", message_id="m3", double_texting=DoubleTexting.INTERRUPT
    )
    # The same message again: already accepted, so no second cancel and no second copy.
    assert await harness.sessions.send_user_message(
        "dt-over", "third", message_id="m3", double_texting=DoubleTexting.INTERRUPT
    )
    snapshot = await idle_after(harness, "dt-over", 3)
    assert texts(snapshot) == ["first", "one", "second", "third", "three"]
    assert await failed_turns(harness, "dt-over") == [("turn-2", "cancelled", "turn cancelled")]
    assert model_requests(harness, "dt-over")[-1] == ["first", "one", "second", "third"]
    assert snapshot.double_texting is DoubleTexting.REJECT


async def test_interrupt_with_an_idle_session_just_runs_the_message(harness: Harness) -> None:
    harness.script("dt-idle", [[{"text": "one"}], [{"text": "two"}]])
    await harness.sessions.start_session("dt-idle", "first", double_texting="interrupt")
    await idle_after(harness, "dt-idle", 1)
    assert await harness.sessions.send_user_message("dt-idle", "second", double_texting="reject")
    snapshot: AgentSnapshot = await idle_after(harness, "dt-idle", 2)
    assert texts(snapshot) == ["first", "one", "second", "two"]
    assert await failed_turns(harness, "dt-idle") == []


async def test_an_unknown_policy_is_refused_before_anything_is_sent(harness: Harness) -> None:
    with pytest.raises(ValueError, match="double_texting must be one of"):
        await harness.sessions.start_session("dt-bad", "hi", double_texting="sometimes")
    with pytest.raises(ValueError, match="double_texting must be one of"):
        await harness.sessions.send_user_message("dt-bad", "hi", double_texting="later")


async def test_the_policy_and_refused_ids_survive_continue_as_new(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(continue_as_new_after_events=20)
    harness.script("dt-can", [[{"gate": "dt-can", "text": "one"}], [{"text": "two"}], [{"text": "three"}]])
    await harness.sessions.start_session("dt-can", "first", double_texting=DoubleTexting.REJECT)
    gate = FileGate(harness.state_dir, "dt-can")
    await gate.wait_until_reached()
    with pytest.raises(MessageRejectedError):
        await harness.sessions.send_user_message("dt-can", "refused", message_id="m-refused")
    gate.release()
    await idle_after(harness, "dt-can", 1)
    first_run = (await harness.sessions.client.get_workflow_handle("dt-can").describe()).run_id
    for turn, text in ((2, "second"), (3, "third")):
        assert await harness.sessions.send_user_message("dt-can", text)
        await idle_after(harness, "dt-can", turn)
    handle = harness.sessions.client.get_workflow_handle("dt-can")
    assert (await handle.describe()).run_id != first_run, "the session should have continued as new"

    # A new run: only the session's memory can say this ID was refused.
    with pytest.raises(MessageRejectedError):
        await harness.sessions.send_user_message("dt-can", "refused", message_id="m-refused")
    snapshot = await harness.sessions.get_agent_snapshot("dt-can")
    assert snapshot.double_texting is DoubleTexting.REJECT
    assert "refused" not in texts(snapshot)
