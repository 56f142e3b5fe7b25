"""What one LangGraph run keeps between the session's steps: untracked values and its step limit.

A plain ``invoke`` is one run: its channels live in memory from its first super-step to
its last, and ``recursion_limit`` counts super-steps from the run's start. A session
cuts that run into steps (a model step, tool steps, the next model step), each a fresh
run from a checkpoint. Two things a checkpoint does not hold must cross those cuts:

- **Untracked values** (``Annotated[..., UntrackedValue]``, LangChain's
  ``run_tool_call_count`` and ``run_model_call_count``): LangGraph never checkpoints them,
  so each step would start them empty. The step's graph keeps them in a channel that
  checkpoints (`CarriedUntrackedValue`), so the run state carries them to the next step
  of the run; the carry between turns and the run state at an ``interrupt()`` leave them
  out (`without_untracked`), because a plain run ends there and the next starts them empty.
- **The run's step limit**: the super-step at which plain LangGraph would stop
  (``GraphRecursionError``) rides in the checkpoint's metadata (`RUN_STOP_KEY`), and each
  later step of the run gets the limit that is left (`RunLimit`). A worker of the version
  before ignores the key and counts from its own step's start, as it did.

Values of an untracked channel that the serializer cannot hold (a client object kept
out of checkpoints on purpose) are not carried: the next step starts that channel
empty, as LangGraph would after any checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self, cast

from langgraph._internal._typing import MISSING  # LangGraph's marker for an empty channel
from langgraph.channels.base import BaseChannel
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.checkpoint.base import Checkpoint, CheckpointMetadata
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.errors import (
    EmptyChannelError,
    ErrorCode,
    GraphRecursionError,
    InvalidUpdateError,
    create_error_message,
)

__all__ = [
    "RUN_STOP_KEY",
    "CarriedUntrackedValue",
    "RunLimit",
    "carried_channels",
    "recursion_error",
    "without_untracked",
]

RUN_STOP_KEY = "sessionflow_run_stop"
"""Checkpoint metadata: the super-step after which the run stops (LangGraph's ``loop.stop``)."""


class CarriedUntrackedValue(BaseChannel[Any, Any, Any]):
    """`UntrackedValue` as the steps of one run need it: the same updates, but checkpointed.

    Not a subclass of `UntrackedValue`, so LangGraph keeps its writes like any channel's
    (a tool node's write to it reaches the next step as the node's pending write).
    """

    __slots__ = ("guard", "serde", "value")

    def __init__(self, typ: Any, guard: bool = True, serde: SerializerProtocol | None = None) -> None:
        super().__init__(typ)
        self.guard = guard
        self.serde = serde
        self.value: Any = MISSING

    @property
    def ValueType(self) -> Any:
        return self.typ

    @property
    def UpdateType(self) -> Any:
        return self.typ

    def copy(self) -> Self:
        empty = self.__class__(self.typ, self.guard, self.serde)
        empty.key = self.key
        empty.value = self.value
        return empty

    def checkpoint(self) -> Any:
        if self.value is MISSING or not self._serializable(self.value):
            return MISSING
        return self.value

    def from_checkpoint(self, checkpoint: Any) -> Self:
        empty = self.__class__(self.typ, self.guard, self.serde)
        empty.key = self.key
        empty.value = checkpoint
        return empty

    def update(self, values: Sequence[Any]) -> bool:
        if len(values) == 0:
            return False
        if len(values) != 1 and self.guard:
            raise InvalidUpdateError(
                f"At key '{self.key}': UntrackedValue(guard=True) can receive only one value per step. "
                "Use guard=False if you want to store any one of multiple values."
            )
        self.value = values[-1]
        return True

    def get(self) -> Any:
        if self.value is MISSING:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING

    def _serializable(self, value: Any) -> bool:
        if self.serde is None:
            return True
        try:
            self.serde.dumps_typed(value)
        except Exception:  # the serializer's own refusal, whatever its type
            return False
        return True


def carried_channels(
    channels: Mapping[str, Any], serde: SerializerProtocol
) -> tuple[dict[str, Any], frozenset[str]]:
    """The graph's channels (and managed values) with every `UntrackedValue` carried, and their names."""
    replaced: dict[str, Any] = {}
    names: set[str] = set()
    for name, channel in channels.items():
        if isinstance(channel, UntrackedValue):
            untracked = cast(UntrackedValue[Any], channel)  # its type argument is unknown
            carried = CarriedUntrackedValue(untracked.typ, untracked.guard, serde)
            carried.key = untracked.key
            replaced[name] = carried
            names.add(name)
        else:
            replaced[name] = channel
    return replaced, frozenset(names)


def without_untracked(
    checkpoint: Checkpoint,
    writes: Sequence[tuple[str, str, Any]],
    untracked: frozenset[str],
) -> tuple[Checkpoint, list[tuple[str, str, Any]]]:
    """The checkpoint and pending writes as plain LangGraph saves them: no untracked value."""
    if not untracked:
        return checkpoint, list(writes)
    values = {k: v for k, v in checkpoint["channel_values"].items() if k not in untracked}
    kept = [w for w in writes if w[1] not in untracked]
    return cast(Checkpoint, {**checkpoint, "channel_values": values}), kept


@dataclass(frozen=True)
class RunLimit:
    """The run's recursion limit, counted from the run's first super-step."""

    limit: int
    """The whole run's limit (the runner's, the graph's ``recursion_limit``, or LangGraph's default)."""

    def stop_of(self, metadata: CheckpointMetadata | None) -> int:
        """The run's stop when a run begins from a checkpoint with ``metadata`` (LangGraph's formula)."""
        step = int((metadata or {}).get("step", -2)) + 1
        return step + self.limit + 1

    @staticmethod
    def carried_stop(metadata: CheckpointMetadata | None) -> int | None:
        stop: Any = (metadata or {}).get(RUN_STOP_KEY)
        return stop if isinstance(stop, int) else None

    def step_limit(self, metadata: CheckpointMetadata | None, stop: int) -> int:
        """The ``recursion_limit`` that makes a step resumed at ``metadata`` stop where the run would.

        LangGraph takes at least 1; the step's monitor stops a task past ``stop`` when less
        is left (`StepMonitor.run_stop`).
        """
        step = int((metadata or {}).get("step", -2)) + 1
        return max(1, stop - step - 1)

    def error(self) -> GraphRecursionError:
        return recursion_error(self.limit)


def recursion_error(limit: int) -> GraphRecursionError:
    """LangGraph's own error for a run that reached ``limit`` super-steps."""
    return GraphRecursionError(
        create_error_message(
            message=(
                f"Recursion limit of {limit} reached without hitting a stop condition. You can increase "
                "the limit by setting the `recursion_limit` config key."
            ),
            error_code=ErrorCode.GRAPH_RECURSION_LIMIT,
        )
    )
