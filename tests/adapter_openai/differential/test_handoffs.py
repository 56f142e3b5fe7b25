"""Handoffs carry over turns (issue 22, item 1): customer_service/main.py over two turns.

The example loops with ``current_agent = result.last_agent``: the second question goes to
the FAQ agent the first turn handed off to, not to triage.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.testing import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_openai.differential import sdk_examples
from tests.adapter_openai.differential.harness import Scenario, assert_same_run, run_both

FAQ_OVER_TWO_TURNS = [
    ModelReply.call(ScriptedToolCall("call_to_faq", "transfer_to_faq_agent", {})),
    ModelReply.call(ScriptedToolCall("call_bag", "faq_lookup_tool", {"question": "baggage allowance"})),
    ModelReply.say("One bag under 50 pounds."),
    ModelReply.call(ScriptedToolCall("call_wifi", "faq_lookup_tool", {"question": "wifi"})),
    ModelReply.say("Free wifi: join Airline-Wifi."),
]


async def test_the_second_turn_starts_at_the_last_agent(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="handoff-turns",
        build=sdk_examples.customer_service,
        script=FAQ_OVER_TWO_TURNS,
        turns=["What is the baggage allowance?", "Is there wifi?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.last_agent == "FAQ Agent"
    assert plain.outputs == ["One bag under 50 pounds.", "Free wifi: join Airline-Wifi."]
    # Turn 2's only model calls are the FAQ agent's: it answered without triage.
    assert all("You are an FAQ agent" in r["instructions"] for r in plain.requests[""][3:])
    assert [run["question"] for run in plain.tool_runs] == ["baggage allowance", "wifi"]
    assert_same_run(plain, session)
