"""What a turn hands the next one: the agent it ended on and the run context.

The SDK's multi-turn examples start each turn at ``result.last_agent`` with the one
context object of the conversation; a session carries both in `TurnCompleted.carry`
(JSON, by reference when large) and shows them as `TurnCompleted.framework_state`
(``{"last_agent": <name>, "context": <the context as JSON>}``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, cast

__all__ = ["CARRY_FORMAT", "TurnCarry"]

CARRY_FORMAT = "sessionflow-openai-agents/carry-1"


@dataclass(frozen=True)
class TurnCarry:
    last_agent: str
    context: Any
    """The run context as JSON values (`ContextCodec.dump`)."""
    hidden: tuple[int, ...] = field(default_factory=lambda: tuple[int, ...]())
    """Stored messages (by sequence) the SDK's history no longer holds: a handoff input
    filter dropped them (`_history`). Optional key ``hidden``, written only when there are
    some; a reader before it ignores it and shows the model those messages, as it did."""

    def encode(self) -> str:
        data: dict[str, Any] = {
            "format": CARRY_FORMAT,
            "last_agent": self.last_agent,
            "context": self.context,
        }
        if self.hidden:
            data["hidden"] = list(self.hidden)
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False)

    def view(self) -> dict[str, Any]:
        view = {"last_agent": self.last_agent, "context": self.context}
        if self.hidden:
            view["hidden_messages"] = list(self.hidden)
        return view

    @staticmethod
    def decode(text: str | None) -> TurnCarry | None:
        """The carry ``text`` holds; None for none, or for one in an encoding this is not."""
        if not text:
            return None
        try:
            data: Any = json.loads(text)
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        fields = cast(dict[str, Any], data)
        if fields.get("format") != CARRY_FORMAT or not isinstance(fields.get("last_agent"), str):
            return None
        hidden = fields.get("hidden")
        return TurnCarry(
            last_agent=cast(str, fields["last_agent"]),
            context=fields.get("context"),
            hidden=tuple(int(n) for n in cast(list[Any], hidden)) if isinstance(hidden, list) else (),
        )
