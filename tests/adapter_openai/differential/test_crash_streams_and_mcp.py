"""Streaming, local MCP and hosted MCP (issue 22, items 8 and 9) with a SIGKILL of the worker
inside a tool: the same comparison with the plain run as in `test_crash`.

A local MCP server's tool runs in the server, a child of the worker over stdio: it waits
at the gate there, and dies with the worker (`ToolLog`). The next worker connects its own
server, which runs the call again.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from sessionflow.demo import (
    ModelReply,
    ScriptedModelServer,
    mcp_approval_request,
    mcp_call,
    mcp_list_tools,
    mcp_tool,
)
from tests.adapter_openai.differential import crash_examples, sdk_examples
from tests.adapter_openai.differential.crash import distinct_tool_runs, run_session_with_crash
from tests.adapter_openai.differential.harness import Scenario, assert_same_run, run_plain, unique
from tests.adapter_openai.differential.scripts import TOKYO_WEATHER
from tests.adapter_openai.differential.test_crash import assert_crash_repeated_only_the_effect, crashed
from tests.adapter_openai.differential.test_mcp import READ_AND_DELETE
from tests.adapter_openai.differential.test_streaming import JOKES_SCRIPT, JOKES_STREAM
from tests.redis_server import running_redis


async def test_a_streamed_run_with_a_sigkill_in_its_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """basic/stream_items.py: a client following the session sees what `run_streamed` shows,
    each delta and each tool event once, although the tool's step ran twice and no worker
    answered the follower for a while. The workers are other processes than the follower,
    so live events go through Redis, as in any deployment with more than one process."""
    scenario = Scenario(
        name="stream-items-crash",
        build=sdk_examples.stream_items,
        script=JOKES_SCRIPT,
        turns=["Hello"],
        streamed=True,
    )
    key = unique("oa-crash-stream")
    plain = await run_plain(scenario, model_server, f"{key}-plain", tmp_path / "plain")
    with running_redis() as redis_url:
        session = await run_session_with_crash(
            scenario,
            model_server,
            f"{key}-session",
            tmp_path / "session",
            temporal_address,
            crash_in="how_many_jokes",
            redis_url=redis_url,
        )

    assert plain.stream == JOKES_STREAM
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_jokes")


async def test_a_local_mcp_tool_killed_with_its_worker(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """mcp/filesystem_example.py's shape: ``read_note`` (read-only by its annotation) dies in
    the server with the worker, and the next worker's server reads the note once. The calls
    come one per response here, so nothing else is running when the worker dies (a parallel
    read may finish in the dying worker and, being a read, run again)."""
    read, delete = READ_AND_DELETE[0].tool_calls
    scenario = Scenario(
        name="mcp-crash",
        build=sdk_examples.mcp_notes,
        script=[ModelReply.call(read), ModelReply.call(delete), READ_AND_DELETE[1]],
        turns=["Read the shopping note, then delete it."],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="read_note")

    assert plain.tool_runs == [
        {"name": "read_note", "note": "shopping"},
        {"name": "delete_note", "note": "shopping"},
    ]
    # Each tool ran once: the killed server never finished its read.
    assert session.run.tool_runs == plain.tool_runs
    assert_same_run(plain, session.run)
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_read")


async def test_an_approved_hosted_mcp_call_after_a_sigkill(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """hosted_mcp/approvals.py with ``get_weather``: the tool's worker dies; the next worker
    holds the provider's approval request, and the approval reaches the model as in the
    plain SDK (where the example's callback approves)."""
    label = crash_examples.HOSTED_MCP_LABEL
    args = {"question": "Which language is this repo written in?"}
    listed = mcp_list_tools("mcpl_1", label, [mcp_tool("ask_question", annotations={"readOnlyHint": True})])
    scenario = Scenario(
        name="hosted-mcp-crash",
        build=crash_examples.hosted_mcp_with_weather,
        script=[
            TOKYO_WEATHER[0],
            ModelReply(output_items=[listed, mcp_approval_request("mcpr_1", label, "ask_question", args)]),
            ModelReply(
                text="Sunny in Tokyo; the repo is written in Rust.",
                output_items=[
                    mcp_call(
                        "mcp_1", label, "ask_question", args, output="Rust", approval_request_id="mcpr_1"
                    )
                ],
            ),
        ],
        turns=["What's the weather in Tokyo, and which language is the repo written in?"],
        approvals=[True],
    )
    key = unique("oa-crash-hosted-mcp")
    # Plain, the example's callback approves (the scenario's decisions are the session's).
    plain = await run_plain(
        dataclasses.replace(scenario, approvals=()), model_server, f"{key}-plain", tmp_path
    )
    session = await run_session_with_crash(
        scenario,
        model_server,
        f"{key}-session",
        tmp_path / "session",
        temporal_address,
        crash_in="get_weather",
    )

    answers = [i for i in plain.requests[""][2]["input"] if i.get("type") == "mcp_approval_response"]
    assert [(a["approval_request_id"], a["approve"]) for a in answers] == [("mcpr_1", True)]
    assert session.run.asked == [
        (f"{label}.ask_question", '{"question":"Which language is this repo written in?"}')
    ]
    assert_same_run(dataclasses.replace(plain, asked=session.run.asked), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_tokyo")
