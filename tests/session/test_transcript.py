"""The stored transcript: a completed turn may replace the messages it stored (a redaction)."""

from __future__ import annotations

import pytest

from sessionflow import AgentUsage, SessionStateError
from sessionflow.kit import TurnCompleted
from sessionflow.session.messages import AgentMessage, message_digest
from sessionflow.session.model import SessionModel
from tests.session.helpers import NOW, assistant, model_in_turn, user


def redacted(sequence: int, text: str) -> AgentMessage:
    return AgentMessage(sequence=sequence, turn_id="ignored", message=user(text))


def rolling(model: SessionModel) -> str:
    digest = ""
    for stored in model.messages:
        digest = message_digest(digest, stored)
    return digest


def completed(*replaced: AgentMessage) -> TurnCompleted:
    return TurnCompleted(
        new_messages=[assistant("done")], usage=AgentUsage(requests=1), replaced_messages=list(replaced)
    )


def test_a_turn_replaces_its_own_user_message_and_the_digest_follows() -> None:
    model = model_in_turn("mail me at ada@example.com")
    model.complete_turn(completed(redacted(1, "mail me at [REDACTED_EMAIL]")))

    assert [m.message.text for m in model.messages] == ["mail me at [REDACTED_EMAIL]", "done"]
    assert [m.turn_id for m in model.messages] == ["turn-1", "turn-1"]
    assert model.digest == rolling(model)


def test_a_later_turn_replaces_only_its_own_message_and_keeps_the_earlier_turn() -> None:
    model = model_in_turn("first")
    model.complete_turn(completed())
    model.begin_turn(NOW)
    model.store_user_message(user("card 4111-1111-1111-1111"))
    model.complete_turn(completed(redacted(3, "card ****-****-****-1111")))

    assert [m.message.text for m in model.messages] == ["first", "done", "card ****-****-****-1111", "done"]
    prefix = ""  # the earlier turn's digest is unchanged
    for stored in model.messages[:2]:
        prefix = message_digest(prefix, stored)
    assert model.messages_digest_at(2) == prefix
    assert model.digest == rolling(model)


def test_a_message_of_an_earlier_turn_is_refused_and_nothing_changes() -> None:
    model = model_in_turn("first")
    model.complete_turn(completed())
    model.begin_turn(NOW)
    model.store_user_message(user("second"))
    before = (list(model.messages), model.digest)

    with pytest.raises(SessionStateError, match="message 1 is not one of turn 'turn-2'"):
        model.complete_turn(completed(redacted(3, "second, redacted"), redacted(1, "first, rewritten")))
    assert (list(model.messages), model.digest) == before


def test_a_sequence_past_the_stored_messages_is_refused() -> None:
    model = model_in_turn("only")
    with pytest.raises(SessionStateError, match="message 2 is not one of turn 'turn-1'"):
        model.complete_turn(completed(redacted(2, "nothing there")))


def test_no_replacement_leaves_the_digest_as_appending_made_it() -> None:
    model = model_in_turn("hello")
    model.complete_turn(completed())
    assert [m.message.text for m in model.messages] == ["hello", "done"]
    assert model.digest == rolling(model)


def superseding(*sequences: int) -> TurnCompleted:
    return TurnCompleted(
        new_messages=[assistant("done")], usage=AgentUsage(requests=1), superseded=list(sequences)
    )


def test_a_turn_supersedes_earlier_messages_which_stay_stored_and_leave_the_reads() -> None:
    model = model_in_turn("first")
    model.complete_turn(completed())
    model.begin_turn(NOW)
    model.store_user_message(user("second"))
    digest_before = model.messages_digest_at(3)
    model.complete_turn(superseding(1, 2))

    # Stored whole, digests unchanged: only reads leave them out.
    assert [m.message.text for m in model.messages] == ["first", "done", "second", "done"]
    assert model.messages_digest_at(3) == digest_before
    assert model.digest == rolling(model)
    assert [(s.first, s.last, s.turn) for s in model.superseded] == [(1, 2, 2)]
    assert [m.sequence for m in model.snapshot("s").messages] == [3, 4]
    assert model.snapshot("s").message_count == 4
    live = model.page(after=0, limit=1, hide_superseded=True)
    assert ([m.sequence for m in live.messages], live.next_after) == ([3], 3)
    rest = model.page(after=3, limit=50, hide_superseded=True)
    assert ([m.sequence for m in rest.messages], rest.next_after) == ([4], None)
    audit = model.page(after=0, limit=50)
    assert [m.sequence for m in audit.messages] == [1, 2, 3, 4]
    assert [(s.first, s.last, s.turn) for s in audit.superseded] == [(1, 2, 2)]
    # A page past the superseded range names none.
    assert model.page(after=2, limit=50).superseded == []


def test_a_turn_may_supersede_its_own_user_message() -> None:
    model = model_in_turn("first")
    model.complete_turn(superseding(1))
    assert [m.sequence for m in model.page(after=0, hide_superseded=True).messages] == [2]


def test_superseding_a_message_that_is_not_stored_fails_and_changes_nothing() -> None:
    model = model_in_turn("mail me at ada@example.com")
    before = (list(model.messages), model.digest)
    with pytest.raises(SessionStateError, match="no message 2"):
        # Checked before the redaction it comes with is applied.
        model.complete_turn(
            TurnCompleted(
                new_messages=[assistant("done")],
                replaced_messages=[redacted(1, "mail me at [REDACTED_EMAIL]")],
                superseded=[2],
            )
        )
    assert (model.messages, model.digest) == before
    assert model.superseded == []
    with pytest.raises(SessionStateError, match="no message 0"):
        model.complete_turn(superseding(0))
