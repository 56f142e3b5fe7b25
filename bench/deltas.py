"""Delta latency across processes: no Redis (the fallback), Redis, and workflow_streams (issue 25).

    uv run python -m bench.deltas            # full run (about 5 minutes)
    uv run python -m bench.deltas --quick    # smoke run (about 2 minutes)

Starts its own embedded dev server and redis-server (both stopped at the end), serves every
worker in a child process (`bench._deltas_worker`) and reads every stream from this one, so
deltas really cross processes. Each runner writes `"<tag>.<i>@<time.time_ns()>"`; this process
timestamps each delta when it first has its text (through the delta path, or in the stored
answer at the step's end). Variants run interleaved; one table at the end. See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle
from temporalio.contrib.workflow_streams import WorkflowStreamClient

from bench._common import percentile
from bench._deltas_common import (
    FLOW_PLAIN,
    FLOW_REDIS,
    MODEL_ACTIVITY,
    STREAMS_ACTIVITY,
    STREAMS_TASK_QUEUE,
    STREAMS_TOPIC,
    StreamStep,
    WallClockRunner,
    parse_tagged,
)
from sessionflow import (
    AgentEvent,
    AgentEventType,
    AgentSessionClient,
    AgentSessionFlow,
    MessageRole,
    RedisDeltaTransport,
    connect,
)
from sessionflow.kit import InProcessDeltaBus
from sessionflow.temporal import PAYLOADS_ENV, DevServer, DevServerConfig, PayloadStore, find_temporal_binary
from tests.redis_server import running_redis

MS = 1e-6  # ns -> ms
SETTLE = 0.5  # seconds after a call before its history is measured (a signal may be in flight)


@dataclass(frozen=True)
class Size:
    name: str
    count: int
    interval_us: int

    @property
    def label(self) -> str:
        return f"{self.name}: {self.count} deltas / {self.count * self.interval_us / 1e6:g} s"


SIZES = (Size("short", 20, 10_000), Size("long", 200, 25_000))


@dataclass(frozen=True)
class Plan:
    quick: bool
    repeats: int  # calls per variant and size

    @staticmethod
    def make(quick: bool) -> Plan:
        return Plan(quick, 2 if quick else 6)


# -- what the client saw ---------------------------------------------------------------------


@dataclass
class Piece:
    stamp: int  # time_ns at write, in the worker process
    streamed: int | None = None  # time_ns this process first got it through the delta path
    answered: int | None = None  # time_ns this process had the stored answer that holds it


class Receipts:
    """Every delta this process received, by tag (one tag per call) and index."""

    def __init__(self) -> None:
        self.pieces: dict[int, dict[int, Piece]] = {}

    def _piece(self, tag: int, index: int, stamp: int) -> Piece:
        return self.pieces.setdefault(tag, {}).setdefault(index, Piece(stamp))

    def streamed(self, text: str, at: int) -> None:
        for tag, index, stamp in parse_tagged(text):
            piece = self._piece(tag, index, stamp)
            piece.streamed = at if piece.streamed is None else min(piece.streamed, at)

    def answered(self, text: str, at: int) -> None:
        for tag, index, stamp in parse_tagged(text):
            piece = self._piece(tag, index, stamp)
            piece.answered = at if piece.answered is None else min(piece.answered, at)


@dataclass
class Call:
    """One model call as this process saw it."""

    variant: str
    size: Size
    tag: int
    step_end: int  # time_ns of the model activity's ActivityTaskCompleted event (server clock)
    answered: int  # time_ns this process had the whole stored answer
    events: int | None  # history events and bytes the call added (None across a continue-as-new)
    size_bytes: int | None
    kinds: Counter[str]  # the types of the events it added


@dataclass(frozen=True)
class HistoryPoint:
    events: int
    size: int
    run_id: str


async def history_point(client: Client, workflow_id: str) -> HistoryPoint:
    description = await client.get_workflow_handle(workflow_id).describe()
    info = description.raw_description.workflow_execution_info
    return HistoryPoint(info.history_length, info.history_size_bytes, description.run_id)


async def read_history(
    client: Client, workflow_id: str, activity_type: str, since: int, until: int
) -> tuple[int, Counter[str]]:
    """event_time (ns) of the last completed `activity_type` activity of the workflow's current
    run, and the types of events `since` + 1 .. `until` (what one call added)."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    kinds: dict[int, str] = {}
    added: Counter[str] = Counter()
    last = 0
    for event in history.events:
        if since < event.event_id <= until:
            added[EventType.Name(event.event_type).removeprefix("EVENT_TYPE_")] += 1
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            kinds[event.event_id] = event.activity_task_scheduled_event_attributes.activity_type.name
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            scheduled = event.activity_task_completed_event_attributes.scheduled_event_id
            if kinds.get(scheduled) == activity_type:
                last = event.event_time.ToNanoseconds()
    if not last:
        raise RuntimeError(f"{workflow_id} has no completed {activity_type}")
    return last, added


