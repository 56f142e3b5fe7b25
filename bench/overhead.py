"""What sessionflow adds on top of bare Temporal, measured side by side in one run.

    uv run python -m bench.overhead            # full run (a few minutes)
    uv run python -m bench.overhead --quick    # smoke run, under a minute

Starts its own embedded dev server in a temporary folder (stopped at the end), runs every
worker in this process, interleaves sessionflow and the bare baseline step by step, and
prints one table of medians, p95s and ratios. See bench/README.md for how to read it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle
from temporalio.converter import PayloadConverter
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from bench._common import (
    BARE_TASK_QUEUE,
    ActivityTiming,
    BareStep,
    BareWorkflow,
    HistoryTail,
    Summary,
    ZeroLatencyRunner,
    bare_step,
    parse_activity_timings,
    parse_stamps,
    percentile,
    summarize,
    workflow_tasks_per_update,
)
from sessionflow import (
    AgentEvent,
    AgentEventType,
    AgentMessage,
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    AgentSnapshot,
    AgentStatus,
    MessageRole,
    ToolEffect,
    ToolPolicy,
    serve_agent_flows,
)
from sessionflow.kit import FrameworkMessage, InProcessDeltaBus, message_digest
from sessionflow.session.events import AgentEventsPage
from sessionflow.temporal import (
    DevServer,
    DevServerConfig,
    build_data_converter,
    find_temporal_binary,
    with_payload_store,
)

# The session's wire types are internal; the bench only times their conversion.
from sessionflow.temporal._payloads import RunModelInput, RunModelResult

RUN_MODEL = "sessionflow.RunModel"
BARE_STEP = "bench.BareStep"
MS = 1e-6  # ns -> ms


@dataclass(frozen=True)
class Plan:
    """How much of everything to run."""

    quick: bool
    steps: int  # text turns and bare steps, interleaved (metric 1)
    e2e_steps: int  # client e2e with a tight get_agent_snapshot loop, and with events()
    tool_turns: int  # full turns with tools and bare chains (metric 2)
    long_turns: int  # turns of the long session (metrics 3 and 4)
    window: int  # turns compared at each end of the long session
    rotate: int  # sessions / bare workflows are replaced after this many steps
    delta_turns: int  # streamed turns per transport (metric 5)
    delta_count: int
    delta_interval_us: int
    long_fallback: bool  # also stream for 15 s through the fallback, to see all four batches

    @staticmethod
    def make(quick: bool) -> Plan:
        if quick:
            return Plan(True, 30, 16, 10, 60, 10, 20, 1, 200, 5000, False)
        return Plan(False, 200, 100, 100, 300, 20, 20, 3, 200, 5000, True)


# -- following a session ---------------------------------------------------------------------


class CountingSessions(AgentSessionClient):
    """An `AgentSessionClient` that counts the durable-event queries its `events()` makes."""

    queries = 0

    async def list_agent_events(
        self, session_id: str, *, after: int = 0, limit: int = 500
    ) -> AgentEventsPage:
        self.queries += 1
        return await super().list_agent_events(session_id, after=after, limit=limit)


class Follower:
    """Consumes `AgentSessionClient.events()` in a task and timestamps every event on receipt.

    One follower stays open for the whole life of a session, as a UI would keep its stream.
    """

    def __init__(self, sessions: AgentSessionClient, session_id: str) -> None:
        self.received: list[tuple[int, AgentEvent]] = []
        self._ended: dict[str, tuple[int, AgentEvent]] = {}
        self._changed = asyncio.Event()
        self._sessions = sessions
        self._session_id = session_id
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async for event in self._sessions.events(self._session_id):
            now = time.perf_counter_ns()
            self.received.append((now, event))
            if event.type in (AgentEventType.TURN_COMPLETED, AgentEventType.TURN_FAILED):
                self._ended[event.turn_id] = (now, event)
            self._changed.set()

    async def subscribed(self, bus: InProcessDeltaBus) -> None:
        """Wait until the follower listens on `bus` (so the worker sees a subscriber)."""
        for _ in range(10_000):
            if bus.has_subscribers(self._session_id):
                return
            await asyncio.sleep(0.001)
        raise RuntimeError(f"the event stream of {self._session_id} never subscribed")

    async def turn_end(self, turn_id: str, timeout: float = 120.0) -> int:
        """perf_counter_ns at which `turn_completed` of `turn_id` was received."""
        async with asyncio.timeout(timeout):
            while turn_id not in self._ended:
                if self._task.done():
                    self._task.result()
                    raise RuntimeError(f"event stream of {self._session_id} ended before {turn_id}")
                self._changed.clear()
                await self._changed.wait()
        at, event = self._ended[turn_id]
        if event.type is AgentEventType.TURN_FAILED:
            raise RuntimeError(f"{self._session_id} {turn_id} failed: {event.data}")
        return at

    def events_of(self, turn_id: str) -> list[tuple[int, AgentEvent]]:
        return [(at, event) for at, event in self.received if event.turn_id == turn_id]

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


@dataclass
class Session:
    """A sessionflow session the bench drives, one turn at a time."""

    sessions: AgentSessionClient
    session_id: str
    follower: Follower | None = None
    tail: HistoryTail | None = None
    turns: int = 0
    run_ids: list[str] = field(default_factory=lambda: [])

    async def turn(self, prompt: str) -> tuple[int, list[tuple[int, AgentEvent]]]:
        """One turn observed through the open `events()` stream.

        Returns the ns from send_user_message to the receipt of turn_completed, and the
        events of the turn with their receipt times.
        """
        follower = self.follower
        assert follower is not None, "the session is not followed"
        self.turns += 1
        turn_id = f"turn-{self.turns}"
        start = time.perf_counter_ns()
        if not await self.sessions.send_user_message(self.session_id, prompt):
            raise RuntimeError(f"{self.session_id} refused a message")
        end = await follower.turn_end(turn_id)
        return end - start, follower.events_of(turn_id)

    async def turn_tailed(self, prompt: str, last_step: str = "model-1") -> int:
        """One turn, done when the history shows `last_step`'s result processed; returns ns.

        Nothing queries the worker meanwhile: the history is long-polled from the server.
        """
        tail = self.tail
        assert tail is not None, "the session's history is not tailed"
        self.turns += 1
        start = time.perf_counter_ns()
        if not await self.sessions.send_user_message(self.session_id, prompt):
            raise RuntimeError(f"{self.session_id} refused a message")
        await tail.until_processed(f"turn-{self.turns}/{last_step}")
        return time.perf_counter_ns() - start

    async def turn_polling_snapshot(self, prompt: str) -> int:
        """One turn observed by a tight `get_agent_snapshot` loop; returns send -> seen ns."""
        self.turns += 1
        start = time.perf_counter_ns()
        if not await self.sessions.send_user_message(self.session_id, prompt):
            raise RuntimeError(f"{self.session_id} refused a message")
        while True:
            snapshot: AgentSnapshot = await self.sessions.get_agent_snapshot(self.session_id)
            state = snapshot.state
            if (
                state is not None
                and state.turn_count >= self.turns
                and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
            ):
                if state.last_turn_error is not None:
                    raise RuntimeError(f"{self.session_id} turn {self.turns} failed: {state.last_turn_error}")
                return time.perf_counter_ns() - start

    async def history_point(self, client: Client) -> HistoryPoint:
        point = await history_point(client, self.session_id)
        if not self.run_ids or self.run_ids[-1] != point.run_id:
            self.run_ids.append(point.run_id)
        return point


@dataclass(frozen=True)
class HistoryPoint:
    """Length and size of a workflow's current run, from `describe()`."""

    events: int
    size: int
    run_id: str


