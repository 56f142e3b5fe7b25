"""The calculator example again, with a SIGKILL of the worker inside a custom tool.

The plain run, then the session on worker children, one of which is killed while the tool
``crash_in`` runs for the first time. The tool's effect happens once, in the second worker,
its step's final attempt is 2, and everything else equals the plain run: requests, results,
approvals, and which tool runs happened (`distinct_tool_runs`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from sessionflow import ToolEffect
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_claude.differential import custom_tools, sdk_examples
from tests.adapter_claude.differential.crash import CrashedRun, distinct_tool_runs, run_session_with_crash
from tests.adapter_claude.differential.harness import (
    Run,
    Scenario,
    assert_same_run,
    run_both,
    run_plain,
    tool_results,
    unique,
)
from tests.adapter_claude.differential.normalise import (
    without_sub_agent_frames,
    without_sub_agent_frames_in_transcript,
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


async def test_two_parallel_calls_sigkill_in_the_second(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """One response with two custom tool calls; the worker dies in the second one's step.

    The first call's step may have finished before the kill or run again after it (a read:
    `distinct_tool_runs`); the second's effect happens once, in the next worker.
    """
    scenario = Scenario(
        name="calc-parallel",
        build=sdk_examples.mcp_calculator,
        script=[
            ModelReply.call(
                ScriptedToolCall("toolu_add", "mcp__calc__add", {"a": 15, "b": 27}),
                ScriptedToolCall("toolu_mul", "mcp__calc__multiply", {"a": 6, "b": 7}),
            ),
            ModelReply.say("15 + 27 = 42 and 6 × 7 = 42"),  # noqa: RUF001 - the example's sign
        ],
        turns=["Calculate 15 + 27 and 6 × 7"],  # noqa: RUF001
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="multiply")

    assert len(plain.requests) == 2
    results = tool_results(plain.requests[1])
    assert results == {
        "toolu_add": ("15 + 27 = 42", False),
        "toolu_mul": ("6 × 7 = 42", False),  # noqa: RUF001
    }
    assert plain.tool_runs == [
        {"name": "add", "args": {"a": 15, "b": 27}},
        {"name": "multiply", "args": {"a": 6, "b": 7}},
    ]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/toolu_mul")
    assert session.steps.get("turn-1/tool/toolu_add", (0, ""))[1] == "completed", session.steps


LOOKUP_SCRIPT = [
    ModelReply.call(ScriptedToolCall("toolu_look", custom_tools.LOOKUP, {"topic": "Temporal"})),
    ModelReply.say("Found three entries."),
]


async def test_a_pretooluse_hooks_rewritten_input_survives_a_sigkill(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """A user PreToolUse hook allows the call and rewrites its input (``updatedInput``); the
    retried step, in the next worker, runs with the rewritten input, not the model's."""
    scenario = Scenario(
        name="pre-hook-rewrite",
        build=custom_tools.lookup_pre_hook_rewrite,
        script=LOOKUP_SCRIPT,
        turns=["Look up Temporal"],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="lookup")

    rewritten = {"name": "lookup", "args": {"topic": "temporal (reviewed)"}}
    assert len(plain.requests) == 2
    assert tool_results(plain.requests[1])["toolu_look"] == (
        custom_tools.lookup_text("temporal (reviewed)"),
        False,
    )
    assert plain.tool_runs == [rewritten]
    assert [h["name"] for h in plain.hooks] == ["rewrite_topic"]
    assert plain.asked == []
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert session.run.tool_runs == [rewritten]
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/toolu_look")


