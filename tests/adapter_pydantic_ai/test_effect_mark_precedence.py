"""The Pydantic AI adapter's reading of a tool's effect: the `sessionflow.effect` mark over the older metadata."""

from __future__ import annotations

from pydantic_ai import Agent, Tool
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import FunctionToolset

import sessionflow
from sessionflow import ToolEffect
from sessionflow.kit import declared_effect
from sessionflow_pydantic_ai._effects import framework_effect, marked_tools


def _definition(metadata: dict[str, object]) -> ToolDefinition:
    return ToolDefinition(name="t", metadata=metadata)


def test_the_mark_wins_over_the_older_metadata_and_mcp_annotations() -> None:
    def t(x: int) -> int:
        return x

    metadata: dict[str, object] = {"sessionflow_effect": "non_idempotent_write"}
    assert framework_effect(_definition(metadata), None) is ToolEffect.NON_IDEMPOTENT_WRITE
    assert framework_effect(_definition(metadata), sessionflow.effect(t, "read")) is ToolEffect.READ
    annotations: dict[str, object] = {"annotations": {"readOnlyHint": True}}
    assert framework_effect(_definition(annotations), sessionflow.effect(t, "unclassified")) is (
        ToolEffect.UNCLASSIFIED
    )


def test_marked_tools_are_found_in_the_agents_toolsets_and_run_toolsets() -> None:
    def plain(x: int) -> int:
        return x

    def marked_below(x: int) -> int:
        return x

    def in_toolset(x: int) -> int:
        return x

    agent = Agent(TestModel(), tools=[Tool(plain), sessionflow.effect(Tool(marked_below), "read")])

    @sessionflow.tool_effect("idempotent_write")
    @agent.tool_plain
    def marked_above(x: int) -> int:
        return x

    extra = FunctionToolset[None]([sessionflow.effect(in_toolset, "non_idempotent_write")])
    found = marked_tools([*agent.toolsets, extra])
    assert set(found) == {"marked_below", "marked_above", "in_toolset"}
    assert {name: declared_effect(obj) for name, obj in found.items()} == {
        "marked_below": ToolEffect.READ,
        "marked_above": ToolEffect.IDEMPOTENT_WRITE,
        "in_toolset": ToolEffect.NON_IDEMPOTENT_WRITE,
    }
