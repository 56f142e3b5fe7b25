"""Streaming (issue 22, item 8): basic/stream_items.py, `Runner.run_streamed` against the session's events.

The stream compared is what a client shows: reasoning and text deltas (joined while they
follow each other), each tool call the model made and each tool result, by call ID.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_openai.differential import sdk_examples
from tests.adapter_openai.differential.harness import Scenario, assert_same_run, run_both

JOKES = "Here are four jokes: one, two, three, four."
JOKES_SCRIPT = [
    ModelReply.call(ScriptedToolCall("call_jokes", "how_many_jokes", {}), reasoning="Count first."),
    ModelReply.say(
        JOKES, ["Here are four jokes: ", "one, two, ", "three, four."], reasoning="Now tell them."
    ),
]
JOKES_STREAM = [
    ("reasoning", "Count first."),
    ("tool_called", "call_jokes"),
    ("tool_output", "call_jokes"),
    ("reasoning", "Now tell them."),
    ("text", JOKES),
]
"""What a client of the run is shown: reasoning, the tool call and its output, the answer."""


async def test_run_streamed_events_are_the_sessions_events(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="stream-items",
        build=sdk_examples.stream_items,
        script=JOKES_SCRIPT,
        turns=["Hello"],
        streamed=True,
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.stream == JOKES_STREAM
    assert all(request["stream"] is True for request in plain.requests[""])
    assert plain.outputs == [JOKES]
    assert_same_run(plain, session)
