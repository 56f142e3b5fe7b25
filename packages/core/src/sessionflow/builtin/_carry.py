"""How the builtin runner shows a carried state to its model: one system message."""

from __future__ import annotations

from typing import Any

from sessionflow.session.runner import AgentTurnContext

__all__ = ["CARRIED_PREFIX", "with_carried"]

CARRIED_PREFIX = "[sessionflow] Carried from the previous turn: "


def with_carried(turn: AgentTurnContext, history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`history` (one item per message of `turn.messages`) with the carry before the turn's own.

    Placed there, not after the system prompt, because it is state as of the previous
    turn's end, and the unchanged prefix before it stays cacheable by the endpoint.
    """
    if turn.carried_state is None:
        return history
    start = next((i for i, m in enumerate(turn.messages) if m.turn_id == turn.turn_id), len(history))
    carried = {"role": "system", "content": CARRIED_PREFIX + turn.carried_state}
    return [*history[:start], carried, *history[start:]]
