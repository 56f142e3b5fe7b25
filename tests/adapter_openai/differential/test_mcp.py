"""Local MCP servers (issue 22, item 9): ``mcp_servers=`` tools as the plain SDK runs them.

Both runs connect their own notes server over stdio (`harness.mcp_connected`); its tools
log every real run. The session's effects come from the tools' MCP annotations
(``read_note`` read-only: a read), the rest from the flow's default (``READ`` here, as the
harness sets it for every test); the server's own ``require_approval`` decides which calls
stop, as in the plain SDK.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_openai.differential import sdk_examples
from tests.adapter_openai.differential.harness import Scenario, assert_same_run, run_both

READ_AND_DELETE = [
    ModelReply.call(
        ScriptedToolCall("call_read", "read_note", {"name": "shopping"}),
        ScriptedToolCall("call_delete", "delete_note", {"name": "shopping"}),
    ),
    ModelReply.say("It said to buy milk; I deleted it."),
]


async def test_a_local_mcp_servers_tools(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="mcp",
        build=sdk_examples.mcp_notes,
        script=READ_AND_DELETE,
        turns=["Read the shopping note, then delete it."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    requests = plain.requests[""]
    assert len(requests) == 2
    assert sorted(tool["name"] for tool in requests[0]["tools"]) == ["delete_note", "read_note"]
    # One response asks for both, and the SDK runs them concurrently
    # (`_FunctionToolBatchExecutor`): their order is not the SDK's to promise.
    assert sorted(plain.tool_runs, key=lambda run: str(run["name"])) == [
        {"name": "delete_note", "note": "shopping"},
        {"name": "read_note", "note": "shopping"},
    ]
    assert plain.outputs == ["It said to buy milk; I deleted it."]
    assert_same_run(plain, session)


async def test_the_mcp_servers_require_approval_stops_the_destructive_call(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="mcp-approval",
        build=sdk_examples.mcp_notes_approval,
        script=READ_AND_DELETE,
        turns=["Read the shopping note, then delete it."],
        approvals=[False],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.asked == [("delete_note", '{"name":"shopping"}')]
    assert plain.tool_runs == [{"name": "read_note", "note": "shopping"}]
    assert plain.requests[""][1]["input"][-1]["output"] == "Tool execution was not approved."
    assert_same_run(plain, session)
