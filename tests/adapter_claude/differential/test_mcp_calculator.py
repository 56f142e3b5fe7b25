"""mcp_calculator.py: an in-process SDK MCP server (``calc``) with pre-approved tools."""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_claude.differential import sdk_examples
from tests.adapter_claude.differential.harness import Scenario, assert_same_run, run_both, tool_results

CALCULATOR = Scenario(
    name="calc",
    build=sdk_examples.mcp_calculator,
    script=[
        ModelReply.call(ScriptedToolCall("toolu_add", "mcp__calc__add", {"a": 15, "b": 27})),
        ModelReply.say("15 + 27 = 42"),
        ModelReply.call(ScriptedToolCall("toolu_div", "mcp__calc__divide", {"a": 100, "b": 0})),
        ModelReply.say("You cannot divide by zero."),
    ],
    turns=["Calculate 15 + 27", "What is 100 divided by 0?"],
)


async def test_calculator_tools_and_an_error_result(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    plain, session = await run_both(CALCULATOR, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 4
    offered = plain.requests[0]["tools"]
    assert {f"mcp__calc__{name}" for name in sdk_examples.CALCULATOR_TOOLS} <= set(offered)
    assert tool_results(plain.requests[1])["toolu_add"] == ("15 + 27 = 42", False)
    assert tool_results(plain.requests[3])["toolu_div"] == ("Error: Division by zero is not allowed", True)
    assert sorted(run["name"] for run in plain.tool_runs) == ["add", "divide"]
    assert plain.asked == []
    assert plain.results == ["15 + 27 = 42", "You cannot divide by zero."]
    assert_same_run(plain, session)
