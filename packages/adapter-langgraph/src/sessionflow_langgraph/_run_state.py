"""The run state: the graph's checkpoint at the tool node, as a versioned JSON string.

It holds the latest checkpoint with its pending writes (and, when the tool node sits in a
subgraph, the latest checkpoint of each subgraph namespace: `NestedCheckpoint`), serialized by LangGraph's own
`JsonPlusSerializer` (msgpack, base64 in JSON), and the IDs of the tool calls the
session runs. The turn's history (every message stored before the step) is cut out of
the messages channel and put back from the session's messages on restore, so the run
state holds only what this turn produced and stays small in long sessions. Any
process with the same graph can restore it into a fresh `InMemorySaver`.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from sessionflow import AgentMessage
from sessionflow.kit import message_digest
from sessionflow_langgraph._interrupts import InterruptCall
from sessionflow_langgraph._run_scope import RUN_STOP_KEY, without_untracked

__all__ = [
    "RUN_STATE_VERSION",
    "THREAD_CONFIG",
    "NestedCheckpoint",
    "RunState",
    "dump_value",
    "history_digest",
    "load_value",
    "namespace_config",
    "starts_with",
]

RUN_STATE_VERSION = 2
"""Version 2 adds optional fields: subgraph checkpoints (``nested``, ``tool_ns``), interrupt
calls (``interrupts``) and the updates of calls that finished before a tool node's
``interrupt()`` (``done``). A run state without any of them is still written as version 1,
so a worker of the version before reads it during a rolling deploy; version 1 is read as a
run state without them. An older worker refuses version 2 with its version error rather
than misread it."""
_READ_VERSIONS = (1, 2)
THREAD_ID = "sessionflow"
THREAD_CONFIG: RunnableConfig = {"configurable": {"thread_id": THREAD_ID, "checkpoint_ns": ""}}

Json = dict[str, Any]


def namespace_config(checkpoint_ns: str) -> RunnableConfig:
    """The thread's config at one checkpoint namespace (``""``: the graph itself)."""
    return {"configurable": {"thread_id": THREAD_ID, "checkpoint_ns": checkpoint_ns}}


