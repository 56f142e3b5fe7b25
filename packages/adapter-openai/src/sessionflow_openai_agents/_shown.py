"""What the model is shown besides the conversation: a harness's carry and the tool state.

Both are worded as the builtin runner words them, as system items of the run's input
(the Agents SDK's instructions stay the agent's own): the tool state that neutral tool
specs set (`sessionflow.kit.ToolOutput.state_update`) first, and a carry hook's carry just
before the turn's own messages, so the prefix before it stays cacheable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from agents import TResponseInputItem

from sessionflow.kit import AgentTurnContext

__all__ = ["CARRIED_PREFIX", "shown_input"]

CARRIED_PREFIX = "[sessionflow] Carried from the previous turn: "


def shown_input(
    turn: AgentTurnContext,
    items: list[TResponseInputItem],
    carried: str | None,
    tool_state: Mapping[str, Any],
) -> list[TResponseInputItem]:
    """``items`` (one per message of ``turn.messages``) with the carry and the tool state shown."""
    shown = list(items)
    if carried:
        start = next((i for i, m in enumerate(turn.messages) if m.turn_id == turn.turn_id), len(shown))
        shown.insert(start, _system(CARRIED_PREFIX + carried))
    if tool_state:
        state = json.dumps(dict(tool_state), ensure_ascii=False, sort_keys=True)
        shown.insert(0, _system(f"Tool state: {state}"))
    return shown


def _system(text: str) -> TResponseInputItem:
    return cast(TResponseInputItem, {"role": "system", "content": text})
