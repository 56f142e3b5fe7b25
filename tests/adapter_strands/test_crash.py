"""A SIGKILL of the worker inside a Strands tool: only that call repeats, the write runs once
(per the tool log), and the conversation ends as the plain agent's does."""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_strands import agents
from tests.adapter_strands.harness import Scenario, run_plain, run_session_with_crash, unique

SCENARIO = Scenario(
    name="crash",
    build=agents.write_agent,
    script=[
        ModelReply(tool_calls=[ScriptedToolCall(id="l1", name="lookup", arguments={"name": "ada"})]),
        ModelReply(
            tool_calls=[
                ScriptedToolCall(
                    id="s1", name="send_email", arguments={"to": "ada@example.com", "body": "hi"}
                )
            ]
        ),
        ModelReply(text="Sent."),
    ],
    turns=["Email Ada 'hi'"],
)


async def test_sigkill_inside_a_tool_repeats_only_that_call(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    key = unique("strands-crash")
    plain = await run_plain(SCENARIO, model_server, f"{key}-plain", tmp_path / "plain")
    crashed = await run_session_with_crash(
        SCENARIO, model_server, key, tmp_path / "session", temporal_address, crash_in="send_email"
    )
    run = crashed.run
    # The write's effect happened once, in the worker started after the kill.
    assert crashed.effect_pids == [crashed.finished_pid]
    assert crashed.finished_pid != crashed.killed_pid
    assert run.tool_runs == plain.tool_runs
    # Only the killed tool step took a second attempt; every model call ran once.
    assert crashed.steps["turn-1/tool/s1"][0] == 2
    assert crashed.steps["turn-1/tool/l1"][0] == 1
    assert run.model_steps == run.model_attempts == 3
    assert run.requests == plain.requests
    assert run.messages == plain.messages
