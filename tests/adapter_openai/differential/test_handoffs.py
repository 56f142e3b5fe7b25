"""Handoffs carry over turns (issue 22, item 1): customer_service/main.py over two turns.

The example loops with ``current_agent = result.last_agent``: the second question goes to
the FAQ agent the first turn handed off to, not to triage.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_openai.differential import sdk_examples
from tests.adapter_openai.differential.harness import (
    Built,
    Models,
    Scenario,
    assert_same_run,
    run_both,
    run_session,
)

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


def customer_service_restarting(models: Models, log: InvocationLog) -> Built:
    """customer_service with the adapter's option to start every turn at the triage agent."""
    built = sdk_examples.customer_service(models, log)
    return Built(built.agent, context=built.context, flow_args={"turns_start_at": "starting_agent"})


async def test_an_option_restarts_every_turn_at_the_starting_agent(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    # A deliberate difference from the examples' loop, so the session runs alone here.
    script = [
        *FAQ_OVER_TWO_TURNS[:3],
        ModelReply.call(ScriptedToolCall("call_to_faq_2", "transfer_to_faq_agent", {})),
        *FAQ_OVER_TWO_TURNS[3:],
    ]
    scenario = Scenario(
        name="handoff-restart",
        build=customer_service_restarting,
        script=script,
        turns=["What is the baggage allowance?", "Is there wifi?"],
    )
    session = await run_session(scenario, model_server, "handoff-restart", tmp_path, temporal_address)

    assert session.problems == []
    assert session.outputs == ["One bag under 50 pounds.", "Free wifi: join Airline-Wifi."]
    requests = session.requests[""]
    assert len(requests) == 6
    # Turn 2's first call is triage's again; it hands off to the FAQ agent once more.
    assert "You are a helpful triaging agent" in requests[3]["instructions"]
    assert "You are an FAQ agent" in requests[4]["instructions"]
    assert session.last_agent == "FAQ Agent"
    assert [run["question"] for run in session.tool_runs] == ["baggage allowance", "wifi"]
