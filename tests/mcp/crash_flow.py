"""The flow of the MCP crash test, built the same way in the test and in its worker children."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from sessionflow import AgentSessionFlow, AgentSessionOptions, ToolEffect
from sessionflow.builtin import ChatCompletionsRunner
from sessionflow.kit import ToolSpec
from sessionflow.mcp import McpToolSource
from tests.harness import FAST
from tests.mcp.helpers import fixture_config

SPEC_NAME = "mcp-flow.json"


def save_flow_spec(state_dir: Path, *, flow_type: str, model_base_url: str, server_state_dir: Path) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        "flow_type": flow_type,
        "model_base_url": model_base_url,
        "server_state_dir": str(server_state_dir),
    }
    (state_dir / SPEC_NAME).write_text(json.dumps(spec))


def mcp_source(state_dir: Path) -> McpToolSource:
    spec = json.loads((state_dir / SPEC_NAME).read_text())
    server = fixture_config(
        Path(spec["server_state_dir"]), enabled=("slow_send", "lookup", "slow_post", "post_status")
    )
    return McpToolSource([server], media_dir=state_dir / "media")


def build_flow(state_dir: Path, tools: Sequence[ToolSpec] = ()) -> AgentSessionFlow:
    """The flow: the built-in runner with the MCP tools; writes need approval by default."""
    spec = json.loads((state_dir / SPEC_NAME).read_text())
    runner = ChatCompletionsRunner(model="m", tools=tools, base_url=spec["model_base_url"], api_key="k")
    options = AgentSessionOptions(timings=FAST, default_tool_effect=ToolEffect.NON_IDEMPOTENT_WRITE)
    return AgentSessionFlow(runner, flow_type=spec["flow_type"], options=options)
