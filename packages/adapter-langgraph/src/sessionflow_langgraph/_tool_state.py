"""The ready-made agent's tool state: the keys sessionflow tool sources set, shown to its model."""

from __future__ import annotations

import json
from typing import Annotated, Any

from langgraph.graph import MessagesState

__all__ = ["TOOL_STATE_KEY", "AgentState", "merge_tool_state", "tool_state_line"]

TOOL_STATE_KEY = "sessionflow_tool_state"


def merge_tool_state(current: dict[str, Any] | None, update: dict[str, Any] | None) -> dict[str, Any]:
    """A shallow update: of two calls setting one key, the one applied later (in model order) wins."""
    return {**(current or {}), **(update or {})}


class AgentState(MessagesState, total=False):
    """`MessagesState` plus the tool state of `sessionflow.kit.ToolOutput` updates."""

    sessionflow_tool_state: Annotated[dict[str, Any], merge_tool_state]


def tool_state_line(state: dict[str, Any]) -> str | None:
    """What the model is shown of the tool state (as the builtin runner words it), or None."""
    values: dict[str, Any] = state.get(TOOL_STATE_KEY) or {}
    return f"Tool state: {json.dumps(values, ensure_ascii=False, sort_keys=True)}" if values else None
