"""Double-texting: the pure decision, and the session's memory of decided message IDs."""

from __future__ import annotations

import pytest

from sessionflow import AgentState, DoubleTexting, MessageRejectedError, SessionStateError
from sessionflow.session.double_texting import DoubleTextingAction, decide_double_texting, double_texting_of
from sessionflow.session.model import SessionModel
from sessionflow.session.queued_message import QueuedUserMessage

ENQ, INT, REJ = DoubleTexting.ENQUEUE, DoubleTexting.INTERRUPT, DoubleTexting.REJECT
QUEUE, CANCEL, REJECT = (
    DoubleTextingAction.QUEUE,
    DoubleTextingAction.CANCEL_AND_QUEUE,
    DoubleTextingAction.REJECT,
)


@pytest.mark.parametrize("policy", [ENQ, INT, REJ])
def test_an_idle_session_queues_whatever_the_policy(policy: DoubleTexting) -> None:
    assert decide_double_texting(policy, None, turn_running=False, cancel_requested=False, queued=0) is QUEUE
    assert decide_double_texting(ENQ, policy, turn_running=False, cancel_requested=False, queued=0) is QUEUE


@pytest.mark.parametrize(
    ("session", "message", "expected"),
    [
        (ENQ, None, QUEUE),
        (INT, None, CANCEL),
        (REJ, None, REJECT),
        # The message's policy wins over the session's.
        (ENQ, INT, CANCEL),
        (ENQ, REJ, REJECT),
        (REJ, ENQ, QUEUE),
        (REJ, INT, CANCEL),
        (INT, REJ, REJECT),
        (INT, ENQ, QUEUE),
    ],
)
def test_a_running_turn(
    session: DoubleTexting, message: DoubleTexting | None, expected: DoubleTextingAction
) -> None:
    assert (
        decide_double_texting(session, message, turn_running=True, cancel_requested=False, queued=0)
        is expected
    )


def test_a_waiting_message_makes_the_session_busy() -> None:
    # Between turns, with a message about to start one: reject refuses, interrupt has
    # nothing to cancel and queues behind it.
    assert decide_double_texting(REJ, None, turn_running=False, cancel_requested=False, queued=1) is REJECT
    assert decide_double_texting(INT, None, turn_running=False, cancel_requested=False, queued=1) is QUEUE


def test_interrupt_does_not_cancel_twice() -> None:
    assert decide_double_texting(INT, None, turn_running=True, cancel_requested=True, queued=1) is QUEUE


def test_policies_by_name() -> None:
    assert double_texting_of("reject") is REJ
    assert double_texting_of(INT) is INT
    with pytest.raises(
        ValueError, match="double_texting must be one of 'enqueue', 'interrupt', 'reject', 'steer'"
    ):
        double_texting_of("later")


def test_a_rejection_is_a_session_state_error() -> None:
    assert issubclass(MessageRejectedError, SessionStateError)


def running_model(policy: DoubleTexting = ENQ) -> SessionModel:
    model = SessionModel(double_texting=policy)
    model.queue_user_message(QueuedUserMessage(text="first"))
    model.begin_turn()
    model.next_queued()
    return model


def test_the_session_policy_applies_while_a_turn_runs() -> None:
    assert running_model(REJ).decide_user_message("m", None, cancel_requested=False) is REJECT
    assert running_model(INT).decide_user_message("m", None, cancel_requested=False) is CANCEL
    assert running_model(ENQ).decide_user_message("m", REJ, cancel_requested=False) is REJECT


def test_a_rejected_id_is_rejected_again_even_when_idle() -> None:
    model = running_model(REJ)
    assert model.decide_user_message("m", None, cancel_requested=False) is REJECT
    error = model.reject_user_message("m")
    assert isinstance(error, MessageRejectedError) and "nothing was queued" in error.message
    assert model.queued == []
    model.state = AgentState(turn_count=1)  # the turn ended
    assert not model.turn_active
    assert model.decide_user_message("m", None, cancel_requested=False) is REJECT
    assert model.decide_user_message("other", None, cancel_requested=False) is QUEUE


def test_an_accepted_id_is_accepted_again_without_a_second_cancel() -> None:
    model = running_model(INT)
    assert model.decide_user_message("m", None, cancel_requested=False) is CANCEL
    assert model.queue_user_message(QueuedUserMessage(text="second", message_id="m"))
    assert model.decide_user_message("m", REJ, cancel_requested=False) is QUEUE
    assert model.queue_user_message(QueuedUserMessage(text="second", message_id="m"))
    assert [q.text for q in model.queued] == ["second"]


def test_rejected_ids_are_bounded() -> None:
    model = running_model(REJ)
    for n in range(300):
        model.reject_user_message(f"m{n}")
    model.reject_user_message("m299")
    assert len(model.rejected_message_ids) == 256
    assert model.rejected_message_ids[-1] == "m299"
    assert model.reject_user_message(None).message


def test_accepted_ids_are_bounded_to_the_newest_256() -> None:
    model = SessionModel()
    for n in range(257):
        assert model.queue_user_message(QueuedUserMessage(text=f"t{n}", message_id=f"m{n}"))
    assert model.recent_message_ids == [f"m{n}" for n in range(1, 257)]
    # The oldest kept ID's retry is not queued; the forgotten one's is queued again.
    assert model.queue_user_message(QueuedUserMessage(text="again", message_id="m1"))
    assert len(model.queued) == 257
    assert model.queue_user_message(QueuedUserMessage(text="again", message_id="m0"))
    assert len(model.queued) == 258
    assert model.queued[-1].text == "again"


def test_the_turn_facts_are_keyword_only() -> None:
    # Three positional facts of the same types could be passed in the wrong order unnoticed.
    with pytest.raises(TypeError):
        decide_double_texting(ENQ, None, True, False, 0)  # type: ignore[misc]
    with pytest.raises(TypeError):
        SessionModel().decide_user_message("m", None, False)  # type: ignore[misc]


def test_the_snapshot_shows_the_policy() -> None:
    assert SessionModel(double_texting=REJ).snapshot("s").double_texting is REJ
