"""What the model is shown besides the conversation: a harness's carry and the tool state.

Both are worded as the builtin runner words them, as system items of the run's input
(the Agents SDK's instructions stay the agent's own): the tool state that neutral tool
specs set (`sessionflow.kit.ToolOutput.state_update`) first, and a carry hook's carry just
before the turn's own messages, so the prefix before it stays cacheable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from agents import TResponseInputItem

from sessionflow import AgentMessage
from sessionflow.kit import AgentTurnContext
from sessionflow_openai_agents._items import model_input

__all__ = ["CARRIED_PREFIX", "shown_input"]

CARRIED_PREFIX = "[sessionflow] Carried from the previous turn: "


def shown_input(
    turn: AgentTurnContext,
    messages: Sequence[AgentMessage],
    carried: str | None,
    tool_state: Mapping[str, Any],
) -> tuple[list[TResponseInputItem], list[int | None]]:
    """The run's input: one item per message of ``messages`` with the carry and the tool
    state shown; and for each item the sequence of the stored message it is (None for what
    is shown besides them)."""
    shown = model_input(messages)
    sequences: list[int | None] = [m.sequence for m in messages]
    if carried:
        start = next((i for i, m in enumerate(messages) if m.turn_id == turn.turn_id), len(shown))
        shown.insert(start, _system(CARRIED_PREFIX + carried))
        sequences.insert(start, None)
    if tool_state:
        state = json.dumps(dict(tool_state), ensure_ascii=False, sort_keys=True)
        shown.insert(0, _system(f"Tool state: {state}"))
        sequences.insert(0, None)
    return shown, sequences


def _system(text: str) -> TResponseInputItem:
    return cast(TResponseInputItem, {"role": "system", "content": text})
