"""Turn records: what each turn did, kept as it runs and after it ends (pure model, no engine)."""

from __future__ import annotations

from datetime import timedelta

from sessionflow import AgentToolCallStatus as S
from sessionflow import AgentUsage, ToolEffect, ToolPolicy, TurnOutcome
from sessionflow.kit import TurnCompleted
from sessionflow.session.events import AgentEventType
from sessionflow.session.guardrails import Budget
from sessionflow.session.model import SessionModel
from sessionflow.session.turn_records import (
    MAX_TURN_CALLS_KEPT,
    MAX_TURN_RECORD_BYTES,
    MAX_TURN_RECORDS,
    MAX_TURN_STEPS_KEPT,
    RECORD_ARGUMENTS_CHARS,
    RECORD_OUTPUT_CHARS,
    STEP_TEXT_CHARS,
    TURN_CALL_TEXT_CHARS,
    TURN_STEP_TEXT_CHARS,
)
from tests.session.helpers import NOW, WRITE, assistant, call, model_in_turn, requested, user

LATER = (NOW + timedelta(seconds=3)).isoformat()


def test_a_running_turn_shows_its_steps_text_and_calls_as_they_end() -> None:
    model = model_in_turn()
    assert model.turn_records_view()[-1].outcome is TurnOutcome.RUNNING
    model.request_tools(
        requested(call("r1"), call("w1", policy=WRITE, tool_name="write")), now=NOW, deadline=None
    )
    step = model.record_model_step("turn-1/model-1", "Let me look around.", ["r1", "w1"], NOW.isoformat())
    model.emit_model_step(step)
    model.move_tool_call("r1", S.RUNNING)
    model.note_tool_started("r1", NOW.isoformat())
    model.move_tool_call("r1", S.SUCCEEDED, output="found it")
    model.note_tool_finished("r1", LATER)

    [running] = model.turn_records_view()
    assert running.turn_id == "turn-1" and running.outcome is TurnOutcome.RUNNING and running.ended_at is None
    assert [(s.step, s.text, s.tool_call_ids) for s in running.steps] == [
        ("turn-1/model-1", "Let me look around.", ["r1", "w1"])
    ]
    read, write = running.tool_calls
    assert (read.tool_name, read.effect, read.status, read.output) == (
        "lookup",
        "read",
        "succeeded",
        "found it",
    )
    assert (read.started_at, read.finished_at) == (NOW.isoformat(), LATER)
    assert read.approval_reason is None
    assert (write.status, write.started_at, write.effect) == (
        "awaiting_approval",
        None,
        "non_idempotent_write",
    )
    assert write.approval_reason == "`non_idempotent_write` calls ask for approval by default"
    [event] = [e for e in model.event_log.events if e.type is AgentEventType.MODEL_STEP_COMPLETED]
    assert event.type is AgentEventType.MODEL_STEP_COMPLETED
    assert event.step_execution_id == "turn-1/model-1"
    assert event.data == {
        "step": "turn-1/model-1",
        "text": "Let me look around.",
        "text_cut": 0,
        "tool_calls": [
            {"tool_call_id": "r1", "tool_name": "lookup"},
            {"tool_call_id": "w1", "tool_name": "write"},
        ],
    }


def test_a_completed_turn_keeps_its_record_with_the_approval_and_its_usage() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("w1", policy=WRITE)), now=NOW, deadline=None)
    model.resolve_interrupt("turn-1:w1", approved=True, rejection_message=None, now=NOW, answered_by="alice")
    model.move_tool_call("w1", S.RUNNING)
    model.move_tool_call("w1", S.SUCCEEDED, output="done")
    model.resume_model()
    model.record_model_step("turn-1/model-2", "All done.", [], LATER)
    model.complete_turn(
        TurnCompleted(new_messages=[assistant("All done.")], usage=AgentUsage(requests=1, output_tokens=7)),
        now=NOW + timedelta(seconds=3),
    )
    [done] = model.turn_records
    assert model.turn_records_view() == [done]
    assert (done.outcome, done.ended_at, done.error, done.note_sequence) == (
        TurnOutcome.COMPLETED,
        LATER,
        None,
        None,
    )
    assert done.user_sequence == 1
    assert done.usage == AgentUsage(requests=2, input_tokens=10, output_tokens=12)
    [write] = done.tool_calls
    assert write.approval is not None and write.approval.approved and write.approval.answered_by == "alice"
    assert [s.text for s in done.steps] == ["All done."]
    # The next turn starts an empty record of its own.
    model.begin_turn(NOW, message_id="m2")
    assert model.turn_records_view()[-1].steps == []
    assert model.turn_records_view()[-1].message_id == "m2"
    assert model.turn_records_view()[-1].usage == AgentUsage()