# -- the drivers -----------------------------------------------------------------------------


class Driver:
    """Runs one variant's model calls and follows its stream from this process."""

    variant: str
    streamed: bool  # False: the "not streamed" baseline of its family
    family: str  # "sessionflow" or "prototype": what a streamed call is compared with

    async def call(self, tag: int, size: Size) -> Call:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError


class SessionDriver(Driver):
    """A sessionflow session followed with `AgentSessionClient.events()`."""

    def __init__(
        self, variant: str, client: Client, sessions: AgentSessionClient, session_id: str, receipts: Receipts
    ) -> None:
        self.variant = variant
        self.family = "sessionflow"
        self.streamed = True
        self.client = client
        self.sessions = sessions
        self.session_id = session_id
        self.receipts = receipts
        self.turns = 0
        self.seen = 0  # the last stored message's sequence read
        self._ended: dict[str, AgentEvent] = {}
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self, *, streamed: bool = True) -> None:
        self.streamed = streamed
        await self.sessions.start_session(self.session_id)
        self._task = asyncio.create_task(self._follow())

    async def _follow(self) -> None:
        async for event in self.sessions.events(self.session_id):
            now = time.time_ns()
            if event.type is AgentEventType.TEXT_DELTA:
                self.receipts.streamed(str(event.data.get("text", "")), now)
            elif event.type in (AgentEventType.TURN_COMPLETED, AgentEventType.TURN_FAILED):
                self._ended[event.turn_id] = event
                self._changed.set()

    async def turn(self, prompt: str) -> str:
        """Send one message and wait for its `turn_completed` on the followed stream."""
        self.turns += 1
        turn_id = f"turn-{self.turns}"
        if not await self.sessions.send_user_message(self.session_id, prompt):
            raise RuntimeError(f"{self.session_id} refused a message")
        async with asyncio.timeout(120):
            while turn_id not in self._ended:
                if self._task is not None and self._task.done():
                    self._task.result()
                    raise RuntimeError(f"the stream of {self.session_id} ended")
                self._changed.clear()
                await self._changed.wait()
        if self._ended[turn_id].type is AgentEventType.TURN_FAILED:
            raise RuntimeError(f"{self.session_id} {turn_id} failed: {self._ended[turn_id].data}")
        return turn_id

    async def read_answer(self) -> str:
        """The answers stored since the last read (what a UI reads at turn end)."""
        texts: list[str] = []
        while True:
            page = await self.sessions.list_agent_messages(self.session_id, after=self.seen, limit=200)
            for stored in page.messages:
                if stored.message.role is MessageRole.ASSISTANT:
                    if stored.message.body is not None:  # kept in the payload store: read it whole
                        stored = await self.sessions.get_message(self.session_id, stored.sequence)
                    texts.append(stored.message.text or "")
                self.seen = stored.sequence
            if page.next_after is None:
                return "\n".join(texts)

    async def call(self, tag: int, size: Size) -> Call:
        kind = "stream" if self.streamed else "quiet"
        before = await history_point(self.client, self.session_id)
        await self.turn(f"{kind} tag={tag} count={size.count} interval_us={size.interval_us}")
        text = await self.read_answer()
        answered = time.time_ns()
        self.receipts.answered(text, answered)
        await asyncio.sleep(SETTLE)
        after = await history_point(self.client, self.session_id)
        step_end, kinds = await read_history(
            self.client, self.session_id, MODEL_ACTIVITY, before.events, after.events
        )
        same = before.run_id == after.run_id
        return Call(
            self.variant,
            size,
            tag,
            step_end,
            answered,
            after.events - before.events if same else None,
            after.size - before.size if same else None,
            kinds,
        )

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


