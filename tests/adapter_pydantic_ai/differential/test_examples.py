"""Differential tests of Pydantic AI's examples (examples.py) whose session runs as plain Pydantic AI.

weather_agent.py and flight_booking.py have files of their own.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_pydantic_ai.differential import examples
from tests.adapter_pydantic_ai.differential.harness import Scenario, assert_same_run, run_both

BALANCE_ADVICE = {
    "support_advice": "Hello John, your current account balance, including pending transactions, is $123.45.",
    "block_card": False,
    "risk": 1,
}
LOST_CARD_ADVICE = {
    "support_advice": "I'm sorry to hear that, John. We are temporarily blocking your card.",
    "block_card": True,
    "risk": 8,
}


async def test_bank_support_balance_then_a_lost_card(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """bank_support.py's two questions, as one conversation: a tool, then structured answers."""
    scenario = Scenario(
        name="bank",
        build=examples.bank_support,
        script=[
            ModelReply.call(ScriptedToolCall("call_balance", "customer_balance", {})),
            ModelReply.call(ScriptedToolCall("call_out_1", "final_result", BALANCE_ADVICE)),
            ModelReply.call(ScriptedToolCall("call_out_2", "final_result", LOST_CARD_ADVICE)),
        ],
        turns=["What is my balance?", "I just lost my card!"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [BALANCE_ADVICE, LOST_CARD_ADVICE]
    assert plain.tool_runs == [{"name": "customer_balance", "customer_id": 123}]
    assert len(plain.requests[""]) == 3
    assert_same_run(plain, session)


async def test_flight_booking_find_seat_asks_again(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """flight_booking.py's find_seat loop: a preference it cannot extract, then one it can."""
    scenario = Scenario(
        name="seat",
        build=examples.flight_seat_preference,
        script=[
            ModelReply.call(ScriptedToolCall("call_failed", "final_result_Failed", {})),
            ModelReply.call(
                ScriptedToolCall("call_seat", "final_result_SeatPreference", {"row": 1, "seat": "A"})
            ),
        ],
        turns=["Somewhere nice, please.", "A window seat in the front row."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [{}, {"row": 1, "seat": "A"}]
    assert plain.tool_runs == []
    assert [len(r["messages"]) for r in plain.requests[""]] == [2, 5]
    assert_same_run(plain, session)


async def test_roulette_wheel_a_winner_then_a_loser(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """roulette_wheel.py's two bets: the tool reads the winning number from deps; a bool output."""
    scenario = Scenario(
        name="roulette",
        build=examples.roulette_wheel,
        script=[
            ModelReply.call(ScriptedToolCall("call_bet_18", "roulette_wheel", {"square": 18})),
            ModelReply.call(ScriptedToolCall("call_out_18", "final_result", {"response": True})),
            ModelReply.call(ScriptedToolCall("call_bet_5", "roulette_wheel", {"square": 5})),
            ModelReply.call(ScriptedToolCall("call_out_5", "final_result", {"response": False})),
        ],
        turns=["Put my money on square eighteen", "I bet five is the winner"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [True, False]
    assert plain.tool_runs == [
        {"name": "roulette_wheel", "square": 18},
        {"name": "roulette_wheel", "square": 5},
    ]
    assert [r["messages"][-1]["content"] for r in (plain.requests[""][1], plain.requests[""][3])] == [
        "winner",
        "loser",
    ]
    assert_same_run(plain, session)


async def test_pydantic_model_structured_output(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """pydantic_model.py: one request, answered with the output tool."""
    chicago = {"city": "Chicago", "country": "United States"}
    scenario = Scenario(
        name="pydantic-model",
        build=examples.pydantic_model,
        script=[ModelReply.call(ScriptedToolCall("call_city", "final_result", chicago))],
        turns=["The windy city in the US of A."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [chicago]
    assert [t["function"]["name"] for t in plain.requests[""][0]["tools"]] == ["final_result"]
    assert_same_run(plain, session)
