"""Steering in the pure model: the decision, the waiting messages, joining a step, and the turn's end."""

from __future__ import annotations

import json

import pytest
from temporalio.converter import DataConverter

from sessionflow import DoubleTexting, SessionStateError
from sessionflow.session.double_texting import DoubleTextingAction, decide_double_texting
from sessionflow.session.events import AgentEventType
from sessionflow.session.messages import FrameworkMessage, MessageRole
from sessionflow.session.model import SessionModel
from sessionflow.session.outcomes import TurnCompleted
from sessionflow.session.queued_message import QueuedUserMessage

STEER = DoubleTexting.STEER
QUEUE, STEERS = DoubleTextingAction.QUEUE, DoubleTextingAction.STEER


def user(text: str) -> FrameworkMessage:
    return FrameworkMessage(
        role=MessageRole.USER, framework_item={"role": "user", "content": text}, text=text
    )


def running() -> SessionModel:
    model = SessionModel()
    model.queue_user_message(QueuedUserMessage(text="first"))
    model.begin_turn()
    model.store_user_message(user(model.next_queued().text))
    return model


def test_steer_joins_a_running_turn_that_is_not_being_cancelled() -> None:
    def decide(*, running: bool, cancel: bool = False, queued: int = 0, steering: bool = True) -> object:
        return decide_double_texting(
            DoubleTexting.ENQUEUE,
            STEER,
            turn_running=running,
            cancel_requested=cancel,
            queued=queued,
            steering=steering,
        )

    assert decide(running=True) is STEERS
    assert decide(running=True, queued=2) is STEERS  # it joins the running turn, ahead of later turns
    assert decide(running=False) is QUEUE
    assert decide(running=False, queued=1) is QUEUE  # nothing runs to join
    assert decide(running=True, cancel=True) is QUEUE  # the turn is going away
    assert decide(running=True, steering=False) is QUEUE  # the runner takes no steered message
    # The session's policy may be steer too.
    assert decide_double_texting(STEER, None, turn_running=True, cancel_requested=False, queued=0) is STEERS


def test_the_model_asks_with_the_runners_answer() -> None:
    model = running()
    assert model.decide_user_message("s", STEER, cancel_requested=False) is QUEUE  # steering off by default
    assert model.decide_user_message("s", STEER, cancel_requested=False, steering=True) is STEERS


def test_a_steered_message_waits_then_joins_one_step_once() -> None:
    model = running()
    assert model.queue_user_message(QueuedUserMessage(text="also", message_id="s"), steer=True)
    # A resend with the same ID: accepted, nothing more waits.
    assert model.decide_user_message("s", STEER, cancel_requested=False, steering=True) is QUEUE
    assert model.queue_user_message(QueuedUserMessage(text="also", message_id="s"), steer=True)
    assert [m.text for m in model.steered] == ["also"]
    assert model.queued == []
    assert model.snapshot("x").steered_message_count == 1

    model.join_steered([user("also")], step="turn-1/model-2")
    assert model.steered == []
    assert [(s.step, s.message_id) for s in model.turn_steered] == [("turn-1/model-2", "s")]
    steered = [e for e in model.event_log.events if e.type is AgentEventType.USER_MESSAGE_STEERED]
    assert [(e.step_execution_id, e.data) for e in steered] == [
        ("turn-1/model-2", {"step": "turn-1/model-2", "text": "also", "message_id": "s"})
    ]
    # Not in the transcript: the runner returns it where it sits in the run.
    assert [m.message.text for m in model.messages] == ["first"]


def test_only_user_messages_join_and_never_more_than_wait() -> None:
    model = running()
    with pytest.raises(SessionStateError, match="more steered messages"):
        model.join_steered([user("x")], step="turn-1/model-2")
    model.queue_user_message(QueuedUserMessage(text="x"), steer=True)
    note = FrameworkMessage(role=MessageRole.ASSISTANT, framework_item={}, text="x")
    with pytest.raises(SessionStateError, match="must be a user message"):
        model.join_steered([note], step="turn-1/model-2")
    assert len(model.steered) == 1  # nothing moved


def test_steering_needs_a_running_turn() -> None:
    with pytest.raises(SessionStateError, match="no turn is running"):
        SessionModel().queue_user_message(QueuedUserMessage(text="x"), steer=True)


def test_messages_no_step_took_start_the_next_turn_before_queued_ones() -> None:
    model = running()
    model.queue_user_message(QueuedUserMessage(text="later", message_id="q"))
    model.queue_user_message(QueuedUserMessage(text="s1", message_id="a"), steer=True)
    model.queue_user_message(QueuedUserMessage(text="s2", message_id="b"), steer=True)
    model.complete_turn(TurnCompleted(new_messages=[]))
    # The first starts the next turn; the second waits to join that turn's first step.
    assert [m.text for m in model.queued] == ["s1", "later"]
    assert [m.text for m in model.steered] == ["s2"]
    assert model.turn_steered == []


def test_a_failed_turn_keeps_what_joined_it_in_the_transcript() -> None:
    model = running()
    model.queue_user_message(QueuedUserMessage(text="steer me"), steer=True)
    model.join_steered([user("steer me")], step="turn-1/model-2")
    model.fail_turn("model call failed", user("[note] the turn failed"))
    assert [m.message.text for m in model.messages] == ["first", "steer me", "[note] the turn failed"]
    assert [m.message.role for m in model.messages][1] is MessageRole.USER
    assert model.turn_steered == [] and model.steered == []


def test_a_carried_model_recorded_before_steering_decodes_with_nothing_steered() -> None:
    converter = DataConverter.default.payload_converter
    payload = converter.to_payload(running())
    old = json.loads(payload.data)
    del old["steered"], old["turn_steered"]
    payload.data = json.dumps(old).encode()
    model = converter.from_payload(payload, SessionModel)
    assert (model.steered, model.turn_steered, model.state.turn_id) == ([], [], "turn-1")
