"""`memory_tools()`: the three memory tools as the model and the session's policy see them."""

from __future__ import annotations

import asyncio

import pytest

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.kit import ToolInvocation, memory_tools
from sessionflow.session.tools import ToolExecutionError

INVOCATION = ToolInvocation(tool_call_id="c", idempotency_key="s/turn-1/c", attempt=1)


def test_the_schemas_admit_exactly_the_documented_arguments() -> None:
    tools = {tool.name: tool for tool in memory_tools()}
    assert list(tools) == ["remember", "recall", "forget"]
    assert dict(tools["remember"].parameters) == {
        "type": "object",
        "properties": {
            "key": {"type": "string", "description": "Lowercase id: letters, digits, '_', '.', '-'"},
            "text": {"type": "string", "description": "The fact, at most a few sentences"},
        },
        "required": ["key", "text"],
        "additionalProperties": False,
    }
    assert dict(tools["recall"].parameters) == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    assert dict(tools["forget"].parameters) == {
        "type": "object",
        "properties": {"key": {"type": "string"}},
        "required": ["key"],
        "additionalProperties": False,
    }


def test_notes_are_written_without_asking_and_recall_may_repeat() -> None:
    tools = {tool.name: tool for tool in memory_tools()}
    write = ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=False)
    assert (
        tools["remember"].policy == write
        and tools["remember"].framework_effect is ToolEffect.IDEMPOTENT_WRITE
    )
    assert tools["forget"].policy == write and tools["forget"].framework_effect is ToolEffect.IDEMPOTENT_WRITE
    assert tools["recall"].policy == ToolPolicy(effect=ToolEffect.READ, allow_repeats=True)
    assert tools["recall"].framework_effect is ToolEffect.READ
    for policy in (tools["remember"].policy, tools["forget"].policy, tools["recall"].policy):
        assert policy is not None and policy.requires_approval is not True


def test_run_outside_the_session_they_say_how_to_enable_them() -> None:
    for tool in memory_tools():
        with pytest.raises(ToolExecutionError, match=r"AgentSessionOptions\(memory=MemoryOptions\(\)\)"):
            asyncio.run(tool.call({"key": "k", "text": "t"}, INVOCATION))
