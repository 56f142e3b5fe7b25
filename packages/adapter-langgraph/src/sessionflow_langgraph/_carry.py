"""The thread between turns: the graph's last checkpoint of a turn, carried into the next.

Plain LangGraph keeps a thread's whole state in its checkpointer, and each ``invoke`` on
the thread starts from it. A session does the same with `TurnCompleted.carry`: the last
checkpoint of a turn is the next turn's starting point, and the next turn's new messages
(the ones stored after the turn's) go in as the graph's input, through its reducers.

The message channel is cut out when it is the session's stored transcript (it starts
with the turn's history: the usual case), and the next turn puts the stored messages
back. When a node replaced it instead (``SummarizationMiddleware``'s
``RemoveMessage(REMOVE_ALL_MESSAGES)`` and its summary), the channel stays in the
checkpoint, so the next turn starts from the summarised channel, as plain LangGraph does,
while the session keeps its whole transcript.

The carry is JSON, ``{"v": 2, "stored": n, "channel": bool, "checkpoint": ..., "metadata":
...}``: ``stored`` is how many messages the session holds once the turn's are stored,
``channel`` whether the message channel is in the checkpoint. Version 1 carries
(``{"v": 1, "state": {...}, "messages": n, ...}``, always cut) are still read. The
snapshot shows the state as `AgentSnapshot.framework_state` (`thread_view`), so the carry
no longer repeats it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.messages import BaseMessage
from langgraph.checkpoint.base import Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from sessionflow import SessionStateError
from sessionflow_langgraph._run_scope import RUN_STOP_KEY
from sessionflow_langgraph._run_state import dump_value, load_value, starts_with

__all__ = ["CARRY_VERSION", "READ_CARRY_VERSIONS", "ThreadCarry", "visible_state"]

CARRY_VERSION = 2
READ_CARRY_VERSIONS = (1, 2)


def visible_state(values: Mapping[str, Any], messages_key: str) -> dict[str, Any]:
    """The state's keys but the message list and LangGraph's own channels."""
    return {
        key: value
        for key, value in values.items()
        if key != messages_key and not key.startswith("__") and not key.startswith("branch:")
    }


@dataclass(frozen=True, kw_only=True)
class ThreadCarry:
    """The last checkpoint of a turn, its message channel cut out when it is the transcript."""

    checkpoint: Checkpoint
    metadata: CheckpointMetadata
    stored: int
    """How many messages the session holds after the turn; later ones are the next input."""
    channel: bool
    """The checkpoint keeps its message channel (it is not the stored transcript)."""

    @classmethod
    def capture(
        cls,
        saved: CheckpointTuple,
        messages_key: str,
        history: Sequence[BaseMessage],
        stored: int,
        untracked: frozenset[str] = frozenset(),
    ) -> ThreadCarry | None:
        """The carry of ``saved``; None when the state is nothing but the stored transcript.

        ``history`` is what the turn started with, ``stored`` the messages the session holds
        once the turn's new ones are stored.
        """
        # A run's untracked values end with it, as in plain LangGraph (`_run_scope`).
        values = {k: v for k, v in saved.checkpoint["channel_values"].items() if k not in untracked}
        messages: Any = values.get(messages_key)
        channel = cast(list[Any], messages) if isinstance(messages, list) else []
        transcript = starts_with(channel, history)
        if transcript and not visible_state(values, messages_key):
            return None
        if transcript:
            values.pop(messages_key, None)
        checkpoint = cast(Checkpoint, {**saved.checkpoint, "channel_values": values})
        metadata = cast(CheckpointMetadata, {k: v for k, v in saved.metadata.items() if k != RUN_STOP_KEY})
        return cls(checkpoint=checkpoint, metadata=metadata, stored=stored, channel=not transcript)

    def dumps(self, serde: SerializerProtocol) -> str:
        return json.dumps(
            {
                "v": CARRY_VERSION,
                "stored": self.stored,
                "channel": self.channel,
                "checkpoint": dump_value(serde, self.checkpoint),
                "metadata": dump_value(serde, self.metadata),
            },
            separators=(",", ":"),
        )

    @classmethod
    def loads(cls, text: str, serde: SerializerProtocol) -> ThreadCarry:
        try:
            raw = cast(dict[str, Any], json.loads(text))
        except ValueError:
            raise SessionStateError("the carried state is not a sessionflow-langgraph thread carry") from None
        version: Any = raw.get("v") if isinstance(raw, dict) else None  # pyright: ignore[reportUnnecessaryIsInstance]
        if version not in READ_CARRY_VERSIONS:
            raise SessionStateError(
                f"unsupported sessionflow-langgraph carry version {version!r} "
                f"(this adapter reads versions {', '.join(map(str, READ_CARRY_VERSIONS))})"
            )
        checkpoint = cast(Checkpoint, load_value(serde, raw["checkpoint"]))
        metadata = cast(CheckpointMetadata, load_value(serde, raw["metadata"]))
        if version == 1:  # the channel was always cut; "messages" was its length
            return cls(checkpoint=checkpoint, metadata=metadata, stored=int(raw["messages"]), channel=False)
        return cls(
            checkpoint=checkpoint, metadata=metadata, stored=int(raw["stored"]), channel=bool(raw["channel"])
        )

    def restored(
        self, messages_key: str, history: Sequence[BaseMessage]
    ) -> tuple[Checkpoint, list[BaseMessage]]:
        """The checkpoint to start the turn from, and the graph's input: the messages stored since."""
        if self.stored > len(history):
            # Fewer stored messages than the carry knew of: start from all of them, as v1 did.
            return self._with_channel(messages_key, []), list(history)
        if self.channel:
            return self.checkpoint, list(history[self.stored :])
        return self._with_channel(messages_key, history[: self.stored]), list(history[self.stored :])

    def first_live(self, messages_key: str, history: Sequence[BaseMessage]) -> int:
        """The first stored message that may still be in the transcript (none before it is).

        A turn that ended with a replaced channel left the transcript equal to that channel,
        as the last stored messages (`_transcript`); so the transcript now is the carried
        channel's length before the end plus what was stored since. A carry made before
        that (every message kept) answers within the transcript too.
        """
        if not self.channel or self.stored > len(history):
            return 0
        channel: Any = self.checkpoint["channel_values"].get(messages_key)
        held = len(cast(list[Any], channel)) if isinstance(channel, list) else 0
        return max(self.stored - held, 0)

    def _with_channel(self, messages_key: str, messages: Sequence[BaseMessage]) -> Checkpoint:
        values = {**self.checkpoint["channel_values"], messages_key: list(messages)}
        return cast(Checkpoint, {**self.checkpoint, "channel_values": values})
