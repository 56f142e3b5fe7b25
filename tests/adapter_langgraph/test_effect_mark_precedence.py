"""The LangGraph adapter's reading of a tool's effect: the `sessionflow.effect` mark over the older metadata."""

from __future__ import annotations

from langchain_core.tools import StructuredTool, tool

import sessionflow
from sessionflow import ToolEffect, ToolPolicy
from sessionflow_langgraph import EFFECT_METADATA_KEY, tool_effect
from sessionflow_langgraph._effects import tool_policy


def _tool(name: str) -> StructuredTool:
    def run(text: str) -> str:
        return text

    return StructuredTool.from_function(run, name=name, description=name)


def test_the_mark_wins_over_the_older_metadata_and_mcp_hints() -> None:
    both = _tool("both")
    both.metadata = {EFFECT_METADATA_KEY: "non_idempotent_write", "readOnlyHint": True}
    assert tool_effect(both) is ToolEffect.NON_IDEMPOTENT_WRITE
    sessionflow.effect(both, "idempotent_write")
    assert tool_effect(both) is ToolEffect.IDEMPOTENT_WRITE
    # The marked tool keeps its metadata as it was.
    assert both.metadata == {EFFECT_METADATA_KEY: "non_idempotent_write", "readOnlyHint": True}


def test_a_mark_below_tool_is_read_from_the_function_and_an_unmarked_tool_has_none() -> None:
    policy = ToolPolicy(effect=ToolEffect.READ, local_timeout=3)

    @tool
    @sessionflow.tool_effect("read", policy=policy)
    def lookup(text: str) -> str:
        """Look it up."""
        return text

    @tool
    async def fetch(text: str) -> str:
        """Fetch it."""
        return text

    assert tool_effect(lookup) is ToolEffect.READ
    assert tool_policy(lookup) == policy
    assert tool_effect(fetch) is None and tool_policy(fetch) is None
    assert isinstance(fetch, StructuredTool) and fetch.coroutine is not None
    sessionflow.effect(fetch.coroutine, "read")
    assert tool_effect(fetch) is ToolEffect.READ
