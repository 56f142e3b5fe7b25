"""The thread between turns: the graph's last checkpoint of a turn, carried into the next.

Plain LangGraph keeps a thread's whole state in its checkpointer, and each ``invoke`` on
the thread starts from it. A session does the same with `TurnCompleted.carry`: the last
checkpoint of a turn, whole but for its message list (the session stores the messages,
and puts them back), is the next turn's starting point, and the next turn's new messages
go in as the graph's input, through its reducers.

The carry is JSON, ``{"v": 1, "state": {...}, "messages": n, "checkpoint": ..., "metadata": ...}``.
``state`` comes first and is readable (the state's other keys, as JSON), so the
snapshot's `carried_state_preview` shows it; the rest is LangGraph's serializer's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from langgraph.checkpoint.base import Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from sessionflow.session import SessionStateError
from sessionflow_langgraph._run_state import dump_value, load_value

__all__ = ["CARRY_VERSION", "ThreadCarry", "visible_state"]

CARRY_VERSION = 1


def visible_state(values: Mapping[str, Any], messages_key: str) -> dict[str, Any]:
    """The state's keys but the message list and LangGraph's own channels, as JSON values."""
    shown = {
        key: value
        for key, value in values.items()
        if key != messages_key and not key.startswith("__") and not key.startswith("branch:")
    }
    return cast(dict[str, Any], json.loads(json.dumps(shown, default=str, ensure_ascii=False)))


@dataclass(frozen=True, kw_only=True)
class ThreadCarry:
    """The last checkpoint of a turn, without its messages (how many there were is kept)."""

    checkpoint: Checkpoint
    metadata: CheckpointMetadata
    messages: int
    """How many messages the thread had; the next turn takes that many stored ones back."""

    @classmethod
    def capture(cls, saved: CheckpointTuple, messages_key: str) -> ThreadCarry | None:
        """The carry of ``saved``; None when the state has nothing but messages to carry."""
        values = dict(saved.checkpoint["channel_values"])
        if not visible_state(values, messages_key):
            return None
        messages: Any = values.pop(messages_key, None)
        count = len(cast(list[Any], messages)) if isinstance(messages, list) else 0
        checkpoint = cast(Checkpoint, {**saved.checkpoint, "channel_values": values})
        return cls(checkpoint=checkpoint, metadata=saved.metadata, messages=count)

    def dumps(self, serde: SerializerProtocol, messages_key: str) -> str:
        return json.dumps(
            {
                "v": CARRY_VERSION,
                "state": visible_state(self.checkpoint["channel_values"], messages_key),
                "messages": self.messages,
                "checkpoint": dump_value(serde, self.checkpoint),
                "metadata": dump_value(serde, self.metadata),
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def loads(cls, text: str, serde: SerializerProtocol) -> ThreadCarry:
        try:
            raw = cast(dict[str, Any], json.loads(text))
        except ValueError:
            raise SessionStateError("the carried state is not a sessionflow-langgraph thread carry") from None
        if not isinstance(raw, dict) or raw.get("v") != CARRY_VERSION:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise SessionStateError(
                f"unsupported sessionflow-langgraph carry version {raw.get('v')!r} "
                f"(this adapter reads version {CARRY_VERSION})"
            )
        return cls(
            checkpoint=cast(Checkpoint, load_value(serde, raw["checkpoint"])),
            metadata=cast(CheckpointMetadata, load_value(serde, raw["metadata"])),
            messages=int(raw["messages"]),
        )
