"""The transcript's stored message index: recording it, the digests it is checked by."""

from __future__ import annotations

import pytest

from sessionflow import AgentUsage, SessionStateError
from sessionflow.kit import TurnCompleted
from sessionflow.session.bodies import BodyRef
from sessionflow.session.messages import AgentMessage, message_digest
from sessionflow.session.model import SessionModel
from tests.session.helpers import assistant, model_in_turn, user

_REF = BodyRef(driver="local", claim={"key": "index"}, size=1, sha256="0" * 64)
_LATER = BodyRef(driver="local", claim={"key": "later"}, size=1, sha256="1" * 64)


def digest_of(model: SessionModel, count: int) -> str:
    digest = ""
    for stored in model.messages[:count]:
        digest = message_digest(digest, stored)
    return digest


def five_messages() -> SessionModel:
    """Turn 1 stored messages 1-3; turn 2 runs with 4-5 (its prefix is 3)."""
    model = model_in_turn("one")
    model.complete_turn(TurnCompleted(new_messages=[assistant("a"), assistant("b")], usage=AgentUsage()))
    model.begin_turn()
    model.store_user_message(user("two"))
    model.append_message(assistant("c"))
    return model


def test_the_digest_at_any_count_is_the_rolling_digest_of_that_prefix() -> None:
    model = five_messages()
    assert (model.turn_prefix_count, len(model.messages)) == (3, 5)
    for count in range(6):
        assert model.messages_digest_at(count) == digest_of(model, count), count
    assert model.messages_digest_at(0) == ""
    assert model.messages_digest_at(5) == model.digest
    assert model.messages_digest_at(3) == model.turn_prefix_digest


def test_the_digest_at_a_count_uses_the_kept_digests_first() -> None:
    # The kept digests are what the model trusts; the rehash is only for other counts.
    model = five_messages()
    model.digest, model.turn_prefix_digest = "all", "prefix"
    model.index_count, model.index_digest = 2, "index"
    assert model.messages_digest_at(5) == "all"
    assert model.messages_digest_at(3) == "prefix"
    assert model.messages_digest_at(2) == "index"
    assert model.messages_digest_at(4) == digest_of(model, 4)


def test_recording_an_index_keeps_its_reference_count_and_digest() -> None:
    model = five_messages()
    model.record_index(_REF, 2, digest_of(model, 2))
    assert (model.index_ref, model.index_count, model.index_digest) == (_REF, 2, digest_of(model, 2))
    assert [m.sequence for m in model.messages_after_index()] == [3, 4, 5]
    # A newer index replaces it, up to every message.
    model.record_index(_LATER, 5, model.digest)
    assert (model.index_ref, model.index_count) == (_LATER, 5)
    assert model.messages_after_index() == []


def test_an_index_that_is_not_newer_or_past_the_messages_is_ignored() -> None:
    model = five_messages()
    model.record_index(_REF, 3, digest_of(model, 3))
    model.record_index(_LATER, 3, digest_of(model, 3))  # the same count: not newer
    model.record_index(_LATER, 2, digest_of(model, 2))  # older
    model.record_index(_LATER, 6, "whatever")  # more than the session holds
    assert (model.index_ref, model.index_count) == (_REF, 3)


def test_an_index_whose_digest_does_not_match_is_refused() -> None:
    model = five_messages()
    with pytest.raises(SessionStateError, match="stored index of 4 messages does not match"):
        model.record_index(_REF, 4, digest_of(model, 3))
    assert (model.index_ref, model.index_count, model.index_digest) == (None, 0, "")


def test_without_an_index_every_message_is_after_it() -> None:
    model = five_messages()
    assert model.messages_after_index() == model.messages


def test_a_turn_may_not_replace_its_messages_the_index_covers() -> None:
    model = five_messages()
    model.record_index(_REF, 4, digest_of(model, 4))  # covers turn 2's user message
    with pytest.raises(SessionStateError, match="message 4 is not one of turn 'turn-2'"):
        model.replace_turn_messages([AgentMessage(sequence=4, turn_id="x", message=user("redacted"))])
    assert model.messages[3].message.text == "two"
    model.replace_turn_messages([AgentMessage(sequence=5, turn_id="x", message=assistant("redacted"))])
    assert model.messages[4].message.text == "redacted"
    assert model.digest == digest_of(model, 5)