class StreamsDriver(Driver):
    """The workflow_streams prototype: one `StreamsWorkflow`, its stream followed by `subscribe()`."""

    def __init__(
        self, variant: str, client: Client, workflow_id: str, batch_ms: int, receipts: Receipts
    ) -> None:
        self.variant = variant
        self.family = "prototype"
        self.streamed = True
        self.client = client
        self.workflow_id = workflow_id
        self.batch_ms = batch_ms
        self.receipts = receipts
        self._handle: WorkflowHandle[None, None] | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self, *, streamed: bool = True) -> None:
        self.streamed = streamed
        self._handle = await self.client.start_workflow(
            "bench.deltas.Streams", id=self.workflow_id, task_queue=STREAMS_TASK_QUEUE, result_type=type(None)
        )
        if streamed:
            self._task = asyncio.create_task(self._follow())

    async def _follow(self) -> None:
        stream = WorkflowStreamClient.create(self.client, self.workflow_id)
        async for item in stream.subscribe(STREAMS_TOPIC, result_type=str):
            self.receipts.streamed(item.data, time.time_ns())

    async def model(self, step: StreamStep) -> str:
        assert self._handle is not None
        # The overload set mentions an unknown `args` type (as in sessionflow's own client).
        return await self._handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
            "model", step, result_type=str
        )

    async def call(self, tag: int, size: Size) -> Call:
        step = StreamStep(
            tag=tag,
            count=size.count,
            interval_us=size.interval_us,
            batch_ms=self.batch_ms,
            publish=self.streamed,
        )
        before = await history_point(self.client, self.workflow_id)
        text = await self.model(step)
        answered = time.time_ns()
        self.receipts.answered(text, answered)
        await asyncio.sleep(SETTLE)
        after = await history_point(self.client, self.workflow_id)
        step_end, kinds = await read_history(
            self.client, self.workflow_id, STREAMS_ACTIVITY, before.events, after.events
        )
        return Call(
            self.variant,
            size,
            tag,
            step_end,
            answered,
            after.events - before.events,
            after.size - before.size,
            kinds,
        )

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._handle is not None:
            await self._handle.signal("stop")


# -- figures ---------------------------------------------------------------------------------


@dataclass
class Figures:
    """One row of the table: a variant and an answer size over all its calls."""

    variant: str
    size: Size
    family: str
    streamed: bool
    written: int = 0
    streamed_ms: list[float] = field(default_factory=lambda: [])
    live: int = 0
    every_ms: list[float] = field(default_factory=lambda: [])
    whole_ms: list[float] = field(default_factory=lambda: [])
    events: list[int] = field(default_factory=lambda: [])
    size_bytes: list[int] = field(default_factory=lambda: [])
    kinds: Counter[str] = field(default_factory=lambda: Counter[str]())  # of the last call

    def add(self, call: Call, pieces: dict[int, Piece]) -> None:
        if len(pieces) != call.size.count:
            raise RuntimeError(
                f"{call.variant} tag {call.tag}: {len(pieces)} of {call.size.count} deltas seen"
            )
        self.written += call.size.count
        arrivals: list[int] = []
        for piece in pieces.values():
            if piece.streamed is not None:
                self.streamed_ms.append((piece.streamed - piece.stamp) * MS)
                if piece.streamed < call.step_end:
                    self.live += 1
            times = [t for t in (piece.streamed, piece.answered) if t is not None]
            if not times:
                raise RuntimeError(f"{call.variant} tag {call.tag}: a delta never reached the client")
            arrivals.append(min(times))
            self.every_ms.append((min(times) - piece.stamp) * MS)
        last_write = max(piece.stamp for piece in pieces.values())
        self.whole_ms.append((max(arrivals) - last_write) * MS)
        self.kinds = call.kinds
        if call.events is not None and call.size_bytes is not None:
            self.events.append(call.events)
            self.size_bytes.append(call.size_bytes)


