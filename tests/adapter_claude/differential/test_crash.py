"""The calculator example again, with a SIGKILL of the worker inside a custom tool.

The plain run, then the session on worker children, one of which is killed while the tool
``crash_in`` runs for the first time. The tool's effect happens once, in the second worker,
its step's final attempt is 2, and everything else equals the plain run: requests, results,
approvals, and which tool runs happened (`distinct_tool_runs`).
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.testing import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_claude.differential import sdk_examples
from tests.adapter_claude.differential.crash import CrashedRun, distinct_tool_runs, run_session_with_crash
from tests.adapter_claude.differential.harness import (
    Run,
    Scenario,
    assert_same_run,
    run_plain,
    tool_results,
    unique,
)


async def crashed(
    scenario: Scenario, server: ScriptedModelServer, temporal_address: str, tmp_path: Path, *, crash_in: str
) -> tuple[Run, CrashedRun]:
    key = unique(f"claude-crash-{scenario.name}")
    plain = await run_plain(scenario, server, f"{key}-plain", tmp_path / "plain")
    session = await run_session_with_crash(
        scenario, server, f"{key}-session", tmp_path / "session", temporal_address, crash_in=crash_in
    )
    return plain, session


def assert_crash_repeated_only_the_effect(session: CrashedRun, step: str) -> None:
    assert session.effect_pids == [session.finished_pid], "the effect happened once, after the restart"
    assert session.steps.get(step) == (2, "completed"), session.steps


async def test_a_calculator_tool_sigkill(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="calc",
        build=sdk_examples.mcp_calculator,
        script=[
            ModelReply.call(ScriptedToolCall("toolu_add", "mcp__calc__add", {"a": 15, "b": 27})),
            ModelReply.say("15 + 27 = 42"),
        ],
        turns=["Calculate 15 + 27"],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="add")

    assert len(plain.requests) == 2
    assert tool_results(plain.requests[1])["toolu_add"] == ("15 + 27 = 42", False)
    assert plain.tool_runs == [{"name": "add", "args": {"a": 15, "b": 27}}]
    assert plain.results == ["15 + 27 = 42"]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/toolu_add")


async def test_a_sigkill_in_the_second_turns_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The crash in turn 2: the first turn's transcript reaches the next worker's model step."""
    scenario = Scenario(
        name="calc-two-turns",
        build=sdk_examples.mcp_calculator,
        script=[
            ModelReply.call(ScriptedToolCall("toolu_add", "mcp__calc__add", {"a": 15, "b": 27})),
            ModelReply.say("15 + 27 = 42"),
            ModelReply.call(ScriptedToolCall("toolu_pow", "mcp__calc__power", {"base": 2, "exponent": 8})),
            ModelReply.say("2^8 = 256"),
        ],
        turns=["Calculate 15 + 27", "What is 2 raised to the power of 8?"],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="power")

    assert len(plain.requests) == 4
    assert tool_results(plain.requests[3])["toolu_pow"] == ("2^8 = 256", False)
    assert plain.results == ["15 + 27 = 42", "2^8 = 256"]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-2/tool/toolu_pow")