@dataclass(frozen=True, kw_only=True)
class NestedCheckpoint:
    """The latest checkpoint of one subgraph namespace (``parent:<task id>|child:<task id>``)."""

    ns: str
    checkpoint: Checkpoint
    metadata: CheckpointMetadata
    writes: list[tuple[str, str, Any]]
    history_count: int
    """Leading messages of its messages channel that are the stored history (cut out)."""

    @classmethod
    def capture(
        cls, saved: CheckpointTuple, history: Sequence[BaseMessage], messages_key: str
    ) -> NestedCheckpoint:
        checkpoint, count = _trimmed(saved.checkpoint, history, messages_key)
        return cls(
            ns=str(saved.config.get("configurable", {}).get("checkpoint_ns", "")),
            checkpoint=checkpoint,
            metadata=saved.metadata,
            writes=list(saved.pending_writes or []),
            history_count=count,
        )

    def dump(self, serde: SerializerProtocol) -> Json:
        return {
            "ns": self.ns,
            "history": self.history_count,
            "checkpoint": dump_value(serde, self.checkpoint),
            "metadata": dump_value(serde, self.metadata),
            "writes": _dump_writes(serde, self.writes),
        }

    @classmethod
    def load(cls, raw: Json, serde: SerializerProtocol) -> NestedCheckpoint:
        return cls(
            ns=str(raw["ns"]),
            checkpoint=cast(Checkpoint, load_value(serde, raw["checkpoint"])),
            metadata=cast(CheckpointMetadata, load_value(serde, raw["metadata"])),
            writes=_load_writes(serde, raw["writes"]),
            history_count=int(raw["history"]),
        )


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
    tool_ns: str = ""
    """The checkpoint namespace of the (sub)graph whose tool node the run paused before."""
    nested: tuple[NestedCheckpoint, ...] = ()
    """The latest checkpoint of each subgraph namespace the run has (none at the top level)."""

    def with_checkpoint(self, ns: str, checkpoint: Checkpoint) -> RunState:
        """This run state with the checkpoint of namespace ``ns`` replaced."""
        if not ns:
            return dataclasses.replace(self, checkpoint=checkpoint)
        nested = tuple(
            dataclasses.replace(n, checkpoint=checkpoint) if n.ns == ns else n for n in self.nested
        )
        return dataclasses.replace(self, nested=nested)

    def checkpoint_at(self, ns: str) -> Checkpoint | None:
        if not ns:
            return self.checkpoint
        return next((n.checkpoint for n in self.nested if n.ns == ns), None)

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
        tool_ns: str = "",
        nested: Sequence[CheckpointTuple] = (),
        interrupts: Sequence[InterruptCall] = (),
        run_stop: int | None = None,
        untracked: frozenset[str] = frozenset(),
    ) -> RunState:
        """The run state of ``saved``.

        ``run_stop``: the super-step where the run stops, for the next step of the same run
        (`_run_scope`); None when the next step starts a run of its own (after an
        ``interrupt()``), which then also starts without the ``untracked`` channels' values.
        """
        checkpoint, count = _trimmed(saved.checkpoint, history, messages_key)
        metadata: CheckpointMetadata = {k: v for k, v in saved.metadata.items() if k != RUN_STOP_KEY}  # pyright: ignore[reportAssignmentType] - CheckpointMetadata is a total=False TypedDict
        writes = [
            (task_id, channel_name, value) for task_id, channel_name, value in saved.pending_writes or []
        ]
        if run_stop is not None:
            metadata = cast(CheckpointMetadata, {**metadata, RUN_STOP_KEY: run_stop})
        else:
            checkpoint, writes = without_untracked(checkpoint, writes, untracked)
        return cls(
            checkpoint=checkpoint,
            metadata=metadata,
            writes=writes,
            pending=pending,
            history_count=count,
            history_digest=digest,
            messages_key=messages_key,
            tool_node=tool_node,
            tool_ns=tool_ns,
            nested=tuple(NestedCheckpoint.capture(n, history, messages_key) for n in nested),
            interrupts=tuple(interrupts),
        )

    def dumps(self, serde: SerializerProtocol) -> str:
        extra: Json = {}
        if self.nested or self.tool_ns:
            extra = {"tool_ns": self.tool_ns, "nested": [n.dump(serde) for n in self.nested]}
        if self.interrupts:
            extra["interrupts"] = [call.to_json() for call in self.interrupts]
        if self.done:
            extra["done"] = [{"id": tool_call_id, "update": update} for tool_call_id, update in self.done]
        return json.dumps(
            {
                # Version 1 when it suffices, so a worker of the version before reads it.
                "v": RUN_STATE_VERSION if extra else 1,
                "tool_node": self.tool_node,
                "messages_key": self.messages_key,
                "pending": self.pending,
                "history": {"count": self.history_count, "digest": self.history_digest},
                "checkpoint": dump_value(serde, self.checkpoint),
                "metadata": dump_value(serde, self.metadata),
                "writes": _dump_writes(serde, self.writes),
                **extra,
            },
            separators=(",", ":"),
        )

    # -- import --------------------------------------------------------------------------

    @classmethod
    def loads(cls, text: str, serde: SerializerProtocol) -> RunState:
        raw = cast(Json, json.loads(text))
        if raw.get("v") not in _READ_VERSIONS:
            raise ValueError(
                f"unsupported sessionflow-langgraph run state version {raw.get('v')!r} "
                f"(this adapter reads versions {', '.join(map(str, _READ_VERSIONS))})"
            )
        history = cast(Json, raw["history"])
        return cls(
            checkpoint=cast(Checkpoint, load_value(serde, raw["checkpoint"])),
            metadata=cast(CheckpointMetadata, load_value(serde, raw["metadata"])),
            writes=_load_writes(serde, raw["writes"]),
            pending=[str(p) for p in cast(list[Any], raw["pending"])],
            history_count=int(history["count"]),
            history_digest=str(history["digest"]),
            messages_key=str(raw["messages_key"]),
            tool_node=str(raw["tool_node"]),
            tool_ns=str(raw.get("tool_ns", "")),
            nested=tuple(NestedCheckpoint.load(n, serde) for n in cast(list[Json], raw.get("nested", []))),
            interrupts=tuple(
                InterruptCall.from_json(c) for c in cast(list[Json], raw.get("interrupts") or [])
            ),
            done=tuple((str(d["id"]), str(d["update"])) for d in cast(list[Json], raw.get("done") or [])),
        )

    def for_a_new_run(self, untracked: frozenset[str]) -> RunState:
        """This run state as the start of a run of its own (plain LangGraph resumes an
        ``interrupt()`` with a new ``invoke``): no untracked value, no carried stop."""
        checkpoint, writes = without_untracked(self.checkpoint, self.writes, untracked)
        metadata = cast(CheckpointMetadata, {k: v for k, v in self.metadata.items() if k != RUN_STOP_KEY})
        return dataclasses.replace(self, checkpoint=checkpoint, writes=writes, metadata=metadata)

    def interrupt_call(self, tool_call_id: str) -> InterruptCall | None:
        return next((c for c in self.interrupts if c.tool_call_id == tool_call_id), None)

    async def restore(
        self, saver: BaseCheckpointSaver[Any], history: Sequence[BaseMessage] | None
    ) -> RunnableConfig:
        """Put the checkpoint (history back in front) and its pending writes into ``saver``.

        ``history`` None leaves the history out: a tool step has no stored messages, so its
        tool node sees the messages of this turn only.
        """
        for nested in self.nested:
            checkpoint = self._with_history(nested.checkpoint, nested.history_count, history)
            await _put(saver, namespace_config(nested.ns), checkpoint, nested.metadata, nested.writes)
        checkpoint = self._with_history(self.checkpoint, self.history_count, history)
        return await _put(saver, THREAD_CONFIG, checkpoint, self.metadata, self.writes)

    def _with_history(
        self, checkpoint: Checkpoint, count: int, history: Sequence[BaseMessage] | None
    ) -> Checkpoint:
        if not count or history is None:
            return checkpoint
        if len(history) != count:
            raise ValueError(
                f"the run state was made with {count} stored messages, the step has {len(history)}"
            )
        values = checkpoint["channel_values"]
        own = cast(list[Any], values.get(self.messages_key) or [])
        restored = {**values, self.messages_key: [*history, *own]}
        return cast(Checkpoint, {**checkpoint, "channel_values": restored})