def _pair(values: Sequence[float], digits: int = 0) -> str:
    if not values:
        return "-"
    return f"{percentile(values, 50):.{digits}f} / {percentile(values, 99):.{digits}f}"


def _median(values: Sequence[int]) -> float:
    return statistics.median(values) if values else math.nan


def print_table(rows: Sequence[Figures]) -> None:
    baselines = {(r.family, r.size.name): r for r in rows if not r.streamed}
    header = (
        "variant",
        "answer",
        "delta path: p50 / p99 ms (n)",
        "live (before step end)",
        "every delta, first copy: p50 / p99 ms",
        "whole answer after last write: p50 / max ms",
        "history per call: events, bytes (median)",
        "added by streaming: events, bytes",
    )
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        base = baselines.get((r.family, r.size.name))
        events, size = _median(r.events), _median(r.size_bytes)
        added = "-"
        if r.streamed and base is not None:
            added = f"{events - _median(base.events):+.0f}, {size - _median(base.size_bytes):+.0f} B"
        streamed = f"{_pair(r.streamed_ms)} (n={len(r.streamed_ms)})" if r.streamed else "-"
        live = f"{r.live / r.written:.0%}" if r.streamed and r.written else "-"
        whole = f"{percentile(r.whole_ms, 50):.0f} / {max(r.whole_ms):.0f}" if r.whole_ms else "-"
        cells = (
            r.variant,
            r.size.label,
            streamed,
            live,
            _pair(r.every_ms),
            whole,
            f"{events:.0f}, {size:.0f} B",
            added,
        )
        print("| " + " | ".join(cells) + " |")


