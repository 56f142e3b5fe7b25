"""Hosted MCP (issue 22, item 9): ``HostedMCPTool`` as ``examples/hosted_mcp/approvals.py`` runs it.

The provider lists the server's tools, asks for approval and makes the call itself (the
scripted server answers with those Responses output items). Plain: the example's
``on_approval_request`` decides. Session: the call is a durable step ``gitmcp.<tool>`` that
holds the approval, and the SDK sends the decision back as ``mcp_approval_response`` in the
next model call either way. With ``require_approval="never"`` no step holds anything.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Literal

from agents import Agent, MCPToolApprovalFunctionResult, MCPToolApprovalRequest

from sessionflow.demo import (
    ModelReply,
    ScriptedModelServer,
    mcp_approval_request,
    mcp_call,
    mcp_list_tools,
    mcp_tool,
)
from sessionflow.testing import InvocationLog
from tests.adapter_openai.differential.crash_examples import HOSTED_MCP_LABEL, gitmcp_tool
from tests.adapter_openai.differential.harness import (
    Built,
    Models,
    Scenario,
    assert_same_run,
    run_both,
    run_plain,
    run_session,
    unique,
)

_LABEL = HOSTED_MCP_LABEL
_ARGS = {"question": "Which language is this repo written in?"}
_LISTED = mcp_list_tools(
    "mcpl_1",
    _LABEL,
    [mcp_tool("ask_question", description="Ask about the repo", annotations={"readOnlyHint": True})],
)


class _Approver:
    """The example's `prompt_approval`, answering from the test instead of `input()`."""

    def __init__(self, decisions: list[bool]) -> None:
        self.decisions = decisions
        self.asked: list[tuple[str, str]] = []

    def __call__(self, request: MCPToolApprovalRequest) -> MCPToolApprovalFunctionResult:
        raw: Any = request.data
        self.asked.append((f"{raw.server_label}.{raw.name}", raw.arguments))
        if self.decisions.pop(0):
            return {"approve": True}
        # The example adds `"reason": "User denied"`; a durable rejection sends no reason
        # (see the adapter README, hosted MCP), so this one gives none.
        return {"approve": False}


def _builder(require_approval: Literal["always", "never"], approver: _Approver | None) -> Any:
    def build(models: Models, log: InvocationLog) -> Built:
        agent = Agent[Any](
            name="Assistant",
            tools=[gitmcp_tool(require_approval, approver)],
            model=models.model(),
        )
        return Built(agent)

    return build


async def _approval_run(
    approve: bool, temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    approver = _Approver([approve])
    called = mcp_call(
        "mcp_1",
        _LABEL,
        "ask_question",
        _ARGS,
        output="Rust" if approve else None,
        approval_request_id="mcpr_1",
    )
    scenario = Scenario(
        name=f"hosted-mcp-{'yes' if approve else 'no'}",
        build=_builder("always", approver),
        script=[
            ModelReply(output_items=[_LISTED, mcp_approval_request("mcpr_1", _LABEL, "ask_question", _ARGS)]),
            ModelReply(
                text="It is written in Rust." if approve else "I was not allowed to ask.",
                output_items=[called] if approve else [],
            ),
        ],
        turns=["Which language is the repo I'm in written in?"],
        approvals=[approve],
    )
    # Plain, the example's callback decides (the harness's decisions are for interruptions).
    key = unique("oa-diff-hosted-mcp")
    plain = await run_plain(
        dataclasses.replace(scenario, approvals=()), model_server, f"{key}-plain", tmp_path
    )
    session = await run_session(scenario, model_server, f"{key}-session", tmp_path, temporal_address)

    requests = plain.requests[""]
    assert len(requests) == 2
    assert requests[0]["tools"][0]["require_approval"] == "always"
    answers = [item for item in requests[1]["input"] if item.get("type") == "mcp_approval_response"]
    assert [(a["approval_request_id"], a["approve"]) for a in answers] == [("mcpr_1", approve)]
    assert approver.asked == [
        ("gitmcp.ask_question", '{"question":"Which language is this repo written in?"}')
    ]
    # The example's callback is the plain run's approval; the session's is its durable one.
    assert_same_run(dataclasses.replace(plain, asked=approver.asked), session)


async def test_an_approved_hosted_mcp_call(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    await _approval_run(True, temporal_address, model_server, tmp_path)


async def test_a_rejected_hosted_mcp_call_reaches_the_model_as_the_sdk_sends_it(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    await _approval_run(False, temporal_address, model_server, tmp_path)


async def test_a_hosted_mcp_server_that_never_asks(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    called = mcp_call("mcp_1", _LABEL, "ask_question", _ARGS, output="Rust")
    scenario = Scenario(
        name="hosted-mcp-never",
        build=_builder("never", None),
        script=[ModelReply(text="It is written in Rust.", output_items=[_LISTED, called])],
        turns=["Which language is the repo I'm in written in?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    requests = plain.requests[""]
    assert len(requests) == 1
    assert requests[0]["tools"][0]["require_approval"] == "never"
    assert plain.outputs == ["It is written in Rust."]
    assert plain.asked == []
    assert_same_run(plain, session)
