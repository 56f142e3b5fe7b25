"""MCP servers as toolsets (issue 23, item 4): `pydantic_ai.mcp.MCPToolset` over stdio.

The server is `tests/adapter_openai/mcp_server.py`: ``read_note`` (read-only, idempotent
hints) and ``delete_note`` (destructive). The plain agent and the session offer and call
its tools alike. The session takes each call's effect from the MCP annotations
(``readOnlyHint`` is a read: it runs at once and is retried like one); the mapping is the
core's (`sessionflow.kit.effect_from_mcp_annotations`), tested with the MCP tool source.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import (
    Built,
    Models,
    Scenario,
    assert_same_run,
    run_both,
)

ROOT = Path(__file__).resolve().parents[3]


def notes_agent(models: Models, log: InvocationLog) -> Built:
    """The MCP docs' agent shape: ``Agent(model, toolsets=[server])``, on the notes server."""
    server = MCPToolset(
        StdioTransport(
            command=sys.executable,
            args=["-m", "tests.adapter_openai.mcp_server"],
            cwd=str(ROOT),
            env={**os.environ, "MCP_TEST_LOG": str(log.path)},
        ),
        # A hang guard, not a deadline: on a loaded machine the server's Python start-up can
        # outlast the default initialisation timeout (CI saw it fail the plain run once).
        init_timeout=120,
    )
    return Built(agent=Agent(models.model(), toolsets=[server]))


async def test_an_mcp_servers_tools_run_as_in_the_plain_agent(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="mcp-read",
        build=notes_agent,
        script=[
            ModelReply.call(ScriptedToolCall("c1", "read_note", {"name": "shopping"})),
            ModelReply.say("Your shopping note says: buy milk."),
        ],
        turns=["What does my shopping note say?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    tools = sorted(t["function"]["name"] for t in plain.requests[""][0]["tools"])
    assert tools == ["delete_note", "read_note"]
    assert plain.tool_runs == [{"name": "read_note", "note": "shopping"}]
    assert plain.requests[""][1]["messages"][-1]["content"] == "note shopping: buy milk"
    assert_same_run(plain, session)
