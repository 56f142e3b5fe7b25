"""Handoff input filters (issue 39, item 7): handoffs/message_filter.py.

The filter drops the tool items and the first two items of the history the Spanish agent
gets. The plain SDK's own history after the run (``result.to_input_list()``, what the
example prints and its next turn would send) holds what the filter kept. Every request of
the session, the later turn's too, is the plain run's: what the filter dropped is hidden
from the model from then on, and its transcript is the SDK's history. The dropped messages
are superseded, not deleted: an audit read (``include_superseded``) still shows them, named
with the turn whose filter dropped them.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_openai.differential import handoff_examples
from tests.adapter_openai.differential.harness import Scenario, assert_same_run, run_both
from tests.adapter_openai.differential.normalise import normalise_items

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
    # The session keeps the four items the filter dropped (turn 1's two, turn 2's tool call
    # and output) for an audit read, superseded by turn 4, whose handoff filtered them.
    dropped = [session.kept[i] for i in (0, 1, 3, 4)]
    assert dropped[0] == {"content": TURNS[0], "role": "user"}
    assert dropped[1]["content"][0]["text"] == "Hi Sora."
    assert (dropped[2]["type"], dropped[2]["name"]) == ("function_call", "random_number_tool")
    assert dropped[3] == {"call_id": "call_random", "output": "42", "type": "function_call_output"}
    assert session.superseded == [(1, 2, 4), (4, 5, 4)]
    assert normalise_items(session.kept) == normalise_items(
        [*dropped[:2], plain.history[0], *dropped[2:], *plain.history[1:]]
    )
    # The transcript is the SDK's history.
    assert_same_run(plain, session)
