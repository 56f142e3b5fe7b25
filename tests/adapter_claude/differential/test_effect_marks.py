"""`sessionflow.effect` on Claude SDK tools: the session reads the mark; the plain SDK does not see it.

Three tools of one in-process SDK server: ``lookup`` marked read below ``@tool`` (on its
handler), ``search`` marked read above it (on the `SdkMcpTool`), ``remove`` unmarked. Under
the session's default effect (unclassified: every call asks) only ``remove`` asks; plain
Claude Code, whose ``can_use_tool`` is asked about every tool it has not pre-approved,
asks about all three, as it does for the same tools unmarked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from claude_agent_sdk import ClaudeAgentOptions, SdkMcpTool, create_sdk_mcp_server, tool

import sessionflow
from sessionflow import ToolEffect
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_claude.differential.harness import (
    Scenario,
    assert_same_run,
    run_plain,
    run_session,
    unique,
)

T = TypeVar("T")


def _tools(log: InvocationLog, *, marked: bool) -> list[SdkMcpTool[Any]]:
    def done(name: str, args: dict[str, Any]) -> dict[str, Any]:
        log.record("tool", name, args=args)
        return {"content": [{"type": "text", "text": f"{name}: {args['q']} ok"}]}

    def read_mark(target: T) -> T:
        return sessionflow.tool_effect("read")(target) if marked else target

    @tool("lookup", "Look a word up", {"q": str})
    @read_mark
    async def lookup(args: dict[str, Any]) -> dict[str, Any]:
        return done("lookup", args)

    @read_mark
    @tool("search", "Search the notes", {"q": str})
    async def search(args: dict[str, Any]) -> dict[str, Any]:
        return done("search", args)

    @tool("remove", "Remove a note", {"q": str})
    async def remove(args: dict[str, Any]) -> dict[str, Any]:
        return done("remove", args)

    return [lookup, search, remove]


def _build(marked: bool) -> Any:
    def build(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
        server = create_sdk_mcp_server(name="kb", tools=_tools(log, marked=marked))
        return ClaudeAgentOptions(cwd=str(workspace), tools=[], mcp_servers={"kb": server})

    return build


_SCRIPT = [
    ModelReply.call(ScriptedToolCall("toolu_1", "mcp__kb__lookup", {"q": "tide"})),
    ModelReply.call(ScriptedToolCall("toolu_2", "mcp__kb__search", {"q": "moon"})),
    ModelReply.call(ScriptedToolCall("toolu_3", "mcp__kb__remove", {"q": "old"})),
    ModelReply.say("done"),
]


def _scenario(marked: bool) -> Scenario:
    return Scenario(
        name="marks" if marked else "unmarked",
        build=_build(marked),
        script=_SCRIPT,
        turns=["look things up, then tidy"],
        default_tool_effect=ToolEffect.UNCLASSIFIED,
    )


async def test_marked_reads_run_without_approval_and_plain_sees_no_difference(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("claude-marks")
    plain_unmarked = await run_plain(_scenario(False), model_server, f"{key}-plain-u", tmp_path / "pu")
    plain = await run_plain(_scenario(True), model_server, f"{key}-plain", tmp_path / "plain")
    session = await run_session(
        _scenario(True), model_server, f"{key}-session", tmp_path / "s", temporal_address
    )

    # The plain SDK runs the marked tools exactly as the unmarked ones.
    assert plain.problems == [] and plain_unmarked.problems == []
    assert plain.requests == plain_unmarked.requests
    assert plain.tool_runs == plain_unmarked.tool_runs
    assert plain.asked == plain_unmarked.asked
    assert plain.results == plain_unmarked.results == ["done"]
    assert [name for name, _ in plain.asked] == ["mcp__kb__lookup", "mcp__kb__search", "mcp__kb__remove"]

    # The session: the two reads run without asking; the unmarked tool asks (and is approved).
    assert session.asked == [("mcp__kb__remove", {"q": "old"})]
    assert_same_run(plain, session, session_asked=[("mcp__kb__remove", {"q": "old"})])