async def history_point(client: Client, workflow_id: str) -> HistoryPoint:
    description = await client.get_workflow_handle(workflow_id).describe()
    info = description.raw_description.workflow_execution_info
    return HistoryPoint(info.history_length, info.history_size_bytes, description.run_id)


def growth(before: HistoryPoint, after: HistoryPoint) -> tuple[int, int] | None:
    """(events, bytes) added between two points of one run; None across a continue-as-new."""
    if before.run_id != after.run_id:
        return None
    return after.events - before.events, after.size - before.size


@dataclass
class Bare:
    """A bare workflow the bench drives with updates."""

    handle: WorkflowHandle[BareWorkflow, int]
    step: BareStep

    async def run(self, *, chain: bool = False) -> int:
        """One update (`step`, or `chain` for model -> 2 tools -> model); returns its duration in ns."""
        start = time.perf_counter_ns()
        update = BareWorkflow.chain if chain else BareWorkflow.step
        # The overload set mentions an unknown `args` type (as in sessionflow's own client).
        await self.handle.execute_update(update, self.step)  # pyright: ignore[reportUnknownMemberType]
        return time.perf_counter_ns() - start


async def _step_payloads(
    client: Client, workflow_id: str, activity_type: str, *, last: bool = False
) -> tuple[Payload, Payload]:
    """Input and result payloads of the first (or last) completed `activity_type` activity."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    inputs: dict[int, Payload] = {}
    found: list[tuple[Payload, Payload]] = []
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            if attrs.activity_type.name == activity_type:
                inputs[event.event_id] = attrs.input.payloads[0]
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            completed = event.activity_task_completed_event_attributes
            if completed.scheduled_event_id in inputs:
                found.append((inputs[completed.scheduled_event_id], completed.result.payloads[0]))
    return found[-1] if last else found[0]


def _conversion_us(
    converter: PayloadConverter, payloads: tuple[Payload, Payload], types: tuple[type, type]
) -> float:
    """Microseconds of thread CPU to decode and re-encode both payloads, averaged over many rounds."""
    rounds = 300
    started = time.thread_time_ns()
    for _ in range(rounds):
        for payload, hint in zip(payloads, types, strict=True):
            converter.to_payload(converter.from_payload(payload, hint))
    return (time.thread_time_ns() - started) / rounds / 1000


async def activity_timings(
    client: Client, workflow_id: str, run_ids: Sequence[str] = ()
) -> list[ActivityTiming]:
    """Timings of every completed activity of a workflow, over all of the given runs."""
    timings: list[ActivityTiming] = []
    for run_id in run_ids or [None]:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        timings.extend(parse_activity_timings(history.events))
    return timings


# -- the bench -------------------------------------------------------------------------------

A = TypeVar("A")
B = TypeVar("B")


async def alternate(index: int, first: Coroutine[Any, Any, A], second: Coroutine[Any, Any, B]) -> tuple[A, B]:
    """Await both, one after the other, `first` first on even indexes and `second` first on odd
    ones (A B B A ...), so that neither variant always runs right after the other."""
    if index % 2 == 0:
        a = await first
        return a, await second
    b = await second
    return await first, b


async def in_rotation(index: int, *works: Coroutine[Any, Any, Any]) -> None:
    """Await every work, one after the other, starting with a different one at each index."""
    start = index % len(works)
    for work in [*works[start:], *works[:start]]:
        await work


async def _after(delay: float, work: Coroutine[Any, Any, A]) -> A:
    await asyncio.sleep(delay)
    return await work


@dataclass
class Row:
    metric: str
    sessionflow: str
    baseline: str
    ratio: str
    goal: str
    met: str


@dataclass
class Bench:
    plan: Plan
    client: Client
    flow: AgentSessionFlow
    sessions: AgentSessionClient
    fallback_sessions: AgentSessionClient
    local_sessions: AgentSessionClient
    prefix: str
    rows: list[Row] = field(default_factory=lambda: [])
    notes: list[str] = field(default_factory=lambda: [])
    bare_step: BareStep = field(default_factory=lambda: BareStep(data="x" * 300, reply_bytes=200))
    _count: int = 0
    _open: list[Session] = field(default_factory=lambda: [])

    def _id(self, kind: str) -> str:
        self._count += 1
        return f"{self.prefix}-{kind}-{self._count}"

    async def new_session(
        self, sessions: AgentSessionClient | None = None, *, follow: bool = True, tail: bool = False
    ) -> Session:
        """Start a session. `follow` opens its events() stream at once and keeps it open;
        `tail` long-polls its history instead, so no query reaches the worker."""
        session = Session(sessions or self.sessions, self._id("s"))
        await session.sessions.start_session(session.session_id)
        if tail:
            session.tail = HistoryTail(self.client, session.session_id)
        if follow:
            session.follower = Follower(session.sessions, session.session_id)
            self._open.append(session)
        return session

    async def close_streams(self) -> None:
        for session in self._open:
            if session.follower is not None:
                await session.follower.close()
        self._open = []

    async def new_bare(self, *, heartbeat: bool = False) -> Bare:
        handle = await self.client.start_workflow(
            BareWorkflow.run, id=self._id("bare"), task_queue=BARE_TASK_QUEUE
        )
        step = self.bare_step
        return Bare(handle, BareStep(data=step.data, reply_bytes=step.reply_bytes, heartbeat=heartbeat))

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(f"  {text}", flush=True)

    def _compare(
        self,
        metric: str,
        sf: Sequence[float],
        base: Sequence[float],
        *,
        goal: float | None = None,
    ) -> float:
        a, b = summarize(sf), summarize(base)
        ratio = a.p50 / b.p50
        self.rows.append(
            Row(
                metric,
                _cell(a),
                _cell(b),
                f"{ratio:.2f} (p95 {a.p95 / b.p95:.2f})",
                f"<= {goal:.2f}" if goal is not None else "-",
                ("yes" if ratio <= goal else "NO") if goal is not None else "-",
            )
        )
        print(f"  {metric}: {_cell(a)} vs {_cell(b)} -> {ratio:.2f}", flush=True)
        return ratio

    async def _timings(
        self, workflow_ids: Sequence[str], activity_type: str | None = None
    ) -> list[ActivityTiming]:
        timings: list[ActivityTiming] = []
        for workflow_id in workflow_ids:
            timings.extend(
                t
                for t in await activity_timings(self.client, workflow_id)
                if activity_type is None or t.activity_type == activity_type
            )
        return timings

    async def _tasks_per_update(self, workflow_ids: Sequence[str]) -> list[int]:
        counts: list[int] = []
        for workflow_id in workflow_ids:
            history = await self.client.get_workflow_handle(workflow_id).fetch_history()
            counts.extend(workflow_tasks_per_update(history.events))
        return counts

    # -- warm-up and payload sizing ----------------------------------------------------------

    async def warm_up(self) -> None:
        session = await self.new_session()
        bare = await self.new_bare()
        for _ in range(5):
            await session.turn("text")
            await bare.run()
        await session.turn("tools")
        await bare.run(chain=True)
        await self.close_streams()
        timings = await self._timings([session.session_id], RUN_MODEL)
        text = [t for t in timings if t.activity_id.endswith("/model-1")][:5]
        inputs = sorted(t.input_bytes for t in text)[len(text) // 2]
        results = sorted(t.result_bytes for t in text)[len(text) // 2]
        # JSON envelope of BareStep and of a str result, measured on the warm-up bare run.
        bare_timing = (await activity_timings(self.client, bare.handle.id))[0]
        envelope_in = bare_timing.input_bytes - len(self.bare_step.data)
        envelope_out = bare_timing.result_bytes - self.bare_step.reply_bytes
        self.bare_step = BareStep(
            data="x" * max(1, inputs - envelope_in), reply_bytes=max(1, results - envelope_out)
        )
        self.note(
            f"payloads: RunModel of a text turn in/out {inputs}/{results} B; the bare activity is sized to "
            f"match (data {len(self.bare_step.data)} chars, reply {self.bare_step.reply_bytes} chars)"
        )
        await bare.run()
        await self._conversion_cost(session.session_id, bare.handle.id)

    async def _conversion_cost(self, session_id: str, bare_id: str) -> None:
        """CPU the data converter spends on one step's two payloads, each encoded and decoded once."""
        # Each side with the converter its worker runs: sessionflow's (serve_agent_flows puts
        # it on the worker's client) and Temporal's default (the bare worker's client).
        converter = build_data_converter(None).payload_converter
        sf = await _step_payloads(self.client, session_id, RUN_MODEL)
        bare = await _step_payloads(self.client, bare_id, BARE_STEP, last=True)
        sf_us = _conversion_us(converter, sf, (RunModelInput, RunModelResult))
        bare_us = _conversion_us(self.client.data_converter.payload_converter, bare, (BareStep, str))
        self.rows.append(
            Row(
                "data converter CPU per step, input and result each decoded and encoded once, us",
                f"{sf_us:.0f}",
                f"{bare_us:.0f}",
                f"{sf_us / bare_us:.2f}",
                "<= 2.00",
                "yes" if sf_us <= 2 * bare_us else "NO",
            )
        )
        same_us = _conversion_us(converter, bare, (BareStep, str))
        self.note(
            f"data converter CPU per step (input and result, each encoded once and decoded once): "
            f"sessionflow {sf_us:.0f} us vs bare {bare_us:.0f} us (thread CPU time, outside the sandbox); "
            f"the bare payloads through sessionflow's converter: {same_us:.0f} us"
        )

    # -- 1. per-step round trip and end-to-end latency -----------------------------------------

    async def per_step(self) -> None:
        plan = self.plan
        print(f"[1] {plan.steps} text turns and {plan.steps} bare update steps, interleaved", flush=True)
        sf_ids: list[str] = []
        bare_ids: list[str] = []
        sf_growth: list[tuple[int, int]] = []
        bare_growth: list[tuple[int, int]] = []
        session: Session | None = None
        bare: Bare | None = None
        for index in range(plan.steps):
            if index % plan.rotate == 0:
                session = await self.new_session(follow=False, tail=True)
                bare = await self.new_bare()
                sf_ids.append(session.session_id)
                bare_ids.append(bare.handle.id)
            assert session is not None and bare is not None
            await alternate(
                index, self._measured_turn(session, sf_growth), self._measured_step(bare, bare_growth)
            )
        sf = await self._timings(sf_ids, RUN_MODEL)
        base = await self._timings(bare_ids, BARE_STEP)
        self._compare(
            "1. per-step round trip (history: ActivityTaskScheduled -> WFT completed after its result), ms",
            [t.round_trip * MS for t in sf],
            [t.round_trip * MS for t in base],
            goal=1.05,
        )
        self._phases("a text turn's RunModel vs a bare activity", sf, base)
        self._compare(
            "1. server-side turn: WFT that takes the update -> WFT completed after the result, ms",
            [(t.wft_completed - t.origin_scheduled) * MS for t in sf],
            [(t.wft_completed - t.origin_scheduled) * MS for t in base],
        )
        origin_sf = summarize([(t.scheduled - t.origin_started) * MS for t in sf])
        origin_bare = summarize([(t.scheduled - t.origin_started) * MS for t in base])
        self.note(
            f"workflow task that takes the update and schedules the step, p50: {origin_sf.p50:.1f} ms "
            f"(update + RunModel scheduled) vs bare {origin_bare.p50:.1f} ms"
        )
        self.note(
            f"workflow tasks per turn: sessionflow {_histogram(await self._tasks_per_update(sf_ids))}; "
            f"bare {_histogram(await self._tasks_per_update(bare_ids))}"
        )
        self._compare_counts(
            "3. history added per text turn vs per bare update step (describe(), p50)", sf_growth, bare_growth
        )

        print(f"[1b] {plan.e2e_steps} turns seen by a tight get_agent_snapshot loop, interleaved", flush=True)
        sf_e2e: list[float] = []
        bare_e2e: list[float] = []
        sf_ids = []
        bare_ids = []
        for index in range(plan.e2e_steps):
            if index % plan.rotate == 0:
                session = await self.new_session(follow=False)
                bare = await self.new_bare()
                sf_ids.append(session.session_id)
                bare_ids.append(bare.handle.id)
            assert session is not None and bare is not None
            sf_ns, bare_ns = await alternate(index, session.turn_polling_snapshot("text"), bare.run())
            sf_e2e.append(sf_ns * MS)
            bare_e2e.append(bare_ns * MS)
        self._compare(
            "1. client e2e: send_user_message -> a tight get_agent_snapshot loop sees it vs execute_update, ms",
            sf_e2e,
            bare_e2e,
        )
        sf = await self._timings(sf_ids, RUN_MODEL)
        base = await self._timings(bare_ids, BARE_STEP)
        self.note(
            "per-step round trip while the client polls the snapshot in a tight loop: p50 "
            f"{summarize([t.round_trip * MS for t in sf]).p50:.1f} ms vs bare "
            f"{summarize([t.round_trip * MS for t in base]).p50:.1f} ms (the poller shares this process's CPU)"
        )

        print(f"[1c] {plan.e2e_steps} turns seen on an open events() stream, interleaved", flush=True)
        jitter = random.Random(7)
        sessions = CountingSessions(with_payload_store(self.client), self.flow)
        sf_e2e = []
        bare_e2e = []
        sf_ids = []
        for index in range(plan.e2e_steps):
            if index % plan.rotate == 0:
                await self.close_streams()
                session = await self.new_session(sessions)
                bare = await self.new_bare()
                sf_ids.append(session.session_id)
            assert session is not None and bare is not None
            # A UI's stream polls on its own clock: send at a random phase of its 0.1 s poll.
            sf_ns, bare_ns = await alternate(
                index, _after(jitter.uniform(0.0, 0.1), session.turn("text")), bare.run()
            )
            sf_e2e.append(sf_ns[0] * MS)
            bare_e2e.append(bare_ns * MS)
        await self.close_streams()
        self._compare(
            "1. client e2e: send_user_message -> turn_completed on events() (poll 0.1 s) vs execute_update, ms",
            sf_e2e,
            bare_e2e,
        )
        self.note(
            f"events() issued {sessions.queries} list_agent_events queries over {plan.e2e_steps} text turns; "
            f"workflow tasks per turn with the stream open: {_histogram(await self._tasks_per_update(sf_ids))}"
        )

    async def _measured_turn(self, session: Session, grown: list[tuple[int, int]]) -> None:
        before = await session.history_point(self.client)
        await session.turn_tailed("text")
        added = growth(before, await session.history_point(self.client))
        if added is not None:
            grown.append(added)

    async def _measured_step(self, bare: Bare, grown: list[tuple[int, int]]) -> None:
        before = await history_point(self.client, bare.handle.id)
        await bare.run()
        added = growth(before, await history_point(self.client, bare.handle.id))
        if added is not None:
            grown.append(added)

    def _phases(self, what: str, sf: Sequence[ActivityTiming], base: Sequence[ActivityTiming]) -> None:
        self.note(f"where the time goes, {what} (p50 ms):")
        for phase in sf[0].phases:
            a = percentile([t.phases[phase] * MS for t in sf], 50)
            b = percentile([t.phases[phase] * MS for t in base], 50)
            self.note(f"    {phase:40s} {a:7.2f} vs {b:7.2f}  ({a - b:+.2f})")

    def _compare_counts(
        self, metric: str, sf: Sequence[tuple[int, int]], base: Sequence[tuple[int, int]], goal: str = "-"
    ) -> None:
        a = percentile([float(size) for _, size in sf], 50)
        b = percentile([float(size) for _, size in base], 50)
        events_a = percentile([float(e) for e, _ in sf], 50)
        events_b = percentile([float(e) for e, _ in base], 50)
        self.rows.append(
            Row(
                metric,
                f"{a:.0f} B ({events_a:.0f} events)",
                f"{b:.0f} B ({events_b:.0f} events)",
                f"{a / b:.2f}",
                goal,
                "-",
            )
        )
        print(f"  {metric}: {a:.0f} B vs {b:.0f} B", flush=True)

    # -- 2. a full turn with tools ----------------------------------------------------------------

    async def full_turn(self) -> None:
        plan = self.plan
        print(
            f"[2] {plan.tool_turns} turns model -> 2 parallel reads -> model, bare chains, and bare chains "
            "whose tools heartbeat once, interleaved"
        )
        sf_ids: list[str] = []
        local_ids: list[str] = []
        bare_ids: list[str] = []
        beating_ids: list[str] = []
        session: Session | None = None
        local: Session | None = None
        bare: Bare | None = None
        beating: Bare | None = None
        sf_growth: list[tuple[int, int]] = []
        local_growth: list[tuple[int, int]] = []
        for index in range(plan.tool_turns):
            if index % plan.rotate == 0:
                session = await self.new_session(follow=False, tail=True)
                local = await self.new_session(self.local_sessions, follow=False, tail=True)
                bare = await self.new_bare()
                beating = await self.new_bare(heartbeat=True)
                sf_ids.append(session.session_id)
                local_ids.append(local.session_id)
                bare_ids.append(bare.handle.id)
                beating_ids.append(beating.handle.id)
            assert session is not None and local is not None and bare is not None and beating is not None
            before = (await session.history_point(self.client), await local.history_point(self.client))
            await in_rotation(
                index,
                session.turn_tailed("tools", last_step="model-2"),
                local.turn_tailed("tools", last_step="model-2"),
                bare.run(chain=True),
                beating.run(chain=True),
            )
            for start, sess, into in ((before[0], session, sf_growth), (before[1], local, local_growth)):
                added = growth(start, await sess.history_point(self.client))
                if added is not None:
                    into.append(added)
        sf_turns: list[float] = []
        sf_spans: list[float] = []
        sf_parts: list[tuple[float, float, float]] = []
        for timings in [await self._timings([workflow_id]) for workflow_id in sf_ids]:
            for turn in {t.activity_id.split("/")[0] for t in timings}:
                steps = {
                    t.activity_id.split("/", 1)[1]: t for t in timings if t.activity_id.startswith(turn + "/")
                }
                first, last = steps["model-1"], steps["model-2"]
                tools = [t for name, t in steps.items() if name.startswith("tool/")]
                sf_turns.append((last.wft_completed - first.scheduled) * MS)
                sf_spans.append((last.wft_completed - first.origin_scheduled) * MS)
                sf_parts.append(_parts(first, tools, last))
        critical, bare_spans, bare_parts = await self._chains(bare_ids)
        beating_critical, _, beating_parts = await self._chains(beating_ids)
        local_turns: list[float] = []
        for timings in [await self._timings([workflow_id]) for workflow_id in local_ids]:
            # Local reads are markers, not activities: the turn is model-1 scheduled -> model-2 processed.
            models = {t.activity_id: t for t in timings}
            for turn in {t.activity_id.split("/")[0] for t in timings}:
                first, last = models.get(f"{turn}/model-1"), models.get(f"{turn}/model-2")
                if first is not None and last is not None:
                    local_turns.append((last.wft_completed - first.scheduled) * MS)
        self._compare(
            "2. full turn model -> 2 parallel reads -> model (history) vs bare model + max(a, b) + model, ms",
            sf_turns,
            critical,
            goal=0.80,
        )
        self._compare(
            "2. same turn, reads as local steps (ToolPolicy.local_timeout) vs the bare chain, ms",
            local_turns,
            critical,
            goal=0.80,
        )
        self._compare(
            "2. same turn, reads as local steps vs as regular steps (both sessionflow), ms",
            local_turns,
            sf_turns,
        )
        self._compare_counts(
            "2. history added per tool turn, reads as local steps vs as regular steps (describe(), p50)",
            local_growth,
            sf_growth,
        )
        self._compare(
            "2. same, from the WFT that takes the update (server-side turn), ms", sf_spans, bare_spans
        )
        self._compare(
            "2. bare chain whose tools heartbeat once at start (as sessionflow's tool step) vs plain bare, ms",
            beating_critical,
            critical,
        )
        labels = ("first model step", "max of the 2 parallel tools", "second model step")
        self.note(
            "critical path of a tool turn, p50 round trip per part (ms): sessionflow vs bare "
            "[bare with heartbeating tools]:"
        )
        for index, label in enumerate(labels):
            a = percentile([p[index] for p in sf_parts], 50)
            b = percentile([p[index] for p in bare_parts], 50)
            c = percentile([p[index] for p in beating_parts], 50)
            self.note(f"    {label:40s} {a:7.2f} vs {b:7.2f}  ({a - b:+.2f})  [{c:.2f}]")

    async def _chains(
        self, workflow_ids: Sequence[str]
    ) -> tuple[list[float], list[float], list[tuple[float, float, float]]]:
        """Critical path (sum of round trips), server-side span and parts of every bare chain."""
        critical: list[float] = []
        spans: list[float] = []
        parts: list[tuple[float, float, float]] = []
        for timings in [await self._timings([workflow_id]) for workflow_id in workflow_ids]:
            by_number = {int(t.activity_id.rsplit("-", 1)[1]): t for t in timings}
            for number, timing in by_number.items():
                if timing.activity_id.startswith("chain-model-a-") and number + 3 in by_number:
                    a, b, c, d = (by_number[number + k] for k in range(4))
                    critical.append((a.round_trip + max(b.round_trip, c.round_trip) + d.round_trip) * MS)
                    spans.append((d.wft_completed - a.origin_scheduled) * MS)
                    parts.append(_parts(a, [b, c], d))
        return critical, spans, parts

    # -- 3. and 4. a long session -----------------------------------------------------------------

    async def long_session(self) -> None:
        plan = self.plan
        turns, window = plan.long_turns, plan.window
        print(
            f"[3,4] one session of {turns} turns and a bare workflow of {turns} update steps, interleaved; "
            f"their last {window} also interleaved with a fresh session's and a fresh bare workflow's first"
        )
        long = await self.new_session(follow=False, tail=True)
        long_bare = await self.new_bare()
        points: dict[int, HistoryPoint] = {0: await long.history_point(self.client)}
        fresh: Session | None = None
        fresh_bare: Bare | None = None
        for number in range(1, turns + 1):
            if number == turns - window + 1:
                fresh = await self.new_session(follow=False, tail=True)
                fresh_bare = await self.new_bare()
            await alternate(number, long.turn_tailed("text"), long_bare.run())
            points[number] = await long.history_point(self.client)
            if fresh is not None and fresh_bare is not None:
                await alternate(number, fresh_bare.run(), fresh.turn_tailed("text"))
            if number % 50 == 0:
                print(f"  turn {number}: {points[number].events} events, {points[number].size} B", flush=True)
        assert fresh is not None and fresh_bare is not None

        def added(first: int, last: int) -> list[tuple[int, int]]:
            pairs = [growth(points[n - 1], points[n]) for n in range(first, last + 1)]
            return [p for p in pairs if p is not None]

        self.note(
            f"long session: {len(long.run_ids)} run(s) (continue-as-new after "
            f"{self.flow.continue_as_new_after_events} events or when Temporal suggests it); at turn {turns} "
            f"the current run holds {points[turns].events} events, {points[turns].size} B"
        )
        early_window = (max(1, 10 - window // 2 + 1), max(1, 10 - window // 2 + 1) + window - 1)
        late_window = (turns - window + 1, turns)
        self._compare_counts(
            f"3. history added per text turn, turns {late_window[0]}-{late_window[1]} vs turns "
            f"{early_window[0]}-{early_window[1]} (describe(), p50)",
            added(*late_window),
            added(*early_window),
            goal="~1.00 (constant)",
        )
        exact = {n: growth(points[n - 1], points[n]) for n in (10, turns)}
        self.note(
            "history added by exactly turn 10 and turn "
            f"{turns} (events, bytes): {exact[10]} and {exact[turns]} (None = continued as new)"
        )
        timings = await activity_timings(self.client, long.session_id, long.run_ids)
        by_turn = {
            int(t.activity_id.split("/")[0].removeprefix("turn-")): t
            for t in timings
            if t.activity_type == RUN_MODEL
        }
        late = [by_turn[n] for n in range(late_window[0], late_window[1] + 1)]
        early = [by_turn[n] for n in range(1, window + 1)]
        young = await self._timings([fresh.session_id], RUN_MODEL)
        bare_steps = await self._timings([long_bare.handle.id], BARE_STEP)
        bare_by_step = {int(t.activity_id.removeprefix("step-")): t for t in bare_steps}
        bare_late = [bare_by_step[n] for n in range(late_window[0], late_window[1] + 1)]
        bare_young = await self._timings([fresh_bare.handle.id], BARE_STEP)
        label = f"turns {late_window[0]}-{late_window[1]}"
        self._compare(
            f"4. per-step round trip, long session {label} vs a fresh session's turns 1-{window} "
            "(interleaved), ms",
            [t.round_trip * MS for t in late],
            [t.round_trip * MS for t in young],
            goal=1.2,
        )
        self._compare(
            f"4. same for bare Temporal: steps {late_window[0]}-{late_window[1]} of a long workflow vs a "
            f"fresh one's 1-{window}, ms",
            [t.round_trip * MS for t in bare_late],
            [t.round_trip * MS for t in bare_young],
        )
        self._compare(
            f"4. per-step round trip, long session {label} vs its own turns 1-{window} (earlier in the run), ms",
            [t.round_trip * MS for t in late],
            [t.round_trip * MS for t in early],
        )
        self._compare(
            f"4. server-side turn (update WFT -> result processed), long {label} vs fresh 1-{window}, ms",
            [(t.wft_completed - t.origin_scheduled) * MS for t in late],
            [(t.wft_completed - t.origin_scheduled) * MS for t in young],
        )
        self._compare(
            f"4. same for bare Temporal (update WFT -> result processed), long {label} vs fresh, ms",
            [(t.wft_completed - t.origin_scheduled) * MS for t in bare_late],
            [(t.wft_completed - t.origin_scheduled) * MS for t in bare_young],
        )
        self._compare(
            f"4. the update's workflow task (WFT started -> RunModel scheduled), long {label} vs fresh, ms",
            [(t.scheduled - t.origin_started) * MS for t in late],
            [(t.scheduled - t.origin_started) * MS for t in young],
        )
        self._compare(
            f"4. same for bare Temporal (WFT started -> activity scheduled), long {label} vs fresh, ms",
            [(t.scheduled - t.origin_started) * MS for t in bare_late],
            [(t.scheduled - t.origin_started) * MS for t in bare_young],
        )
        self._phases(f"RunModel at {label} vs a fresh session", late, young)
        self._phases(f"bare step at {label} vs a fresh bare workflow", bare_late, bare_young)
        self._prefix_digest_cost(2 * turns)

    def _prefix_digest_cost(self, messages: int) -> None:
        """Time what the workflow recomputes when it schedules RunModel: the digest of the prefix."""
        stored = [
            AgentMessage(
                sequence=n,
                turn_id=f"turn-{(n + 1) // 2}",
                message=FrameworkMessage(
                    role=MessageRole.USER if n % 2 else MessageRole.ASSISTANT,
                    framework_item={
                        "role": "user" if n % 2 else "assistant",
                        "content": f"Answer to turn-{n}.",
                    },
                    text=f"Answer to turn-{n}.",
                ),
            )
            for n in range(1, messages + 1)
        ]
        costs: list[str] = []
        rounds = 5
        for count in (20, messages - 2):
            started = time.thread_time_ns()
            for _ in range(rounds):
                digest = ""
                for message in stored[:count]:
                    digest = message_digest(digest, message)
            costs.append(f"{(time.thread_time_ns() - started) / rounds * MS:.1f} ms for {count} messages")
        self.note(
            "recomputing the prefix digest from scratch with message_digest (what the workflow did for "
            "every RunModel it scheduled before it kept the digests at the turn's start and at the index), "
            f"thread CPU time: {'; '.join(costs)}"
        )

    # -- 5. live deltas ---------------------------------------------------------------------------

    async def deltas(self) -> None:
        plan = self.plan
        prompt = f"stream count={plan.delta_count} interval_us={plan.delta_interval_us}"
        spacing = plan.delta_interval_us / 1000
        print(
            f"[5] {plan.delta_turns} turn(s) of {plan.delta_count} deltas {spacing:.0f} ms apart per transport"
        )
        bus = self.flow.delta_transport
        assert isinstance(bus, InProcessDeltaBus)
        counting = CountingSessions(with_payload_store(self.client), self.flow)
        bus_session = await self.new_session(counting)
        fallback_session = await self.new_session(self.fallback_sessions)
        assert bus_session.follower is not None
        await bus_session.follower.subscribed(bus)
        await bus_session.turn("text")
        await fallback_session.turn("text")
        live: list[float] = []
        fallback = _DeltaStats()
        queries = 0
        for _ in range(plan.delta_turns):
            already = counting.queries
            _, events = await bus_session.turn(prompt)
            queries += counting.queries - already
            live.extend(latency * MS for latency, _ in _delta_latencies(events))
            _, events = await fallback_session.turn(prompt)
            fallback.add(events, plan.delta_count)
        a = summarize(live)
        self.rows.append(
            Row(
                "5a. live delta latency, in-process bus: runner write -> events() receipt (p50 / p99), ms",
                f"{a.p50:.2f} / {a.p99:.2f} (n={a.n})",
                "-",
                "-",
                "-",
                "-",
            )
        )
        print(f"  in-process bus: p50 {a.p50:.2f} ms, p99 {a.p99:.2f} ms over {a.n} deltas", flush=True)
        self.note(
            f"events() made {queries / plan.delta_turns:.0f} list_agent_events queries "
            f"per streamed turn of {plan.delta_count} live deltas (it re-reads the durable log after every "
            "live batch)"
        )
        duration = plan.delta_count * plan.delta_interval_us / 1e6
        fallback.report(self, f"{plan.delta_count} deltas over {duration:.1f} s")
        if plan.long_fallback:
            long_stream = _DeltaStats()
            _, events = await fallback_session.turn("stream count=150 interval_us=100000")
            long_stream.add(events, 150)
            long_stream.report(self, "150 deltas over 15 s")
        await self.close_streams()

    # -- 6. history cost of a streamed answer ----------------------------------------------------

    async def streamed_answer(self) -> None:
        repeats = 2 if self.plan.quick else 3
        print(
            f"[6] a 2,000-token answer (2,000 deltas over 2 s), {repeats} times each: "
            "in-process bus vs fallback vs not streamed"
        )
        bus = self.flow.delta_transport
        assert isinstance(bus, InProcessDeltaBus)
        streamed = "answer tokens=2000 stream=1 duration_ms=2000"
        counting = CountingSessions(with_payload_store(self.client), self.flow)
        cases = {
            "in-process bus": (await self.new_session(counting), streamed),
            "fallback": (await self.new_session(self.fallback_sessions), streamed),
            "not streamed": (await self.new_session(), "answer tokens=2000 stream=0 duration_ms=2000"),
        }
        for session, _ in cases.values():
            assert session.follower is not None
            if session.sessions is not self.fallback_sessions:
                await session.follower.subscribed(bus)
            await session.turn("text")
        added: dict[str, list[tuple[int, int]]] = {name: [] for name in cases}
        queries = 0
        for _ in range(repeats):
            for name, (session, prompt) in cases.items():
                before = await session.history_point(self.client)
                already = counting.queries
                await session.turn(prompt)
                if name == "in-process bus":
                    queries += counting.queries - already
                await asyncio.sleep(0.5)  # let a fallback signal still in flight land
                grown = growth(before, await session.history_point(self.client))
                if grown is None:
                    raise RuntimeError(f"{session.session_id} continued as new during the measured turn")
                added[name].append(grown)
        await self.close_streams()
        # The fewest events of the repeats: a query can land during BuildUserMessage and add
        # one workflow task (3 events) to any turn, streamed or not.
        least = {name: min(values) for name, values in added.items()}
        plain = least["not streamed"]
        for name, goal, limit in (
            ("in-process bus", "+0 events", 0),
            ("fallback", "<= +16 events (4 signals)", 16),
        ):
            events, size = least[name]
            extra = events - plain[0]
            self.rows.append(
                Row(
                    f"6. history added by one 2,000-delta answer, {name} vs not streamed (fewest of {repeats})",
                    f"{events} events, {size} B",
                    f"{plain[0]} events, {plain[1]} B",
                    f"{extra:+d} events, {size / plain[1]:.2f}x bytes",
                    goal,
                    "yes" if extra <= limit else "NO",
                )
            )
        for name, values in added.items():
            self.note(f"2,000-token answer, {name}: (events, bytes) added per repeat {values}")
        self.note(
            f"2,000-token answer on the in-process bus: the client's events() made {queries / repeats:.0f} "
            "list_agent_events queries per answer (one per live batch it received)"
        )


def _parts(
    first: ActivityTiming, tools: Sequence[ActivityTiming], last: ActivityTiming
) -> tuple[float, float, float]:
    return first.round_trip * MS, max(t.round_trip for t in tools) * MS, last.round_trip * MS


def _histogram(values: Sequence[int]) -> str:
    counts = {value: values.count(value) for value in sorted(set(values))}
    return ", ".join(f"{count}x {value}" for value, count in counts.items())


class _DeltaStats:
    """Fallback deltas that came through the durable stream, and how many never did."""

    def __init__(self) -> None:
        self.delivered: list[float] = []
        self.written = 0
        self.batches = 0

    def add(self, events: Sequence[tuple[int, AgentEvent]], written: int) -> None:
        self.written += written
        seen = _delta_latencies(events)
        self.batches += len({event.offset for _, event in seen})
        self.delivered.extend(latency * MS for latency, _ in seen)

    def report(self, bench: Bench, what: str) -> None:
        a = summarize(self.delivered)
        share = len(self.delivered) / self.written if self.written else 0.0
        bench.rows.append(
            Row(
                f"5b. delta latency, fallback (no subscriber on the worker's bus), {what} (p50 / p99), ms",
                f"{a.p50:.0f} / {a.p99:.0f} (n={a.n}: {share:.0%} of deltas, {self.batches} batches)",
                "-",
                "-",
                "0.5-15 s by design",
                "yes" if a.n and a.p99 <= 15_000 else "NO",
            )
        )
        print(
            f"  fallback, {what}: p50 {a.p50:.0f} ms, p99 {a.p99:.0f} ms over {a.n} deltas "
            f"({share:.0%} delivered, {self.batches} batches)",
            flush=True,
        )
        if share < 1.0:
            bench.note(
                f"fallback, {what}: {1 - share:.0%} of the deltas were written after the last batch went out; "
                "they never reach the stream (by design, the stored answer carries the text at turn_completed)"
            )


def _delta_latencies(events: Sequence[tuple[int, AgentEvent]]) -> list[tuple[int, AgentEvent]]:
    """(receipt - write ns, event) for every stamped text delta received."""
    latencies: list[tuple[int, AgentEvent]] = []
    for received_at, event in events:
        if event.type is AgentEventType.TEXT_DELTA:
            text = str(event.data.get("text", ""))
            latencies.extend((received_at - stamp, event) for _, stamp in parse_stamps(text))
    return latencies


def _cell(summary: Summary) -> str:
    return f"{summary.p50:.1f} (p95 {summary.p95:.1f})"


# -- running it ------------------------------------------------------------------------------


def machine_info() -> list[str]:
    binary = find_temporal_binary()
    try:
        server = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        server = "unknown"
    load = os.getloadavg()
    return [
        f"cpus: {os.cpu_count()} (usable {len(os.sched_getaffinity(0))}), load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        f"python {platform.python_version()} on {platform.platform()}",
        f"temporalio {importlib.metadata.version('temporalio')}, {server}",
    ]


def print_table(rows: Sequence[Row]) -> None:
    header = Row("metric", "sessionflow", "baseline", "ratio", "goal", "met?")
    cells: list[Callable[[Row], str]] = [
        lambda r: r.metric,
        lambda r: r.sessionflow,
        lambda r: r.baseline,
        lambda r: r.ratio,
        lambda r: r.goal,
        lambda r: r.met,
    ]
    ordered = sorted(rows, key=lambda row: row.metric.split(".", 1)[0])  # stable: by metric number
    for row in [header, Row("---", "---", "---", "---", "---", "---"), *ordered]:
        print("| " + " | ".join(cell(row) for cell in cells) + " |")


async def run(plan: Plan) -> None:
    started = time.monotonic()
    print("machine:")
    for line in machine_info():
        print(f"  {line}")
    with tempfile.TemporaryDirectory(prefix="sessionflow-bench-") as tmp:
        server = DevServer(DevServerConfig(data_dir=Path(tmp)))
        handle = await server.start()
        try:
            client = await handle.connect()
            runner = ZeroLatencyRunner()
            flow = AgentSessionFlow(runner, flow_type="bench-sf")
            # Deltas of this flow go to a bus nobody subscribes to, so they take the fallback;
            # its client reads the session through a flow object with another (empty) bus.
            fallback_flow = AgentSessionFlow(
                runner,
                flow_type="bench-sf-fallback",
                delta_transport=InProcessDeltaBus(),
                delta_fallback=True,
            )
            reader_flow = AgentSessionFlow(
                runner, flow_type="bench-sf-fallback", delta_transport=InProcessDeltaBus()
            )
            # The same runner with both reads as local steps (issue 25's lever), its own queue.
            local_reads = ToolPolicy(effect=ToolEffect.READ, local_timeout=10)
            local_flow = AgentSessionFlow(
                runner,
                flow_type="bench-sf-local",
                options=AgentSessionOptions(tool_policies={"read_a": local_reads, "read_b": local_reads}),
            )
            stop = asyncio.Event()
            serving = asyncio.create_task(
                serve_agent_flows(client, [flow, fallback_flow, local_flow], stop=stop)
            )
            bare_worker = Worker(
                client,
                task_queue=BARE_TASK_QUEUE,
                workflows=[BareWorkflow],
                activities=[bare_step],
                # As sessionflow's worker: sandboxed, its own modules passed through.
                workflow_runner=SandboxedWorkflowRunner(
                    restrictions=SandboxRestrictions.default.with_passthrough_modules("sessionflow", "bench")
                ),
                max_concurrent_activities=100,
                max_concurrent_local_activities=100,
                max_cached_workflows=1000,
            )
            bare_serving = asyncio.create_task(bare_worker.run())
            bench = Bench(
                plan=plan,
                client=client,
                flow=flow,
                # With the payload store, as `connect()` gives a user: the client then builds
                # the user's message, and the turn runs no BuildUserMessage step.
                sessions=AgentSessionClient(with_payload_store(client), flow),
                fallback_sessions=AgentSessionClient(with_payload_store(client), reader_flow),
                local_sessions=AgentSessionClient(with_payload_store(client), local_flow),
                prefix=f"bench-{time.time_ns():x}",
            )
            try:
                print(
                    f"dev server {handle.address} ready after {time.monotonic() - started:.1f} s; warming up",
                    flush=True,
                )
                await bench.warm_up()
                await bench.per_step()
                await bench.full_turn()
                await bench.long_session()
                await bench.deltas()
                await bench.streamed_answer()
            finally:
                stop.set()
                await serving
                await bare_worker.shutdown()
                await bare_serving
        finally:
            await server.stop()
    print()
    print(f"results ({'--quick' if plan.quick else 'full run'}, {time.monotonic() - started:.0f} s):")
    print_table(bench.rows)
    print()
    print("machine:")
    for line in machine_info():
        print(f"  {line}")
    if bench.notes:
        print("notes:")
        for text in bench.notes:
            print(f"  - {text}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.overhead", description="sessionflow overhead vs bare Temporal, side by side"
    )
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (under a minute)")
    args = parser.parse_args(argv)
    asyncio.run(run(Plan.make(bool(args.quick))))


if __name__ == "__main__":
    main(sys.argv[1:])
