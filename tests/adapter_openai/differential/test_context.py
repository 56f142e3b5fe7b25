"""The run context lives for the whole run (issue 22, item 2): customer_service/main.py's seat change.

``on_seat_booking_handoff`` sets the flight number in the context; ``update_seat`` asserts it
is there, and writes the confirmation and seat into it.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_openai.differential import sdk_examples
from tests.adapter_openai.differential.harness import Scenario, assert_same_run, run_both

SEAT_CHANGE = [
    ModelReply.call(ScriptedToolCall("call_to_seats", "transfer_to_seat_booking_agent", {})),
    ModelReply.call(
        ScriptedToolCall("call_seat", "update_seat", {"confirmation_number": "ABC123", "new_seat": "12A"})
    ),
    ModelReply.say("Your seat is now 12A."),
]


async def test_on_handoff_and_a_tool_change_the_context_a_later_tool_reads(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="context",
        build=sdk_examples.customer_service,
        script=SEAT_CHANGE,
        turns=["Please move me to seat 12A; my confirmation number is ABC123."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.context == {
        "confirmation_number": "ABC123",
        "flight_number": "FLT-123",
        "passenger_name": None,
        "seat_number": "12A",
    }
    assert (
        plain.requests[""][2]["input"][-1]["output"] == "Updated seat to 12A for confirmation number ABC123"
    )
    assert plain.last_agent == "Seat Booking Agent"
    # The handoff's on_handoff callback ran once, before the tool, in both runs.
    assert [run["name"] for run in plain.code_runs] == ["on_seat_booking_handoff", "update_seat"]
    assert_same_run(plain, session)


SEAT_CHANGE_OVER_TWO_TURNS = [
    *SEAT_CHANGE,
    ModelReply.call(
        ScriptedToolCall("call_seat_2", "update_seat", {"confirmation_number": "ABC123", "new_seat": "14C"})
    ),
    ModelReply.say("Your seat is now 14C."),
]


async def test_the_context_carries_into_the_next_turn(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    # Turn 2 starts at the seat booking agent, whose update_seat needs the flight number
    # the handoff of turn 1 set: only a context carried between turns has it.
    scenario = Scenario(
        name="context-turns",
        build=sdk_examples.customer_service,
        script=SEAT_CHANGE_OVER_TWO_TURNS,
        turns=["Please move me to seat 12A; my confirmation number is ABC123.", "Make it 14C instead."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == ["Your seat is now 12A.", "Your seat is now 14C."]
    assert plain.context == {
        "confirmation_number": "ABC123",
        "flight_number": "FLT-123",
        "passenger_name": None,
        "seat_number": "14C",
    }
    assert (
        plain.requests[""][4]["input"][-1]["output"] == "Updated seat to 14C for confirmation number ABC123"
    )
    assert_same_run(plain, session)
