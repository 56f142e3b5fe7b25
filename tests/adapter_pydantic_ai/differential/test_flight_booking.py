"""flight_booking.py's search: a tool returning objects, and the output validator's ModelRetry.

The validator's retry is a model step of its own (a "continue"), as issue 23 item 1 asks.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_pydantic_ai.differential import examples
from tests.adapter_pydantic_ai.differential.harness import Scenario, assert_same_run, run_both

EXTRACTED = [
    {"flight_number": "SFO-AK123", "price": 350, "origin": "SFO", "destination": "ANC", "date": "2025-01-10"},
    {"flight_number": "NYC-LA101", "price": 250, "origin": "SFO", "destination": "ANC", "date": "2025-01-10"},
]
CHEAPEST = EXTRACTED[1]


async def test_flight_booking_search_delegates_the_extraction(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """flight_booking.py's search: its tool runs the extraction agent (a conversation of its own)."""
    scenario = Scenario(
        name="flights",
        build=examples.flight_booking,
        script=[
            ModelReply.call(ScriptedToolCall("call_extract", "extract_flights", {})),
            ModelReply.call(ScriptedToolCall("call_pick", "final_result_FlightDetails", CHEAPEST)),
        ],
        side_scripts={
            "-extract": [
                ModelReply.call(ScriptedToolCall("call_found", "final_result", {"response": EXTRACTED}))
            ]
        },
        turns=["Find me a flight from SFO to ANC on 2025-01-10"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [CHEAPEST]
    assert plain.tool_runs == [{"name": "extract_flights", "flight_count": 2}]
    assert len(plain.requests["-extract"]) == 1
    assert plain.requests["-extract"][0]["messages"][-1]["content"] == examples.FLIGHTS_WEB_PAGE
    assert_same_run(plain, session)


async def test_flight_booking_output_validator_asks_for_another_flight(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """validate_output raises ModelRetry for a flight to FAI; the model then picks one to ANC."""
    wrong = {
        "flight_number": "SFO-AK456",
        "price": 370,
        "origin": "SFO",
        "destination": "FAI",
        "date": "2025-01-10",
    }
    scenario = Scenario(
        name="flights-retry",
        build=examples.flight_booking,
        script=[
            ModelReply.call(ScriptedToolCall("call_extract", "extract_flights", {})),
            ModelReply.call(ScriptedToolCall("call_wrong", "final_result_FlightDetails", wrong)),
            ModelReply.call(ScriptedToolCall("call_pick", "final_result_FlightDetails", CHEAPEST)),
        ],
        side_scripts={
            "-extract": [
                ModelReply.call(ScriptedToolCall("call_found", "final_result", {"response": EXTRACTED}))
            ]
        },
        turns=["Find me a flight from SFO to ANC on 2025-01-10"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [CHEAPEST]
    assert len(plain.requests[""]) == 3
    retry = plain.requests[""][2]["messages"][-1]
    assert (retry["role"], retry["tool_call_id"]) == ("tool", "call_wrong")
    assert "Flight should have destination ANC, not FAI" in retry["content"]
    assert_same_run(plain, session)