# -- running it ------------------------------------------------------------------------------


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def machine_info() -> list[str]:
    try:
        server = subprocess.run(
            [str(find_temporal_binary()), "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
        redis = subprocess.run(
            ["redis-server", "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        server = redis = "unknown"
    return [
        f"cpus: {os.cpu_count()} (usable {len(os.sched_getaffinity(0))})",
        f"python {platform.python_version()} on {platform.platform()}",
        f"temporalio {importlib.metadata.version('temporalio')}, {server}",
        f"redis-py {importlib.metadata.version('redis')}, {redis}",
    ]


async def _wait_for(check: Callable[[], bool], what: str) -> None:
    for _ in range(5_000):
        if check():
            return
        await asyncio.sleep(0.002)
    raise RuntimeError(f"timed out waiting for {what}")


async def bench(plan: Plan, client: Client, redis_url: str) -> list[Figures]:
    runner = WallClockRunner()
    receipts = Receipts()
    prefix = f"deltas-{time.time_ns():x}"
    # The client's own flow objects: the plain one reads through this process's (empty)
    # in-process bus, so its deltas come only through the workflow, as any remote client's.
    plain = AgentSessionClient(
        client, AgentSessionFlow(runner, flow_type=FLOW_PLAIN, delta_transport=InProcessDeltaBus())
    )
    transport = RedisDeltaTransport(redis_url)
    redis = AgentSessionClient(
        client, AgentSessionFlow(runner, flow_type=FLOW_REDIS, delta_transport=transport)
    )
    no_redis = SessionDriver(
        "a. no Redis (today's default: fallback)", client, plain, f"{prefix}-plain", receipts
    )
    with_redis = SessionDriver("b. RedisDeltaTransport", client, redis, f"{prefix}-redis", receipts)
    quiet = SessionDriver("sessionflow, not streamed", client, plain, f"{prefix}-quiet", receipts)
    fine = StreamsDriver("c1. workflow_streams, 0.1 s batches", client, f"{prefix}-ws-100", 100, receipts)
    default = StreamsDriver(
        "c2. workflow_streams, 2 s batches (its default)", client, f"{prefix}-ws-2000", 2000, receipts
    )
    bounded = StreamsDriver(
        "c3. workflow_streams, fallback's schedule (0.5/1.5/4.5/13.5 s)",
        client,
        f"{prefix}-ws-bounded",
        0,
        receipts,
    )
    proto_quiet = StreamsDriver("prototype, not streamed", client, f"{prefix}-ws-quiet", 100, receipts)
    drivers: list[Driver] = [no_redis, with_redis, fine, default, bounded, quiet, proto_quiet]
    try:
        for driver in (no_redis, with_redis, quiet):
            await driver.start(streamed=driver is not quiet)
        for driver in (fine, default, bounded, proto_quiet):
            await driver.start(streamed=driver is not proto_quiet)
        await _wait_for(lambda: transport.has_subscribers(with_redis.session_id), "the Redis subscription")
        # Warm up: one plain turn per session, one tiny call per prototype workflow.
        for driver in (no_redis, with_redis, quiet):
            await driver.turn("text")
            await driver.read_answer()
        for driver in (fine, default, bounded, proto_quiet):
            await driver.model(StreamStep(tag=0, count=2, interval_us=1000, batch_ms=100))
        print(f"warm; {plan.repeats} call(s) per variant and answer, interleaved", flush=True)
        figures = {
            (d.variant, s.name): Figures(d.variant, s, d.family, d.streamed) for d in drivers for s in SIZES
        }
        tag = 0
        for repeat in range(plan.repeats):
            for size in SIZES if repeat % 2 == 0 else tuple(reversed(SIZES)):
                start = repeat % len(drivers)
                for driver in [*drivers[start:], *drivers[:start]]:
                    tag += 1
                    call = await driver.call(tag, size)
                    figures[(driver.variant, size.name)].add(call, receipts.pieces.get(tag, {}))
            print(f"  repeat {repeat + 1}/{plan.repeats} done, load {load()}", flush=True)
        return [figures[(d.variant, s.name)] for s in SIZES for d in drivers]
    finally:
        for driver in drivers:
            await driver.close()
        transport.close()


async def run(plan: Plan) -> None:
    started = time.monotonic()
    load_start = load()
    print(f"load average at start: {load_start}", flush=True)
    with tempfile.TemporaryDirectory(prefix="sessionflow-deltas-") as tmp, running_redis() as redis_url:
        server = DevServer(DevServerConfig(data_dir=Path(tmp)))
        handle = await server.start()
        # Both processes keep large bodies in one payload store of their own, in the temporary folder.
        payloads = PayloadStore.from_environment({PAYLOADS_ENV: str(Path(tmp) / "payloads")})
        try:
            worker = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bench._deltas_worker",
                handle.address,
                redis_url,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env={**os.environ, **payloads.environment()},
            )
            assert worker.stdin is not None and worker.stdout is not None
            try:
                async with asyncio.timeout(60):
                    line = await worker.stdout.readline()
                if line.strip() != b"ready":
                    raise RuntimeError(f"the worker process did not start: {line!r}")
                print(
                    f"dev server {handle.address}, redis {redis_url}, worker pid {worker.pid}; "
                    f"ready after {time.monotonic() - started:.1f} s",
                    flush=True,
                )
                client = await connect(handle.address, payloads=payloads)
                rows = await bench(plan, client, redis_url)
            finally:
                worker.stdin.close()
                try:
                    async with asyncio.timeout(30):
                        await worker.wait()
                except TimeoutError:
                    worker.kill()
                    await worker.wait()
        finally:
            await server.stop()
    print()
    print(f"results ({'--quick' if plan.quick else 'full run'}, {time.monotonic() - started:.0f} s):")
    print_table(rows)
    print()
    print("history events one call added (the last call of each long row):")
    for row in rows:
        if row.size is SIZES[-1]:
            kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(row.kinds.items()))
            print(f"  - {row.variant}: {sum(row.kinds.values())} = {kinds}")
    print()
    print(f"load average: {load_start} at start, {load()} at end")
    for line in machine_info():
        print(f"  {line}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.deltas", description="delta latency across processes (issue 25)"
    )
    parser.add_argument("--quick", action="store_true", help="fewer calls (about 2 minutes)")
    args = parser.parse_args(argv)
    asyncio.run(run(Plan.make(bool(args.quick))))


if __name__ == "__main__":
    main(sys.argv[1:])