def test_a_cancelled_turn_keeps_what_it_did_and_names_its_note() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("r1"), call("w1", policy=WRITE)), now=NOW, deadline=None)
    model.record_model_step("turn-1/model-1", "Working on it.", ["r1", "w1"], NOW.isoformat())
    model.move_tool_call("r1", S.RUNNING)
    model.move_tool_call("r1", S.SUCCEEDED, output="ok")
    model.abandon_unstarted_calls("turn cancelled", NOW)
    model.fail_turn("turn cancelled", user("[sessionflow] note"), reason="cancelled", now=NOW)
    [cancelled] = model.turn_records
    assert cancelled.outcome is TurnOutcome.CANCELLED
    assert cancelled.note_sequence == 2 and model.messages[1].message.text == "[sessionflow] note"
    assert [s.text for s in cancelled.steps] == ["Working on it."]
    assert [(c.tool_call_id, c.status, c.error) for c in cancelled.tool_calls] == [
        ("r1", "succeeded", None),
        ("w1", "rejected", "turn cancelled"),
    ]
    # Nobody answered the approval: the record says so.
    approval = cancelled.tool_calls[1].approval
    assert approval is not None and approval.answered_by is None and not approval.approved


def test_how_a_failed_turn_ended_says_failed_cancelled_or_stopped() -> None:
    for reason, outcome in (
        ("error", TurnOutcome.FAILED),
        ("cancelled", TurnOutcome.CANCELLED),
        ("step_budget", TurnOutcome.STOPPED),
    ):
        model = model_in_turn()
        model.fail_turn("it ended", None, reason=reason, now=NOW)
        [record] = model.turn_records
        assert (record.outcome, record.error, record.note_sequence) == (outcome, "it ended", None)


def test_long_texts_are_cut_and_say_how_much() -> None:
    model = model_in_turn()
    big = "x" * (RECORD_ARGUMENTS_CHARS + 5)
    model.request_tools(requested(call("r1", arguments=big)), now=NOW, deadline=None)
    model.record_model_step("turn-1/model-1", "y" * (STEP_TEXT_CHARS + 3), ["r1"], NOW.isoformat())
    model.move_tool_call("r1", S.RUNNING)
    model.move_tool_call("r1", S.SUCCEEDED, output="z" * (RECORD_OUTPUT_CHARS + 2))
    [record] = model.turn_records_view()
    assert (len(record.steps[0].text), record.steps[0].text_cut) == (STEP_TEXT_CHARS, 3)
    call_record = record.tool_calls[0]
    assert (len(call_record.arguments), call_record.arguments_cut) == (RECORD_ARGUMENTS_CHARS, 5)
    assert (len(call_record.output or ""), call_record.output_cut) == (RECORD_OUTPUT_CHARS, 2)


def test_only_the_newest_turns_are_kept() -> None:
    model = SessionModel()
    for number in range(1, MAX_TURN_RECORDS + 3):
        model.begin_turn(NOW)
        model.store_user_message(user(f"message {number}"))
        model.complete_turn(TurnCompleted(new_messages=[assistant()]), now=NOW)
    kept = model.turn_records
    assert len(kept) == MAX_TURN_RECORDS
    assert kept[0].turn_id == "turn-3" and kept[-1].turn_id == f"turn-{MAX_TURN_RECORDS + 2}"


