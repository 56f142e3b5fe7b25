"""quick_start.py's three examples, plain and as a session."""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_claude.differential import sdk_examples
from tests.adapter_claude.differential.harness import (
    Scenario,
    assert_same_run,
    run_both,
    tool_results,
    user_texts,
)


async def test_basic_example(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="quick-basic",
        build=sdk_examples.quick_start_basic,
        script=[ModelReply.say("2 + 2 = 4")],
        turns=["What is 2 + 2?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 1
    assert user_texts(plain.requests[0])[-1] == "What is 2 + 2?"
    assert plain.results == ["2 + 2 = 4"]
    assert_same_run(plain, session)


async def test_with_options_example(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="quick-options",
        build=sdk_examples.quick_start_with_options,
        script=[ModelReply.say("Python is a programming language that is easy to read.")],
        turns=["Explain what Python is in one sentence."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 1
    assert "You are a helpful assistant that explains things simply." in plain.requests[0]["system"]
    assert plain.results == ["Python is a programming language that is easy to read."]
    assert_same_run(plain, session)


async def test_with_tools_example(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``Write`` is pre-approved (``allowed_tools``): plain asks nobody."""
    scenario = Scenario(
        name="quick-tools",
        build=sdk_examples.quick_start_with_tools,
        script=lambda workspace: [
            ModelReply.call(
                ScriptedToolCall(
                    "toolu_write",
                    "Write",
                    {"file_path": str(workspace / "hello.txt"), "content": "Hello, World!"},
                )
            ),
            ModelReply.say("Created hello.txt."),
        ],
        turns=["Create a file called hello.txt with 'Hello, World!' in it"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 2
    assert plain.asked == []
    assert plain.files == {"hello.txt": "Hello, World!"}
    text, is_error = tool_results(plain.requests[1])["toolu_write"]
    assert not is_error and "<workspace>/hello.txt" in text
    assert plain.results == ["Created hello.txt."]
    # Deliberate (adapter README, "Extension points and deliberate differences"): the
    # session's floor asks about the `Write` that plain's `allowed_tools` lets run.
    written = {"content": "Hello, World!", "file_path": "<workspace>/hello.txt"}
    assert_same_run(plain, session, session_asked=[("Write", written)])
