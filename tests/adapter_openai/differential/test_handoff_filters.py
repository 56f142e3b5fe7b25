"""Handoff input filters (issue 39, item 7): handoffs/message_filter.py.

The filter drops the tool items and the first two items of the history the Spanish agent
gets. The plain SDK's own history after the run (``result.to_input_list()``, what the
example prints and its next turn would send) holds what the filter kept. Every request of
the session, the later turn's too, is the plain run's: what the filter dropped is hidden
from the model from then on. The session keeps its stored messages whole, though (it never
rewrites what it stored): a documented difference, asserted item by item below.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_openai.differential import handoff_examples
from tests.adapter_openai.differential.harness import Scenario, assert_same_run, run_both

TURNS = [
    "Hi, my name is Sora.",
    "Can you generate a random number between 0 and 100?",
    "I live in New York City. What's the population of the city?",
    "Por favor habla en español. ¿Cuál es mi nombre y dónde vivo?",
]
SCRIPT = [
    ModelReply.say("Hi Sora."),
    ModelReply.call(ScriptedToolCall("call_random", "random_number_tool", {"max": 100})),
    ModelReply.say("Here's a random number: 42."),
    ModelReply.say("About 8.6 million people."),
    ModelReply.call(ScriptedToolCall("call_spanish", "transfer_to_spanish_assistant", {})),
    ModelReply.say("Vives en Nueva York."),
]


async def test_the_filtered_history_is_the_stored_transcript(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="message-filter",
        build=handoff_examples.message_filter,
        script=[*SCRIPT, ModelReply.say("De nada.")],
        turns=[*TURNS, "Gracias."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # The filter ran once, on the 9 items before the handoff.
    assert [run["name"] for run in plain.code_runs] == [
        "random_number_tool",
        "spanish_handoff_message_filter",
    ]
    # The example's final messages: no tool items, not the first two; then turn 5.
    assert [item.get("role") or item.get("type") for item in plain.history] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    # Deliberate: the session's stored messages also keep the four items the filter dropped
    # (turn 1's two, turn 2's tool call and output), hidden from every later model call.
    dropped = [session.history[i] for i in (0, 1, 3, 4)]
    assert dropped[0] == {"content": TURNS[0], "role": "user"}
    assert dropped[1]["content"][0]["text"] == "Hi Sora."
    assert (dropped[2]["type"], dropped[2]["name"]) == ("function_call", "random_number_tool")
    assert dropped[3] == {"call_id": "call_random", "output": "42", "type": "function_call_output"}
    kept = [item for i, item in enumerate(session.history) if i not in (0, 1, 3, 4)]
    # What the SDK's history holds is what the session shows the model: the same items.
    assert len(kept) == len(plain.history)
    assert_same_run(
        plain, session, session_history=[*dropped[:2], plain.history[0], *dropped[2:], *plain.history[1:]]
    )
