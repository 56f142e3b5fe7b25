"""The note a failed turn leaves behind."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionflow import AgentToolCall, AgentToolCallStatus
from sessionflow.kit import build_turn_failure_note
from sessionflow.session.notes import TURN_FAILURE_NOTE_FOOTER, TURN_FAILURE_NOTE_HEADER
from tests.session.helpers import record

S = AgentToolCallStatus
HEADER = "[sessionflow] The previous turn failed after these tool calls ran:"
FOOTER = "Do not repeat these tool calls unless the user asks again."


def test_header_and_footer_text() -> None:
    assert TURN_FAILURE_NOTE_HEADER == HEADER
    assert TURN_FAILURE_NOTE_FOOTER == FOOTER


def test_exact_format_sorted_by_deferral_order_skipping_non_final() -> None:
    records = [
        record(
            S.FAILED,
            tool_call_id="c3",
            tool_name="write",
            arguments='{"path": "/tmp/x"}',
            deferral_order=3,
            error="denied",
        ),
        record(S.RUNNING, tool_call_id="c4", tool_name="slow", deferral_order=4),
        record(
            S.SUCCEEDED,
            tool_call_id="c1",
            tool_name="search",
            arguments='{ "q" : "café",  "n": [1, 2] }',
            deferral_order=1,
            output="found",
        ),
        record(S.PENDING, tool_call_id="c5", deferral_order=5),
        record(
            S.REJECTED,
            tool_call_id="c2",
            tool_name="delete",
            arguments="not json {",
            deferral_order=2,
            rejection_message="no",
        ),
        record(S.OUTCOME_UNKNOWN, tool_call_id="c6", tool_name="pay", arguments="{}", deferral_order=6),
        record(S.AWAITING_APPROVAL, tool_call_id="c7", deferral_order=7),
        record(S.APPROVED, tool_call_id="c8", deferral_order=8),
    ]
    assert build_turn_failure_note(records) == "\n".join(
        [
            HEADER,
            '- search {"q":"café","n":[1,2]} -> succeeded: found',
            "- delete not json { -> rejected: Tool call rejected by the user: no",
            '- write {"path":"/tmp/x"} -> failed: Tool call failed: denied',
            "- pay {} -> outcome_unknown: The outcome of this tool call is unknown: it may or may not have "
            "taken effect. Check before repeating it.",
            FOOTER,
        ]
    )


def test_none_without_final_records() -> None:
    assert build_turn_failure_note([]) is None
    non_final = [record(s, tool_call_id=s.value, deferral_order=i) for i, s in enumerate(S) if not s.is_final]
    assert len(non_final) == 4
    assert build_turn_failure_note(non_final) is None


def test_newlines_in_outcomes_are_flattened() -> None:
    note = build_turn_failure_note(
        [
            record(S.SUCCEEDED, output="line one\nline two\n", deferral_order=1),
            record(S.FAILED, tool_call_id="c2", error="a\nb", deferral_order=2),
        ]
    )
    assert note == "\n".join(
        [
            HEADER,
            "- lookup {} -> succeeded: line one line two ",
            "- lookup {} -> failed: Tool call failed: a b",
            FOOTER,
        ]
    )


def test_multi_line_json_arguments_are_compacted() -> None:
    note = build_turn_failure_note([record(S.SUCCEEDED, arguments='{\n  "a": "x\\ny"\n}', output="ok")])
    assert note == f'{HEADER}\n- lookup {{"a":"x\\ny"}} -> succeeded: ok\n{FOOTER}'


def test_accepts_any_iterable() -> None:
    records = {"c1": record(S.SUCCEEDED, output="ok")}
    assert build_turn_failure_note(records.values()) == f"{HEADER}\n- lookup {{}} -> succeeded: ok\n{FOOTER}"
    assert build_turn_failure_note(r for r in records.values()) is not None


def test_multi_line_non_json_arguments_stay_on_one_line() -> None:
    # Malformed arguments must not break the note's one-line-per-record format.
    note = build_turn_failure_note([record(S.FAILED, arguments='{"path": "a\nb"', error="bad json")])
    assert note is not None
    lines = note.split("\n")
    assert len(lines) == 3, lines
    assert lines[1].startswith('- lookup {"path": "a')
    assert lines[1].endswith(" -> failed: Tool call failed: bad json")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def records_strategy(draw: st.DrawFn) -> list[AgentToolCall]:
    count = draw(st.integers(min_value=0, max_value=10))
    orders = draw(st.permutations(list(range(1, count + 1))))
    result: list[AgentToolCall] = []
    for order in orders:
        status = draw(st.sampled_from(list(S)))
        result.append(
            record(
                status,
                tool_call_id=f"c{order}",
                tool_name=f"tool_{order}",
                arguments=json.dumps(draw(json_values), indent=draw(st.sampled_from([None, 2]))),
                deferral_order=order,
                output=draw(st.text(max_size=20)),
                error=draw(st.none() | st.text(max_size=20)),
                rejection_message=draw(st.none() | st.text(max_size=20)),
            )
        )
    return result


@settings(max_examples=200, deadline=None, database=None)
@given(records=records_strategy())
def test_one_line_per_final_record_in_deferral_order(records: list[AgentToolCall]) -> None:
    final = sorted((r for r in records if r.is_final), key=lambda r: r.deferral_order)
    note = build_turn_failure_note(records)
    if not final:
        assert note is None
        return
    assert note is not None
    lines = note.split("\n")
    assert len(lines) == len(final) + 2
    assert lines[0] == HEADER
    assert lines[-1] == FOOTER
    for line, expected in zip(lines[1:-1], final, strict=True):
        assert line.startswith(f"- {expected.tool_name} ")
        assert f" -> {expected.status.value}: " in line
    assert [line.split(" ", 2)[1] for line in lines[1:-1]] == [r.tool_name for r in final]


def test_a_stopped_turn_names_its_reason_and_detail() -> None:
    assert build_turn_failure_note([], stop_reason="tool_budget", stop_detail="10 calls") == (
        "[sessionflow] The previous turn was stopped (tool_budget): 10 calls"
    )
    assert (
        build_turn_failure_note([], stop_reason="stuck")
        == "[sessionflow] The previous turn was stopped (stuck)."
    )


def test_a_stopped_turn_lists_the_calls_that_ran_before_it_stopped() -> None:
    done = record(S.SUCCEEDED, output="42")
    note = build_turn_failure_note([done], stop_reason="step_budget")
    assert note is not None
    assert note.splitlines()[:2] == [
        "[sessionflow] The previous turn was stopped (step_budget).",
        "These tool calls ran before it stopped:",
    ]
    assert note.splitlines()[-1] == FOOTER
    assert len(note.splitlines()) == 4
