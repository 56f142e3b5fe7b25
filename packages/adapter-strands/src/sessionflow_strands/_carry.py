"""What a turn carries to the next: `agent.state`, as JSON.

The messages need no carry: the session stores every message of the turn (the user's, the
model's, the tool results), and the next turn's model steps read them back.
"""

from __future__ import annotations

import json
from typing import Any, cast

__all__ = ["CARRY_VERSION", "decode_carry", "encode_carry"]

CARRY_VERSION = 1


def encode_carry(agent_state: dict[str, Any]) -> str:
    """The carry of a turn that ends with ``agent_state``, even an empty one: a session with
    no carry starts from the agent's own initial state (``Agent(state=...)``)."""
    return json.dumps({"v": CARRY_VERSION, "agent_state": agent_state}, ensure_ascii=False)


def decode_carry(carry: str | None, initial: dict[str, Any]) -> dict[str, Any]:
    """The `agent.state` a turn starts from: ``initial`` (the agent's) on a session's first turn."""
    if not carry:
        return dict(initial)
    data = cast(dict[str, Any], json.loads(carry))
    if data.get("v") != CARRY_VERSION:
        raise ValueError(f"unsupported Strands carry version {data.get('v')!r}")
    return dict(data.get("agent_state") or {})
