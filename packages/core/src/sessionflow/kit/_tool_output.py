"""What a framework-neutral tool returns when it also changes the session's tool state."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ToolOutput"]


@dataclass(frozen=True, kw_only=True)
class ToolOutput:
    """A tool's text for the model, plus keys it sets in the framework's state.

    A `ToolSpec` handler returns plain text, or this when it also changes state. The
    builtin runner merges `state_update` into its state (a shallow update, parallel calls
    in model order, so the call the model asked for later wins) and shows the merged
    state to the next model call and to later tools (`sessionflow.builtin.tool_state`).
    An adapter that cannot apply state refuses a non-empty update rather than lose it.

    Attributes:
        text: What the model sees as the call's result.
        state_update: JSON-serializable keys and values to set; empty for none.
    """

    text: str
    state_update: Mapping[str, Any] = field(default_factory=lambda: {})
