"""Carry between turns in the session model: what a completed turn commits, and what keeps it."""

from __future__ import annotations

from temporalio.converter import DataConverter

from sessionflow import AgentUsage, StopReason
from sessionflow.kit import TurnCompleted
from sessionflow.session.bodies import BodyRef
from sessionflow.session.carry import CARRY_PREVIEW_CHARS, carry_preview
from sessionflow.session.model import SessionModel
from tests.session.helpers import NOW, assistant, call, model_in_turn, requested, user

REF = BodyRef(driver="test", claim={"key": "k"}, size=3_000_000, sha256="d")


def done(carry: str | None = None, *, carry_ref: BodyRef | None = None) -> TurnCompleted:
    return TurnCompleted(
        new_messages=[assistant()], usage=AgentUsage(requests=1), carry=carry, carry_ref=carry_ref
    )


def next_turn(model: SessionModel) -> None:
    model.begin_turn(NOW)
    model.store_user_message(user("next"))


def test_a_completed_turn_commits_its_carry_and_the_snapshot_shows_it() -> None:
    model = model_in_turn()
    assert model.snapshot("s").carried_state_preview is None
    model.complete_turn(done("agent=billing"))
    assert (model.carried_state, model.carried_state_ref) == ("agent=billing", None)
    snapshot = model.snapshot("s")
    assert snapshot.carried_state_preview == "agent=billing"
    assert snapshot.carried_state_by_reference is False


def test_the_next_carry_replaces_it_and_none_clears_it() -> None:
    model = model_in_turn()
    model.complete_turn(done("one"))
    next_turn(model)
    model.complete_turn(done("two"))
    assert model.carried_state == "two"
    next_turn(model)
    model.complete_turn(done(None))
    assert (model.carried_state, model.carried_state_ref) == (None, None)
    assert model.snapshot("s").carried_state_preview is None


def test_an_empty_carry_is_no_carry() -> None:
    model = model_in_turn()
    model.complete_turn(done("one"))
    next_turn(model)
    model.complete_turn(done(""))
    assert model.carried_state is None


def test_a_failed_turn_keeps_the_carry_it_started_with() -> None:
    model = model_in_turn()
    model.complete_turn(done("kept"))
    next_turn(model)
    model.request_tools(requested(call("a")), now=NOW, deadline=None)
    model.fail_turn("model call failed: boom", None)
    assert model.carried_state == "kept"
    next_turn(model)
    model.fail_turn("turn cancelled", None, reason="cancelled")
    assert model.carried_state == "kept"
    next_turn(model)
    model.fail_turn("turn stopped", None, reason=StopReason.STEP_BUDGET.value)
    assert model.carried_state == "kept"
    assert model.snapshot("s").carried_state_preview == "kept"


def test_a_stored_carry_keeps_its_reference_and_its_preview() -> None:
    model = model_in_turn()
    model.complete_turn(done("preview of a big one", carry_ref=REF))
    assert (model.carried_state, model.carried_state_ref) == ("preview of a big one", REF)
    snapshot = model.snapshot("s")
    assert snapshot.carried_state_by_reference is True
    assert snapshot.carried_state_preview == "preview of a big one"
    next_turn(model)
    model.complete_turn(done("small"))
    assert (model.carried_state, model.carried_state_ref) == ("small", None)


def test_the_snapshot_preview_is_bounded_and_says_it_was_cut() -> None:
    model = model_in_turn()
    model.complete_turn(done("x" * 100_000))
    preview = model.snapshot("s").carried_state_preview
    assert preview is not None and preview.startswith("x" * CARRY_PREVIEW_CHARS)
    assert len(preview) < CARRY_PREVIEW_CHARS + 100
    assert preview.endswith("[... cut: 97,952 more characters are stored with the session]")
    assert carry_preview("short") == "short"


def test_the_carry_survives_the_models_round_trip_through_continue_as_new() -> None:
    # Continue-as-new carries the whole model through the payload converter.
    model = model_in_turn()
    model.complete_turn(done("small"))
    converter = DataConverter.default.payload_converter
    back = converter.from_payload(converter.to_payload(model), SessionModel)
    assert (back.carried_state, back.carried_state_ref) == ("small", None)
    model.carried_state, model.carried_state_ref = "preview", REF
    back = converter.from_payload(converter.to_payload(model), SessionModel)
    assert (back.carried_state, back.carried_state_ref) == ("preview", REF)


def test_a_model_recorded_before_carry_reads_as_carrying_nothing() -> None:
    converter = DataConverter.default.payload_converter
    payload = converter.to_payload({"messages": [], "stopped": False})
    old = converter.from_payload(payload, SessionModel)
    assert (old.carried_state, old.carried_state_ref) == (None, None)