def test_a_framework_approval_and_an_explicit_policy_give_their_own_reasons() -> None:
    model = model_in_turn()
    framework_call = call("f1")
    framework_call = type(framework_call)(
        tool_call_id="f1",
        tool_name="lookup",
        arguments="{}",
        policy=ToolPolicy(effect=ToolEffect.READ),
        framework_approval="required",
    )
    harness = call(
        "h1",
        policy=ToolPolicy(
            effect=ToolEffect.IDEMPOTENT_WRITE,
            requires_approval=True,
            approval_reason="the CLI asks for every write_file",
        ),
    )
    model.request_tools(requested(framework_call, harness), now=NOW, deadline=None)
    reasons = {i.tool_call_id: i.reason for i in model.pending_interrupts}
    assert reasons == {
        "f1": "the framework's own rule asks for approval (the session's policy would not)",
        "h1": "the CLI asks for every write_file",
    }
    assert {c.tool_call_id: c.approval_reason for c in model.turn_records_view()[-1].tool_calls} == reasons


def test_a_turns_cost_is_its_own_at_the_budgets_prices() -> None:
    budget = Budget(input_price=0.5, output_price=2.0)
    model = SessionModel()
    for number, (tokens_in, tokens_out) in enumerate(((10, 1), (4, 3), (0, 0)), start=1):
        model.begin_turn(NOW)
        model.store_user_message(user(f"message {number}"))
        usage = AgentUsage(requests=1, input_tokens=tokens_in, output_tokens=tokens_out)
        model.complete_turn(TurnCompleted(new_messages=[assistant()], usage=usage), budget, now=NOW)
    first, second, third = model.turn_records
    assert (first.cost, second.cost, third.cost) == (7.0, 8.0, 0.0)
    assert second.usage == AgentUsage(requests=1, input_tokens=4, output_tokens=3)
    assert model.cost == 15.0


def _turn_with_steps(model: SessionModel, steps: int) -> None:
    model.begin_turn(NOW)
    model.store_user_message(user())
    for index in range(steps):
        model.record_model_step(f"turn-{model.state.turn_count}/model-{index}", "s" * STEP_TEXT_CHARS, [], "")
    model.complete_turn(TurnCompleted(new_messages=[assistant()]), now=NOW)


def test_the_oldest_records_go_first_when_the_kept_bytes_pass_the_bound() -> None:
    model = SessionModel()
    for _ in range(40):
        _turn_with_steps(model, 1)
    kept = model.turn_records
    sizes = [r.approximate_bytes() for r in kept]
    assert kept[-1].turn_id == "turn-40" and 1 < len(kept) < 40
    assert [r.number for r in kept] == list(range(41 - len(kept), 41))
    # As many as fit: one more (the newest dropped) would pass the bound.
    assert sum(sizes) <= MAX_TURN_RECORD_BYTES < sum(sizes) + sizes[0]


def _turn_with_calls(model: SessionModel, calls: int, *, arguments_chars: int) -> None:
    """A turn whose one model step asks for ``calls`` calls with long arguments, all read."""
    model.begin_turn(NOW)
    model.store_user_message(user())
    ids = [f"c{model.state.turn_count}-{n}" for n in range(calls)]
    model.request_tools(
        requested(*(call(i, arguments="a" * arguments_chars) for i in ids)), now=NOW, deadline=None
    )
    model.record_model_step(f"turn-{model.state.turn_count}/model-1", "", ids, "")
    for i in ids:
        model.move_tool_call(i, S.RUNNING)
        model.move_tool_call(i, S.SUCCEEDED, output="o")


