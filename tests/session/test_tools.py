"""Tool effects, policies, status moves, ID validation and model-visible outcomes."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionflow import AgentSessionOptions, AgentToolCallStatus, SessionStateError, ToolEffect, ToolPolicy
from sessionflow.kit import (
    InvalidToolCallError,
    ToolExecutionError,
    describe_tool_call_outcome,
    parse_tool_arguments,
    tool_arguments_object,
    validate_tool_call_ids,
)
from sessionflow.session.tools import LEGAL_STATUS_MOVES
from tests.session.helpers import call, record

S = AgentToolCallStatus
FINAL = frozenset({S.SUCCEEDED, S.FAILED, S.REJECTED, S.OUTCOME_UNKNOWN})
EXPECTED_MOVES: dict[AgentToolCallStatus, frozenset[AgentToolCallStatus]] = {
    S.PENDING: frozenset({S.RUNNING, S.REJECTED}),
    S.AWAITING_APPROVAL: frozenset({S.APPROVED, S.REJECTED}),
    S.APPROVED: frozenset({S.RUNNING, S.REJECTED}),
    # A call whose framework rewrote its approved arguments asks again (rebind_approval).
    S.RUNNING: frozenset({S.SUCCEEDED, S.FAILED, S.OUTCOME_UNKNOWN, S.AWAITING_APPROVAL}),
    S.SUCCEEDED: frozenset(),
    S.FAILED: frozenset(),
    S.REJECTED: frozenset(),
    S.OUTCOME_UNKNOWN: frozenset(),
}
ALL_PAIRS = list(itertools.product(list(S), list(S)))

# -- status moves ---------------------------------------------------------------------


def test_legal_moves_table_is_the_documented_state_machine() -> None:
    assert LEGAL_STATUS_MOVES == EXPECTED_MOVES


def test_final_statuses_are_exactly_the_last_four() -> None:
    assert {s for s in S if s.is_final} == FINAL
    assert [s.value for s in S] == [
        "pending",
        "awaiting_approval",
        "approved",
        "running",
        "succeeded",
        "failed",
        "rejected",
        "outcome_unknown",
    ]


@pytest.mark.parametrize(
    ("source", "target"), [p for p in ALL_PAIRS if p[1] in EXPECTED_MOVES[p[0]]], ids=lambda s: s.value
)
def test_every_legal_move_is_accepted(source: AgentToolCallStatus, target: AgentToolCallStatus) -> None:
    before = record(source, output=None)
    after = before.moved_to(target)
    assert after.status is target
    assert after.is_final is (target in FINAL)
    # The original record is immutable and untouched.
    assert before.status is source
    assert (after.tool_call_id, after.tool_name, after.arguments, after.deferral_order) == (
        "c1",
        "lookup",
        "{}",
        1,
    )


@pytest.mark.parametrize(
    ("source", "target"), [p for p in ALL_PAIRS if p[1] not in EXPECTED_MOVES[p[0]]], ids=lambda s: s.value
)
def test_every_other_move_raises(source: AgentToolCallStatus, target: AgentToolCallStatus) -> None:
    before = record(source)
    with pytest.raises(SessionStateError) as caught:
        before.moved_to(target)
    assert caught.value.message == (f"tool call 'c1' cannot move from {source.value!r} to {target.value!r}")


def test_illegal_move_count() -> None:
    legal = sum(len(v) for v in EXPECTED_MOVES.values())
    assert legal == 10
    assert len(ALL_PAIRS) - legal == 54


def test_moved_to_applies_changes() -> None:
    moved = record(S.RUNNING).moved_to(S.FAILED, error="boom")
    assert (moved.status, moved.error, moved.output) == (S.FAILED, "boom", None)


@settings(max_examples=200, deadline=None, database=None)
@given(start=st.sampled_from(list(S)), attempts=st.lists(st.sampled_from(list(S)), max_size=30))
def test_random_move_sequences_respect_finality(
    start: AgentToolCallStatus, attempts: list[AgentToolCallStatus]
) -> None:
    current = record(start)
    became_final_as: AgentToolCallStatus | None = start if start in FINAL else None
    for target in attempts:
        assert current.is_final is (current.status in FINAL)
        legal = target in EXPECTED_MOVES[current.status]
        try:
            moved = current.moved_to(target)
        except SessionStateError:
            assert not legal
            continue
        assert legal
        assert current.status not in FINAL, "a final record moved"
        current = moved
        if current.status in FINAL:
            became_final_as = current.status
    if became_final_as is not None:
        assert current.status is became_final_as
    assert current.is_final is (current.status in FINAL)


# -- tool call IDs --------------------------------------------------------------------

good_ids = st.text(min_size=1, max_size=12).filter(lambda s: bool(s.strip()) and "/" not in s)


@settings(max_examples=200, deadline=None, database=None)
@given(ids=st.lists(good_ids, unique=True, max_size=12), split=st.integers(min_value=0, max_value=12))
def test_valid_ids_pass(ids: list[str], split: int) -> None:
    earlier, batch = ids[:split], ids[split:]
    validate_tool_call_ids([call(i) for i in batch], earlier)
    validate_tool_call_ids((call(i) for i in batch), iter(earlier))


@settings(max_examples=200, deadline=None, database=None)
@given(
    ids=st.lists(good_ids, unique=True, max_size=8),
    blank=st.text(alphabet=" \t\n\r\x0b\x0c\u00a0\u2003", max_size=4),
    position=st.integers(min_value=0, max_value=8),
)
def test_blank_id_raises_naming_its_tool(ids: list[str], blank: str, position: int) -> None:
    calls = [call(i, tool_name="ok_tool") for i in ids]
    calls.insert(min(position, len(calls)), call(blank, tool_name="the_bad_tool"))
    with pytest.raises(InvalidToolCallError) as caught:
        validate_tool_call_ids(calls)
    # A blank ID cannot be shown usefully, so the message names the tool that sent it.
    assert caught.value.message == "tool call ID for tool 'the_bad_tool' is empty"


@settings(max_examples=200, deadline=None, database=None)
@given(
    ids=st.lists(good_ids, unique=True, max_size=8),
    prefix=st.text(max_size=4),
    suffix=st.text(max_size=4),
    position=st.integers(min_value=0, max_value=8),
)
def test_id_with_slash_raises_naming_it(ids: list[str], prefix: str, suffix: str, position: int) -> None:
    bad = f"{prefix}/{suffix}"
    calls = [call(i) for i in ids]
    calls.insert(min(position, len(calls)), call(bad))
    with pytest.raises(InvalidToolCallError) as caught:
        validate_tool_call_ids(calls)
    assert caught.value.message == f"tool call ID {bad!r} contains '/'"
    assert repr(bad) in str(caught.value)


@settings(max_examples=200, deadline=None, database=None)
@given(ids=st.lists(good_ids, unique=True, min_size=1, max_size=8), data=st.data())
def test_duplicate_within_batch_raises_naming_it(ids: list[str], data: st.DataObject) -> None:
    duplicated = data.draw(st.sampled_from(ids))
    later = data.draw(st.integers(min_value=ids.index(duplicated) + 1, max_value=len(ids)))
    batch = [*ids[:later], duplicated, *ids[later:]]
    with pytest.raises(InvalidToolCallError) as caught:
        validate_tool_call_ids([call(i) for i in batch])
    assert caught.value.message == f"tool call ID {duplicated!r} is used twice in one turn"


@settings(max_examples=200, deadline=None, database=None)
@given(ids=st.lists(good_ids, unique=True, min_size=2, max_size=10), data=st.data())
def test_duplicate_of_earlier_id_raises_naming_it(ids: list[str], data: st.DataObject) -> None:
    split = data.draw(st.integers(min_value=1, max_value=len(ids) - 1))
    earlier, batch = ids[:split], ids[split:]
    reused = data.draw(st.sampled_from(earlier))
    batch.insert(data.draw(st.integers(min_value=0, max_value=len(batch))), reused)
    with pytest.raises(InvalidToolCallError) as caught:
        validate_tool_call_ids([call(i) for i in batch], earlier)
    assert caught.value.message == f"tool call ID {reused!r} is used twice in one turn"


def test_empty_batch_is_valid() -> None:
    validate_tool_call_ids([], ["a"])


def test_ids_are_compared_exactly() -> None:
    # Whitespace or case differences make different IDs.
    validate_tool_call_ids([call("a"), call(" a"), call("A"), call("a ")], ["b"])


# -- effects, policies, options -------------------------------------------------------


@pytest.mark.parametrize(
    ("effect", "attempts", "retryable", "approval"),
    [
        (ToolEffect.READ, 3, True, False),
        (ToolEffect.IDEMPOTENT_WRITE, 3, True, False),
        (ToolEffect.NON_IDEMPOTENT_WRITE, 1, False, True),
        (ToolEffect.UNCLASSIFIED, 1, False, True),
    ],
)
def test_tool_effect_defaults(effect: ToolEffect, attempts: int, retryable: bool, approval: bool) -> None:
    assert effect.max_attempts_allowed == attempts
    assert effect.is_retryable is retryable
    assert effect.requires_approval_by_default is approval
    assert ToolPolicy(effect=effect).requires_approval is None
    assert ToolPolicy(effect=effect).is_approval_required is approval


CAUTION_ORDER = [
    ToolEffect.READ,
    ToolEffect.IDEMPOTENT_WRITE,
    ToolEffect.NON_IDEMPOTENT_WRITE,
    ToolEffect.UNCLASSIFIED,
]


def test_unclassified_is_the_most_cautious_effect() -> None:
    # Knowing less about a tool never makes its call look safer than a known write.
    assert sorted(ToolEffect, key=lambda e: e.caution) == CAUTION_ORDER


@pytest.mark.parametrize(("first", "second"), list(itertools.product(CAUTION_ORDER, CAUTION_ORDER)))
def test_more_cautious_keeps_the_later_effect_of_the_order(first: ToolEffect, second: ToolEffect) -> None:
    expected = CAUTION_ORDER[max(CAUTION_ORDER.index(first), CAUTION_ORDER.index(second))]
    assert first.more_cautious(second) is expected
    assert second.more_cautious(first) is expected


@pytest.mark.parametrize("effect", list(ToolEffect))
@pytest.mark.parametrize("explicit", [True, False])
def test_explicit_approval_overrides_the_effect(effect: ToolEffect, explicit: bool) -> None:
    assert ToolPolicy(effect=effect, requires_approval=explicit).is_approval_required is explicit


def test_resolve_tool_policy_explicit_policy_wins() -> None:
    explicit = ToolPolicy(effect=ToolEffect.READ, requires_approval=True)
    options = AgentSessionOptions(
        tool_policies={"search": explicit}, default_tool_effect=ToolEffect.IDEMPOTENT_WRITE
    )
    assert options.resolve_tool_policy("search", ToolEffect.NON_IDEMPOTENT_WRITE) is explicit
    assert options.resolve_tool_policy("search") is explicit


@pytest.mark.parametrize("framework_effect", list(ToolEffect))
def test_resolve_tool_policy_framework_effect_beats_default(framework_effect: ToolEffect) -> None:
    options = AgentSessionOptions(
        tool_policies={"other": ToolPolicy(effect=ToolEffect.READ)},
        default_tool_effect=ToolEffect.IDEMPOTENT_WRITE,
    )
    assert options.resolve_tool_policy("search", framework_effect) == ToolPolicy(effect=framework_effect)


@pytest.mark.parametrize("default_effect", list(ToolEffect))
def test_resolve_tool_policy_falls_back_to_default_effect(default_effect: ToolEffect) -> None:
    options = AgentSessionOptions(default_tool_effect=default_effect)
    assert options.resolve_tool_policy("search") == ToolPolicy(effect=default_effect)
    assert options.resolve_tool_policy("search", None) == ToolPolicy(effect=default_effect)


def test_options_defaults() -> None:
    options = AgentSessionOptions()
    assert options.default_tool_effect is ToolEffect.UNCLASSIFIED
    assert options.resolve_tool_policy("anything").is_approval_required is True
    assert options.interrupt_deadline is None


# -- model-visible outcomes -----------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "changes", "expected"),
    [
        (S.SUCCEEDED, {"output": "42"}, "42"),
        (S.SUCCEEDED, {"output": ""}, ""),
        (S.SUCCEEDED, {}, ""),
        (S.FAILED, {"error": "disk full"}, "Tool call failed: disk full"),
        (S.FAILED, {}, "Tool call failed: unknown error"),
        (S.FAILED, {"error": ""}, "Tool call failed: unknown error"),
        (S.REJECTED, {"rejection_message": "not now"}, "Tool call rejected by the user: not now"),
        (S.REJECTED, {}, "Tool call rejected by the user."),
        (S.REJECTED, {"rejection_message": ""}, "Tool call rejected by the user."),
        (
            S.OUTCOME_UNKNOWN,
            {"error": "worker lost"},
            "The outcome of this tool call is unknown: it may or may not have taken effect (worker lost). "
            "Check before repeating it.",
        ),
        (
            S.OUTCOME_UNKNOWN,
            {},
            "The outcome of this tool call is unknown: it may or may not have taken effect. "
            "Check before repeating it.",
        ),
    ],
)
def test_describe_final_outcomes(status: AgentToolCallStatus, changes: dict[str, str], expected: str) -> None:
    assert describe_tool_call_outcome(replace(record(status), **changes)) == expected


@pytest.mark.parametrize("status", [s for s in S if s not in FINAL], ids=lambda s: s.value)
def test_describe_refuses_non_final(status: AgentToolCallStatus) -> None:
    with pytest.raises(SessionStateError) as caught:
        describe_tool_call_outcome(record(status, output="x"))
    assert caught.value.message == f"tool call 'c1' is not final (status {status.value!r})"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [("", {}), ("{}", {}), ('{"a": [1]}', {"a": [1]})],
)
def test_arguments_parse_into_a_json_object(arguments: str, expected: dict[str, object]) -> None:
    assert record(S.RUNNING, arguments=arguments).parsed_arguments() == expected
    assert call("c1", arguments=arguments).parsed_arguments() == expected
    assert tool_arguments_object(arguments) == expected


@pytest.mark.parametrize(
    ("arguments", "message"),
    [("{not json", "arguments are not valid JSON: "), ("[1, 2]", "arguments must be a JSON object")],
)
def test_arguments_that_are_no_json_object_are_tool_errors(arguments: str, message: str) -> None:
    with pytest.raises(ToolExecutionError, match=re.escape(message)):
        parse_tool_arguments(arguments)
    assert tool_arguments_object(arguments) is None
