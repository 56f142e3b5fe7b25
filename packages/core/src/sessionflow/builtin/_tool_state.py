"""The builtin runner's tool state: a JSON object that tools set keys of.

A tool returns `ToolOutput(text, state_update={...})`; the runner merges every update of a
batch of calls into the ``state`` object of its run state, one shallow update per call in
model order (so of two parallel calls setting one key, the one the model asked for later
wins, whichever finished last). The next model call sees the state in its system message,
and later tools read it with `tool_state`. The state lasts for the turn.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, cast

from sessionflow.session.errors import SessionStateError
from sessionflow.session.invocation import ToolInvocation

__all__ = ["STATE_KEY", "merged_tool_state", "state_line", "tool_state"]

Json = dict[str, Any]
STATE_KEY = "state"
"""The key of the tool state in the builtin run state (absent in run states before it)."""


def merged_tool_state(state: Json, updates: Iterable[tuple[str, str]]) -> Json:
    """``state`` with each ``(tool_call_id, update)`` applied in the order given (model order)."""
    merged = dict(state)
    for tool_call_id, update in updates:
        parsed: object = json.loads(update)
        if not isinstance(parsed, dict):
            # The runner wrote it from a ToolOutput mapping, so this is a corrupt record.
            raise SessionStateError(f"state update of tool call {tool_call_id!r} is not a JSON object")
        merged.update(cast(Json, parsed))
    return merged


def state_line(state: Json) -> str:
    """How the model is shown the state: one line of the system message."""
    return "Tool state: " + json.dumps(state, ensure_ascii=False)


def tool_state(invocation: ToolInvocation | None) -> Json:
    """The tool state as the model step that asked for this call left it; {} when none.

    Pass `current_tool_invocation()` or the handler's ``invocation`` argument. Parallel
    calls of one model response see the same state: their updates merge before the next
    model call, not into each other.
    """
    if invocation is None or invocation.run_state is None:
        return {}
    run_state = cast(Json, json.loads(invocation.run_state))
    return dict(cast(Json, run_state.get(STATE_KEY) or {}))