def test_a_record_larger_than_the_bound_is_kept_alone_until_the_next_turn() -> None:
    model = SessionModel()
    _turn_with_steps(model, 1)
    # Many calls, each with an ID list entry, its texts and its fields: over the bound even
    # after the record's own text bounds.
    _turn_with_calls(model, MAX_TURN_CALLS_KEPT, arguments_chars=RECORD_ARGUMENTS_CHARS)
    for index in range(MAX_TURN_STEPS_KEPT):
        model.record_model_step(
            f"turn-2/model-{index + 2}", "s" * (TURN_STEP_TEXT_CHARS // MAX_TURN_STEPS_KEPT), [], ""
        )
    model.complete_turn(TurnCompleted(new_messages=[assistant()]), now=NOW)
    assert model.turn_records[-1].approximate_bytes() > MAX_TURN_RECORD_BYTES
    assert [r.turn_id for r in model.turn_records] == ["turn-2"]
    _turn_with_steps(model, 1)
    assert [r.turn_id for r in model.turn_records] == ["turn-3"]


def test_a_long_turn_lists_its_newest_steps_and_the_oldest_texts_give_way_first() -> None:
    model = model_in_turn()
    for index in range(MAX_TURN_STEPS_KEPT + 5):
        model.record_model_step(f"turn-1/model-{index}", f"{index:05d}" + "t" * 995, [], "")
    record = model.turn_records_view()[-1]
    assert record.steps_dropped == 5
    assert [s.step for s in record.steps] == [f"turn-1/model-{i}" for i in range(5, MAX_TURN_STEPS_KEPT + 5)]
    kept_text = sum(len(s.text) for s in record.steps)
    assert TURN_STEP_TEXT_CHARS - 1000 < kept_text <= TURN_STEP_TEXT_CHARS
    emptied = [s for s in record.steps if not s.text]
    # The oldest lost their texts, each saying how much; the newest kept theirs whole.
    assert emptied == record.steps[: len(emptied)] and all(s.text_cut == 1000 for s in emptied)
    assert (
        record.steps[-1].text.startswith(f"{MAX_TURN_STEPS_KEPT + 4:05d}") and record.steps[-1].text_cut == 0
    )
    # Counted while the turn runs only: the next turn starts its record afresh.
    model.complete_turn(TurnCompleted(new_messages=[assistant()]), now=NOW)
    assert model.turn_records[-1].steps_dropped == 5
    model.begin_turn(NOW)
    model.store_user_message(user())
    assert model.turn_records_view()[-1].steps_dropped == 0 and model.turn_records_view()[-1].steps == []


def test_the_newest_step_keeps_its_text_even_past_the_turns_text_bound() -> None:
    model = model_in_turn()
    for index in range(TURN_STEP_TEXT_CHARS // STEP_TEXT_CHARS + 3):
        model.record_model_step(f"turn-1/model-{index}", "s" * STEP_TEXT_CHARS, [], "")
    steps = model.turn_records_view()[-1].steps
    assert len(steps[-1].text) == STEP_TEXT_CHARS
    assert sum(len(s.text) for s in steps) <= TURN_STEP_TEXT_CHARS


def test_a_long_turn_lists_its_newest_calls_and_the_oldest_call_texts_give_way_first() -> None:
    model = SessionModel()
    _turn_with_calls(model, MAX_TURN_CALLS_KEPT + 3, arguments_chars=1000)
    record = model.turn_records_view()[-1]
    assert record.tool_calls_dropped == 3
    assert (
        record.tool_calls[0].tool_call_id == "c1-3"
        and record.tool_calls[-1].tool_call_id == f"c1-{MAX_TURN_CALLS_KEPT + 2}"
    )
    texts = sum(len(c.arguments) + len(c.output or "") for c in record.tool_calls)
    assert TURN_CALL_TEXT_CHARS - 1001 < texts <= TURN_CALL_TEXT_CHARS
    emptied = [c for c in record.tool_calls if not c.arguments]
    assert emptied == record.tool_calls[: len(emptied)]
    assert all((c.arguments_cut, c.output, c.output_cut) == (1000, "", 1) for c in emptied)
    assert record.tool_calls[-1].arguments == "a" * 1000 and record.tool_calls[-1].output == "o"


def test_the_bounds_are_the_documented_ones() -> None:
    # docs/turn-records.md states them; the records ride in every continue-as-new input.
    assert (STEP_TEXT_CHARS, RECORD_ARGUMENTS_CHARS, RECORD_OUTPUT_CHARS) == (16_000, 8_000, 8_000)
    assert (MAX_TURN_RECORDS, MAX_TURN_RECORD_BYTES) == (100, 512 * 1024)
    assert (MAX_TURN_STEPS_KEPT, MAX_TURN_CALLS_KEPT) == (400, 400)
    assert (TURN_STEP_TEXT_CHARS, TURN_CALL_TEXT_CHARS) == (128_000, 256_000)
