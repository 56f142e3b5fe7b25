"""Shared by both processes of `bench.deltas`: the wall-clock runner and the workflow_streams prototype.

The worker process (`bench._deltas_worker`) serves them; the client process (`bench.deltas`)
names the same flow types, task queue, workflow and update. Every delta is
`"<tag>.<i>@<time.time_ns()> "`: a wall clock, because writer and reader are different
processes (of one machine), and a tag, so a reader can tell the turns apart.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():
    from temporalio.contrib.workflow_streams import TopicHandle, WorkflowStream, WorkflowStreamClient

    from bench._common import ZeroLatencyRunner, command, turn_prompt
    from sessionflow import AgentUsage, MessageRole
    from sessionflow.kit import AgentTurnContext, AgentTurnOutcome, FrameworkMessage, TurnCompleted

__all__ = [
    "FLOW_PLAIN",
    "FLOW_REDIS",
    "MODEL_ACTIVITY",
    "STREAMS_ACTIVITY",
    "STREAMS_TASK_QUEUE",
    "STREAMS_TOPIC",
    "StreamStep",
    "StreamsWorkflow",
    "WallClockRunner",
    "parse_tagged",
    "stream_model",
    "stream_pieces",
]

FLOW_PLAIN = "bench-deltas-plain"  # the worker's default transport: its own in-process bus
FLOW_REDIS = "bench-deltas-redis"  # RedisDeltaTransport on both sides
STREAMS_TASK_QUEUE = "bench-deltas-streams"
STREAMS_TOPIC = "deltas"
MODEL_ACTIVITY = "sessionflow.RunModel"
STREAMS_ACTIVITY = "bench.deltas.StreamModel"

# The fallback's flush schedule (sessionflow.temporal.activities._delta_fallback.FLUSH_SCHEDULE), for the
# prototype's bounded variant: flushes at these seconds after the first delta, then one at the end.
BOUNDED_SCHEDULE = (0.5, 1.5, 4.5, 13.5)

_TAGGED = re.compile(r"(\d+)\.(\d+)@(\d+)")


def parse_tagged(text: str) -> list[tuple[int, int, int]]:
    """(tag, index, time_ns at write) of every delta in `text` (a batch holds several)."""
    return [(int(m.group(1)), int(m.group(2)), int(m.group(3))) for m in _TAGGED.finditer(text)]


async def stream_pieces(tag: int, count: int, interval: float, emit: Callable[[str], None]) -> str:
    """Write `count` stamped pieces `interval` seconds apart through `emit`; return them joined."""
    pieces: list[str] = []
    for index in range(count):
        piece = f"{tag}.{index}@{time.time_ns()} "
        emit(piece)
        pieces.append(piece)
        await asyncio.sleep(interval)
    return "".join(pieces)


def _ignore(_: str) -> None:
    return None


class WallClockRunner(ZeroLatencyRunner):
    """`ZeroLatencyRunner` whose streamed deltas carry a wall clock and a tag.

    - `stream tag=T count=N interval_us=U`: N deltas U microseconds apart, then an answer
      holding exactly their text (as a model's answer holds what it streamed).
    - `quiet tag=T count=N interval_us=U`: the same answer after the same time, no deltas.

    Anything else is `ZeroLatencyRunner`'s script.
    """

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        kind, options = command(turn_prompt(turn))
        if kind not in ("stream", "quiet"):
            return await super().run_model_step(turn)
        count = options.get("count", 20)
        emit = turn.events.write_text_delta if kind == "stream" else _ignore
        text = await stream_pieces(
            options.get("tag", 0), count, options.get("interval_us", 10_000) / 1e6, emit
        )
        answer = FrameworkMessage(
            role=MessageRole.ASSISTANT, framework_item={"role": "assistant", "content": text}, text=text
        )
        usage = AgentUsage(requests=1, input_tokens=len(turn.messages) * 8, output_tokens=count)
        return TurnCompleted(new_messages=[answer], usage=usage)


# -- the workflow_streams prototype ----------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class StreamStep:
    """One "model call" of the prototype.

    `batch_ms` is the publisher's flush interval (`WorkflowStreamClient(batch_interval=)`);
    0 flushes on the fallback's schedule instead (`BOUNDED_SCHEDULE`). `publish=False`
    streams nothing (the baseline a streamed call is compared with).
    """

    tag: int
    count: int
    interval_us: int
    batch_ms: int
    publish: bool = True


@activity.defn(name=STREAMS_ACTIVITY)
async def stream_model(step: StreamStep) -> str:
    """A zero-latency "model" that publishes its deltas through the workflow's stream."""
    interval = step.interval_us / 1e6
    if not step.publish:
        return await stream_pieces(step.tag, step.count, interval, _ignore)
    bounded = step.batch_ms <= 0
    stream = WorkflowStreamClient.from_within_activity(
        batch_interval=timedelta(hours=1) if bounded else timedelta(milliseconds=step.batch_ms)
    )
    topic = stream.topic(STREAMS_TOPIC, type=str)
    async with stream:  # its exit flushes what is left: the log ends up whole
        emit = _on_schedule(topic) if bounded else topic.publish
        return await stream_pieces(step.tag, step.count, interval, emit)


def _on_schedule(topic: TopicHandle[str]) -> Callable[[str], None]:
    """`topic.publish`, with a forced flush at the first piece past each point of `BOUNDED_SCHEDULE`.

    (`WorkflowStreamClient.flush()` would not do: it loops until the buffer is empty, and a
    model that writes faster than a signal's round trip keeps it flushing, one signal after another.)
    """
    began: list[float] = []
    points = list(BOUNDED_SCHEDULE)

    def emit(piece: str) -> None:
        now = time.monotonic()
        if not began:
            began.append(now)
        due = bool(points) and now - began[0] >= points[0]
        while points and now - began[0] >= points[0]:
            points.pop(0)
        topic.publish(piece, force_flush=due)

    return emit


@workflow.defn(name="bench.deltas.Streams")
class StreamsWorkflow:
    """Hosts a `WorkflowStream`; the `model` update runs one `stream_model` activity."""

    @workflow.init
    def __init__(self) -> None:
        self.stream = WorkflowStream()
        self._stopped = False

    @workflow.run
    async def run(self) -> None:
        await workflow.wait_condition(lambda: self._stopped)
        self.stream.detach_pollers()
        await workflow.wait_condition(workflow.all_handlers_finished)

    @workflow.update(name="model")
    async def model(self, step: StreamStep) -> str:
        return await workflow.execute_activity(
            stream_model, step, start_to_close_timeout=timedelta(minutes=2)
        )

    @workflow.signal(name="stop")
    def stop(self) -> None:
        self._stopped = True