async def test_a_posttooluse_hooks_rewritten_output_after_a_sigkill(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """A user PostToolUse hook replaces the output of a custom tool whose first run was killed
    (``updatedMCPToolOutput``): the model sees the hook's text for the retried run's result."""
    scenario = Scenario(
        name="post-hook-rewrite",
        build=custom_tools.lookup_post_hook_rewrite,
        script=LOOKUP_SCRIPT,
        turns=["Look up Temporal"],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="lookup")

    assert len(plain.requests) == 2
    assert tool_results(plain.requests[1])["toolu_look"] == ("[redacted notes on Temporal]", False)
    assert plain.tool_runs == [{"name": "lookup", "args": {"topic": "Temporal"}}]
    assert [h["name"] for h in plain.hooks] == ["redact_output"]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/toolu_look")


async def test_allowed_tools_pre_approve_an_unannotated_tool_killed_mid_run(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``allowed_tools`` pre-approves a custom tool without annotations; the session's default
    effect is the core's (unclassified), so only that rule keeps the session from asking.

    Nobody is asked in either run. An unclassified tool runs at most once
    (`ToolEffect.max_attempts_allowed`): the step killed at the gate, before the tool's
    effect, is not retried; the call ends ``outcome_unknown`` and the model is told so.
    That is the one deliberate difference from plain, where the tool ran.
    """
    scenario = Scenario(
        name="allowed-unannotated",
        build=custom_tools.lookup_allowed,
        script=LOOKUP_SCRIPT,
        turns=["Look up Temporal"],
        default_tool_effect=ToolEffect.UNCLASSIFIED,
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="lookup")

    assert len(plain.requests) == 2
    assert tool_results(plain.requests[1])["toolu_look"] == (custom_tools.lookup_text("Temporal"), False)
    assert plain.asked == []
    assert plain.results == ["Found three entries."]

    run = session.run
    assert run.problems == []
    assert run.asked == plain.asked, "the allow rule lifted the session's approval"
    assert session.effect_pids == [], "never run again after the kill"
    assert run.tool_runs == []
    step = "turn-1/tool/toolu_look"
    assert session.step_types.get(step) == "sessionflow.CallSingleAttemptTool", session.step_types
    assert session.steps.get(step) == (1, "timed_out"), session.steps
    assert len(run.requests) == len(plain.requests)
    assert run.requests[0] == plain.requests[0]
    unknown, is_error = tool_results(run.requests[1])["toolu_look"]
    assert unknown.startswith("The outcome of this tool call is unknown"), unknown
    assert is_error
    assert run.results == plain.results
    assert run.errors == plain.errors


async def test_allowed_tools_pre_approve_an_unannotated_tool_as_plain_does(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The same options without a crash, under the core's default effect: nobody asked, the
    same requests and results as plain."""
    scenario = Scenario(
        name="allowed-unannotated-plain",
        build=custom_tools.lookup_allowed,
        script=LOOKUP_SCRIPT,
        turns=["Look up Temporal"],
        default_tool_effect=ToolEffect.UNCLASSIFIED,
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.asked == []
    assert plain.tool_runs == [{"name": "lookup", "args": {"topic": "Temporal"}}]
    assert_same_run(plain, session)


async def test_allowed_tools_pre_approved_read_sigkill(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``allowed_tools`` pre-approving the unannotated tool, under the harness's default
    effect (read, `harness.session_flow`): the killed step is retried at attempt 2."""
    scenario = Scenario(
        name="allowed-read",
        build=custom_tools.lookup_allowed,
        script=LOOKUP_SCRIPT,
        turns=["Look up Temporal"],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="lookup")

    assert plain.asked == []
    assert plain.tool_runs == [{"name": "lookup", "args": {"topic": "Temporal"}}]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/toolu_look")


async def test_a_sigkill_in_a_sub_agents_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The worker dies inside a tool a sub-agent called: only that call repeats, as the step
    ``turn-1/tool/toolu_agent.toolu_look`` (grouped under the parent's Agent call)."""
    scenario = Scenario(
        name="sub-agent-crash",
        build=custom_tools.lookup_in_a_sub_agent,
        script=[
            ModelReply.call(
                ScriptedToolCall(
                    "toolu_agent",
                    "Agent",
                    {
                        "description": "Research",
                        "prompt": "Look up Temporal",
                        "subagent_type": "researcher",
                    },
                )
            ),
            ModelReply.call(ScriptedToolCall("toolu_look", custom_tools.LOOKUP, {"topic": "Temporal"})),
            ModelReply.say("Temporal has three entries."),
            ModelReply.say("The researcher found three entries."),
        ],
        turns=["Ask the researcher about Temporal"],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="lookup")

    assert len(plain.requests) == 4
    assert tool_results(plain.requests[2])["toolu_look"] == (custom_tools.lookup_text("Temporal"), False)
    assert plain.results == ["The researcher found three entries."]
    unframed = replace(
        plain,
        requests=[without_sub_agent_frames(r) for r in plain.requests],
        transcript=without_sub_agent_frames_in_transcript(plain.transcript),
    )
    assert_same_run(distinct_tool_runs(unframed), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/toolu_agent.toolu_look")
    assert session.steps.get("turn-1/tool/toolu_agent") == (1, "completed")