async def _put(
    saver: BaseCheckpointSaver[Any],
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    writes: Sequence[tuple[str, str, Any]],
) -> RunnableConfig:
    saved = await saver.aput(config, checkpoint, metadata, checkpoint["channel_versions"])
    by_task: dict[str, list[tuple[str, Any]]] = {}
    for task_id, channel, value in writes:
        by_task.setdefault(task_id, []).append((channel, value))
    for task_id, task_writes in by_task.items():
        await saver.aput_writes(saved, task_writes, task_id)
    return saved


def _trimmed(
    checkpoint: Checkpoint, history: Sequence[BaseMessage], messages_key: str
) -> tuple[Checkpoint, int]:
    """The checkpoint without the stored history in front of its messages, and how many were cut."""
    values = checkpoint["channel_values"]
    channel: Any = values.get(messages_key)
    if not isinstance(channel, list) or not starts_with(cast(list[Any], channel), history):
        return checkpoint, 0
    trimmed = {**values, messages_key: cast(list[Any], channel)[len(history) :]}
    return cast(Checkpoint, {**checkpoint, "channel_values": trimmed}), len(history)


def _dump_writes(serde: SerializerProtocol, writes: Sequence[tuple[str, str, Any]]) -> list[Json]:
    return [
        {"task": task_id, "channel": channel, "value": dump_value(serde, value)}
        for task_id, channel, value in writes
    ]


def _load_writes(serde: SerializerProtocol, raw: Any) -> list[tuple[str, str, Any]]:
    return [(str(w["task"]), str(w["channel"]), load_value(serde, w["value"])) for w in cast(list[Json], raw)]


def starts_with(channel: Sequence[Any], history: Sequence[BaseMessage]) -> bool:
    """The message channel begins with the stored history (so it is the stored transcript)."""
    return len(channel) >= len(history) and all(a == b for a, b in zip(channel, history, strict=False))


def dump_value(serde: SerializerProtocol, value: Any) -> Json:
    """One value in LangGraph's serializer, as JSON (msgpack in base64)."""
    kind, data = serde.dumps_typed(value)
    return {"type": kind, "data": base64.b64encode(data).decode("ascii")}


def load_value(serde: SerializerProtocol, raw: Any) -> Any:
    """A value `dump_value` wrote."""
    encoded = cast(Json, raw)
    return serde.loads_typed((str(encoded["type"]), base64.b64decode(str(encoded["data"]))))
