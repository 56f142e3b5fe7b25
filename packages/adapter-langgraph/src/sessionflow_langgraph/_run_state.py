"""The run state: the graph's checkpoint at the tool node, as a versioned JSON string.

It holds the latest checkpoint with its pending writes, serialized by LangGraph's own
`JsonPlusSerializer` (msgpack, base64 in JSON), and the IDs of the tool calls the
session runs. The turn's history (every message stored before the step) is cut out of
the messages channel and put back from the session's messages on restore, so the run
state holds only what this turn produced and stays small in long sessions. Any
process with the same graph can restore it into a fresh `InMemorySaver`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from sessionflow.session import AgentMessage, message_digest
from sessionflow_langgraph._interrupts import InterruptCall

__all__ = ["RUN_STATE_VERSION", "THREAD_CONFIG", "RunState", "dump_value", "history_digest", "load_value"]

RUN_STATE_VERSION = 1
"""The version of a run state without interrupts (workers from before interrupts read it)."""
INTERRUPTS_VERSION = 2
"""Version 2 adds interrupt calls (``interrupts``) and the updates of calls that finished
before a tool node's ``interrupt()`` (``done``); version 1 reads as no interrupts. An
older worker refuses version 2 with its version error rather than misread it."""
_READS = (RUN_STATE_VERSION, INTERRUPTS_VERSION)
THREAD_ID = "sessionflow"
THREAD_CONFIG: RunnableConfig = {"configurable": {"thread_id": THREAD_ID, "checkpoint_ns": ""}}

Json = dict[str, Any]


def history_digest(messages: Sequence[AgentMessage]) -> str:
    digest = ""
    for stored in messages:
        digest = message_digest(digest, stored)
    return digest


@dataclass(frozen=True, kw_only=True)
class RunState:
    """One paused run: the checkpoint at the tool node and the calls it waits for."""

    checkpoint: Checkpoint
    metadata: CheckpointMetadata
    writes: list[tuple[str, str, Any]]
    """Pending writes as (task ID, channel, value)."""
    pending: list[str]
    """IDs of the tool calls whose results resume the run, in the model's order."""
    history_count: int
    """How many leading messages of the messages channel are the stored history (cut out)."""
    history_digest: str
    messages_key: str
    tool_node: str
    interrupts: tuple[InterruptCall, ...] = ()
    """The interrupt calls this step deferred (`sessionflow_langgraph._interrupts`)."""
    done: tuple[tuple[str, str], ...] = ()
    """``(tool_call_id, state update)`` of the pending calls that ran before a tool node's
    ``interrupt()`` held the others: the next step applies them with the rest."""

    # -- export --------------------------------------------------------------------------

    @classmethod
    def capture(
        cls,
        saved: CheckpointTuple,
        *,
        pending: list[str],
        history: Sequence[BaseMessage],
        digest: str,
        messages_key: str,
        tool_node: str,
        interrupts: Sequence[InterruptCall] = (),
    ) -> RunState:
        checkpoint = saved.checkpoint
        values = checkpoint["channel_values"]
        channel: Any = values.get(messages_key)
        count = 0
        if isinstance(channel, list) and _starts_with(cast(list[Any], channel), history):
            count = len(history)
            trimmed = {**values, messages_key: cast(list[Any], channel)[count:]}
            checkpoint = cast(Checkpoint, {**checkpoint, "channel_values": trimmed})
        return cls(
            checkpoint=checkpoint,
            metadata=saved.metadata,
            writes=[
                (task_id, channel_name, value) for task_id, channel_name, value in saved.pending_writes or []
            ],
            pending=pending,
            history_count=count,
            history_digest=digest,
            messages_key=messages_key,
            tool_node=tool_node,
            interrupts=tuple(interrupts),
        )

    def dumps(self, serde: SerializerProtocol) -> str:
        extra: Json = {}
        if self.interrupts:
            extra["interrupts"] = [call.to_json() for call in self.interrupts]
        if self.done:
            extra["done"] = [{"id": tool_call_id, "update": update} for tool_call_id, update in self.done]
        return json.dumps(
            {
                "v": INTERRUPTS_VERSION if extra else RUN_STATE_VERSION,
                **extra,
                "tool_node": self.tool_node,
                "messages_key": self.messages_key,
                "pending": self.pending,
                "history": {"count": self.history_count, "digest": self.history_digest},
                "checkpoint": dump_value(serde, self.checkpoint),
                "metadata": dump_value(serde, self.metadata),
                "writes": [
                    {"task": task_id, "channel": channel, "value": dump_value(serde, value)}
                    for task_id, channel, value in self.writes
                ],
            },
            separators=(",", ":"),
        )

    # -- import --------------------------------------------------------------------------

    @classmethod
    def loads(cls, text: str, serde: SerializerProtocol) -> RunState:
        raw = cast(Json, json.loads(text))
        if raw.get("v") not in _READS:
            raise ValueError(
                f"unsupported sessionflow-langgraph run state version {raw.get('v')!r} "
                f"(this adapter reads versions {', '.join(str(v) for v in _READS)})"
            )
        history = cast(Json, raw["history"])
        return cls(
            checkpoint=cast(Checkpoint, load_value(serde, raw["checkpoint"])),
            metadata=cast(CheckpointMetadata, load_value(serde, raw["metadata"])),
            writes=[
                (str(w["task"]), str(w["channel"]), load_value(serde, w["value"]))
                for w in cast(list[Json], raw["writes"])
            ],
            pending=[str(p) for p in cast(list[Any], raw["pending"])],
            history_count=int(history["count"]),
            history_digest=str(history["digest"]),
            messages_key=str(raw["messages_key"]),
            tool_node=str(raw["tool_node"]),
            interrupts=tuple(
                InterruptCall.from_json(c) for c in cast(list[Json], raw.get("interrupts") or [])
            ),
            done=tuple((str(d["id"]), str(d["update"])) for d in cast(list[Json], raw.get("done") or [])),
        )

    def interrupt_call(self, tool_call_id: str) -> InterruptCall | None:
        return next((c for c in self.interrupts if c.tool_call_id == tool_call_id), None)

    async def restore(
        self, saver: BaseCheckpointSaver[Any], history: Sequence[BaseMessage] | None
    ) -> RunnableConfig:
        """Put the checkpoint (history back in front) and its pending writes into ``saver``.

        ``history`` None leaves the history out: a tool step has no stored messages, so its
        tool node sees the messages of this turn only.
        """
        checkpoint = self.checkpoint
        if self.history_count and history is not None:
            if len(history) != self.history_count:
                raise ValueError(
                    f"the run state was made with {self.history_count} stored messages, the step has {len(history)}"
                )
            values = checkpoint["channel_values"]
            own = cast(list[Any], values.get(self.messages_key) or [])
            restored = {**values, self.messages_key: [*history, *own]}
            checkpoint = cast(Checkpoint, {**checkpoint, "channel_values": restored})
        config = await saver.aput(THREAD_CONFIG, checkpoint, self.metadata, checkpoint["channel_versions"])
        by_task: dict[str, list[tuple[str, Any]]] = {}
        for task_id, channel, value in self.writes:
            by_task.setdefault(task_id, []).append((channel, value))
        for task_id, writes in by_task.items():
            await saver.aput_writes(config, writes, task_id)
        return config


def _starts_with(channel: list[Any], history: Sequence[BaseMessage]) -> bool:
    return len(channel) >= len(history) and all(a == b for a, b in zip(channel, history, strict=False))


def dump_value(serde: SerializerProtocol, value: Any) -> Json:
    """One value in LangGraph's serializer, as JSON (msgpack in base64)."""
    kind, data = serde.dumps_typed(value)
    return {"type": kind, "data": base64.b64encode(data).decode("ascii")}


def load_value(serde: SerializerProtocol, raw: Any) -> Any:
    """A value `dump_value` wrote."""
    encoded = cast(Json, raw)
    return serde.loads_typed((str(encoded["type"]), base64.b64decode(str(encoded["data"]))))
