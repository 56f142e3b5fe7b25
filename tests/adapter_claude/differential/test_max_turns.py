"""``max_turns=1``: the model calls a custom tool, and Claude Code stops before asking again.

Plain (`ClaudeSDKClient`): one model request; the CLI still runs the pre-approved tool, then
ends the turn with a `ResultMessage` of subtype ``error_max_turns`` (an error, no text).
The next turn's request carries the tool's result and the new prompt in one user message.
The session must make the same requests and end the turn the same way: its snapshot's
``framework_state["result"]["subtype"]`` is ``error_max_turns`` (`harness.Run.subtypes`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_claude.differential import custom_tools
from tests.adapter_claude.differential.harness import (
    Scenario,
    assert_same_run,
    run_both,
    tool_results,
    user_texts,
)

CALL = ModelReply.call(ScriptedToolCall("toolu_look", custom_tools.LOOKUP, {"topic": "Temporal"}))


async def test_max_turns_ends_the_turn_after_one_model_request(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="max-turns",
        build=custom_tools.lookup_max_turns,
        script=[CALL, ModelReply.say("Found three entries.")],
        turns=["Look up Temporal"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 1
    assert plain.subtypes == ["error_max_turns"]
    assert plain.errors == ["error_max_turns: None"]
    assert plain.results == [None]
    # The tool ran before the CLI stopped.
    assert plain.tool_runs == [{"name": "lookup", "args": {"topic": "Temporal"}}]
    assert session.subtypes == ["error_max_turns"], "the final snapshot's framework_state"
    assert_same_run(plain, session)


@pytest.mark.xfail(
    strict=True,
    reason="after error_max_turns the session's next request has an assistant 'No response requested.' "
    "between the tool result and the new prompt; plain sends both in one user message",
)
async def test_the_turn_after_max_turns_sends_the_tool_result_with_the_next_prompt(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="max-turns-next",
        build=custom_tools.lookup_max_turns,
        script=[CALL, ModelReply.say("Found three entries.")],
        turns=["Look up Temporal", "What did you find?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 2
    assert plain.subtypes == ["error_max_turns", "success"]
    assert plain.results == [None, "Found three entries."]
    assert tool_results(plain.requests[1])["toolu_look"] == (custom_tools.lookup_text("Temporal"), False)
    last = cast(list[dict[str, Any]], plain.requests[1]["messages"])[-1]
    assert [block["type"] for block in last["content"]] == ["tool_result", "text"]
    assert user_texts(plain.requests[1]) == ["What did you find?"]
    assert session.subtypes == ["error_max_turns", "success"]
    assert_same_run(plain, session)
