"""Shared pieces of the benchmarks: a zero-latency runner, a bare Temporal baseline, history timing.

Nothing here measures by itself; `bench.overhead` drives it.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.api.workflowservice.v1 import GetWorkflowExecutionHistoryRequest
from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.service import RPCError, RPCStatusCode

with workflow.unsafe.imports_passed_through():
    from sessionflow import AgentUsage, MessageRole, ToolEffect
    from sessionflow.kit import (
        AgentFrameworkRunner,
        AgentTurnContext,
        AgentTurnOutcome,
        DeferredToolCall,
        DeferredToolExecution,
        FrameworkMessage,
        ToolCallsRequested,
        ToolExecutionResult,
        TurnCompleted,
    )

__all__ = [
    "BARE_TASK_QUEUE",
    "ActivityTiming",
    "BareStep",
    "BareWorkflow",
    "HistoryTail",
    "Summary",
    "ZeroLatencyRunner",
    "bare_step",
    "command",
    "parse_activity_timings",
    "parse_stamps",
    "percentile",
    "summarize",
    "workflow_tasks_per_update",
]

# -- statistics ------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass(frozen=True)
class Summary:
    """Median, p95 and p99 of one sample set (in whatever unit the samples are)."""

    n: int
    p50: float
    p95: float
    p99: float

    def scaled(self, factor: float) -> Summary:
        return Summary(self.n, self.p50 * factor, self.p95 * factor, self.p99 * factor)


def summarize(values: Sequence[float]) -> Summary:
    return Summary(len(values), percentile(values, 50), percentile(values, 95), percentile(values, 99))


# -- the zero-latency runner -----------------------------------------------------------------


def command(text: str) -> tuple[str, dict[str, int]]:
    """Parse a benchmark user message: `<kind> key=value ...` (values are integers)."""
    kind, *pairs = text.split()
    options: dict[str, int] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        options[key] = int(value)
    return kind, options


_STAMP = re.compile(r"(\d+)@(\d+)")


def parse_stamps(text: str) -> list[tuple[int, int]]:
    """(index, perf_counter_ns at write) of every stamped delta in `text` (batches hold several)."""
    return [(int(m.group(1)), int(m.group(2))) for m in _STAMP.finditer(text)]


def _assistant(text: str) -> FrameworkMessage:
    return FrameworkMessage(
        role=MessageRole.ASSISTANT, framework_item={"role": "assistant", "content": text}, text=text
    )


def turn_prompt(turn: AgentTurnContext) -> str:
    """The running turn's user message: the script the zero-latency runners follow."""
    return next(
        m.message.text or ""
        for m in reversed(turn.messages)
        if m.turn_id == turn.turn_id and m.message.role is MessageRole.USER
    )


class ZeroLatencyRunner(AgentFrameworkRunner):
    """An `AgentFrameworkRunner` whose "model" answers at once from a tiny deterministic script.

    The script is the user message of the turn, `<kind> key=value ...`:

    - `text`: one final answer (a short sentence).
    - `tools`: first call asks for two `read` tools (`read_a`, `read_b`) in parallel; the
      resumed call answers with their outputs.
    - `stream count=N interval_us=U`: writes N text deltas, U microseconds apart, each
      `"<i>@<time.perf_counter_ns()> "` so a reader in the same process can compute the
      delivery latency (`parse_stamps`), then answers.
    - `answer tokens=N stream=0|1 duration_ms=D`: a final answer of N "tokens" that takes D ms;
      with `stream=1` each token is also written as one delta while it "generates".

    Every call reports an `AgentUsage`. Usage::

        flow = AgentSessionFlow(ZeroLatencyRunner(), flow_type="bench")
        await sessions.send_user_message(session_id, "tools")

    It keeps no state between calls: everything comes from the turn context.
    """

    def build_user_message(self, text: str) -> FrameworkMessage:
        return FrameworkMessage(
            role=MessageRole.USER, framework_item={"role": "user", "content": text}, text=text
        )

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        kind, options = command(turn_prompt(turn))
        usage = AgentUsage(requests=1, input_tokens=len(turn.messages) * 8, output_tokens=8)
        if kind == "tools":
            return self._tools_step(turn, usage)
        if kind == "stream":
            count, interval = options.get("count", 200), options.get("interval_us", 5000) / 1e6
            for index in range(count):
                turn.events.write_text_delta(f"{index}@{time.perf_counter_ns()} ")
                await asyncio.sleep(interval)
            return TurnCompleted(new_messages=[_assistant(f"streamed {count} deltas")], usage=usage)
        if kind == "answer":
            return await self._answer(turn, options)
        return TurnCompleted(new_messages=[_assistant(f"Answer to {turn.turn_id}.")], usage=usage)

    @staticmethod
    def _tools_step(turn: AgentTurnContext, usage: AgentUsage) -> AgentTurnOutcome:
        names = ("read_a", "read_b")
        if turn.framework_run_state is None:
            calls = [
                DeferredToolCall(
                    tool_call_id=f"call-{name}",
                    tool_name=name,
                    arguments=json.dumps({"path": f"/data/{name}.txt"}),
                    policy=turn.resolve_tool_policy(name, ToolEffect.READ),
                )
                for name in names
            ]
            return ToolCallsRequested(
                framework_run_state=json.dumps({"step": 1}), tool_calls=calls, usage=usage
            )
        request = {"role": "assistant", "tool_calls": [f"call-{name}" for name in names]}
        messages = [
            FrameworkMessage(role=MessageRole.ASSISTANT, framework_item=request, text="calls read_a, read_b")
        ]
        for name in names:
            output = turn.recorded_tool_call(f"call-{name}").output or ""
            item = {"role": "tool", "tool_call_id": f"call-{name}", "content": output}
            messages.append(FrameworkMessage(role=MessageRole.TOOL, framework_item=item, text=output))
        messages.append(_assistant("Both files read."))
        return TurnCompleted(new_messages=messages, usage=usage)

    @staticmethod
    async def _answer(turn: AgentTurnContext, options: dict[str, int]) -> AgentTurnOutcome:
        tokens = options.get("tokens", 2000)
        streamed = bool(options.get("stream", 0))
        ticks = max(1, options.get("duration_ms", 2000) // 10)
        per_tick = max(1, math.ceil(tokens / ticks))
        pieces = [f"tok{i} " for i in range(tokens)]
        for start in range(0, tokens, per_tick):
            if streamed:
                for piece in pieces[start : start + per_tick]:
                    turn.events.write_text_delta(piece)
            await asyncio.sleep(0.01)
        usage = AgentUsage(requests=1, input_tokens=len(turn.messages) * 8, output_tokens=tokens)
        return TurnCompleted(new_messages=[_assistant("".join(pieces))], usage=usage)

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        return ToolExecutionResult(output=f"contents of {call.tool_call.tool_name}")


# -- the bare Temporal baseline --------------------------------------------------------------

BARE_TASK_QUEUE = "bench-bare"


@dataclass(frozen=True, kw_only=True)
class BareStep:
    """Input of the no-op activity: `data` travels in, `reply_bytes` characters come back.

    With `heartbeat`, the chain's tool activities heartbeat once before they return, as
    sessionflow's tool step does before it calls the tool.
    """

    data: str
    reply_bytes: int
    heartbeat: bool = False


@activity.defn(name="bench.BareStep")
async def bare_step(step: BareStep) -> str:
    if step.heartbeat:
        activity.heartbeat()
    return "r" * step.reply_bytes


# The same activity options as sessionflow's RunModel with default SessionTimings, so the
# only difference left is what sessionflow does around the call.
_START_TO_CLOSE = timedelta(minutes=15)
_SCHEDULE_TO_CLOSE = timedelta(minutes=30)
_HEARTBEAT_TIMEOUT = timedelta(minutes=2)
_RETRY = RetryPolicy(maximum_attempts=3, initial_interval=timedelta(seconds=1))


@workflow.defn(name="bench.Bare")
class BareWorkflow:
    """Waits for updates; `step` runs one no-op activity, `chain` runs a, (b || c), d."""

    def __init__(self) -> None:
        self._stopped = False
        self._steps = 0

    @workflow.run
    async def run(self) -> int:
        await workflow.wait_condition(lambda: self._stopped)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self._steps

    async def _one(self, step: BareStep, name: str) -> str:
        self._steps += 1
        return await workflow.execute_activity(
            bare_step,
            step,
            activity_id=f"{name}-{self._steps}",
            start_to_close_timeout=_START_TO_CLOSE,
            schedule_to_close_timeout=_SCHEDULE_TO_CLOSE,
            heartbeat_timeout=_HEARTBEAT_TIMEOUT,
            retry_policy=_RETRY,
        )

    @workflow.update(name="step")
    async def step(self, step: BareStep) -> int:
        return len(await self._one(step, "step"))

    @workflow.update(name="chain")
    async def chain(self, step: BareStep) -> int:
        model = BareStep(data=step.data, reply_bytes=step.reply_bytes)
        first = await self._one(model, "chain-model-a")
        tools = await asyncio.gather(self._one(step, "chain-tool"), self._one(step, "chain-tool"))
        last = await self._one(model, "chain-model-b")
        return len(first) + sum(len(t) for t in tools) + len(last)

    @workflow.signal(name="stop")
    def stop(self) -> None:
        self._stopped = True


# -- timings from a workflow history ---------------------------------------------------------


def _ns(event: HistoryEvent) -> int:
    return event.event_time.ToNanoseconds()


@dataclass
class ActivityTiming:
    """One activity as the history saw it; every time is the event's event_time in ns.

    `wft_*` is the workflow task that processed the result (the first one after the
    ActivityTaskCompleted event); `origin_*` is the workflow task whose completion scheduled it.
    """

    activity_type: str
    activity_id: str
    origin_scheduled: int
    origin_started: int
    scheduled: int
    input_bytes: int
    started: int = 0
    completed: int = 0
    result_bytes: int = 0
    wft_scheduled: int = 0
    wft_started: int = 0
    wft_completed: int = 0
    done: bool = False

    @property
    def round_trip(self) -> int:
        """ActivityTaskScheduled -> WorkflowTaskCompleted that processed the result."""
        return self.wft_completed - self.scheduled

    @property
    def phases(self) -> dict[str, int]:
        return {
            "dispatch (scheduled->started)": self.started - self.scheduled,
            "run (started->completed)": self.completed - self.started,
            "wft dispatch (completed->wft started)": self.wft_started - self.completed,
            "wft run (wft started->completed)": self.wft_completed - self.wft_started,
        }


@dataclass
class _Wft:
    scheduled: int = 0
    started: int = 0


@dataclass
class _Parse:
    by_event: dict[int, ActivityTiming] = field(default_factory=lambda: {})
    waiting: list[ActivityTiming] = field(default_factory=lambda: [])
    current: _Wft = field(default_factory=_Wft)
    last: _Wft = field(default_factory=_Wft)


def parse_activity_timings(events: Sequence[HistoryEvent]) -> list[ActivityTiming]:
    """Every completed activity of one run's history with its timing, in scheduling order."""
    state = _Parse()
    for event in events:
        kind = event.event_type
        if kind == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
            state.current = _Wft(scheduled=_ns(event))
            for timing in state.waiting:
                timing.wft_scheduled = timing.wft_scheduled or _ns(event)
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
            state.current.started = _ns(event)
            for timing in state.waiting:
                timing.wft_started = timing.wft_started or _ns(event)
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            state.last = state.current
            for timing in state.waiting:
                timing.wft_completed = _ns(event)
                timing.done = True
            state.waiting = []
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            state.by_event[event.event_id] = ActivityTiming(
                activity_type=attrs.activity_type.name,
                activity_id=attrs.activity_id,
                origin_scheduled=state.last.scheduled,
                origin_started=state.last.started,
                scheduled=_ns(event),
                input_bytes=sum(p.ByteSize() for p in attrs.input.payloads),
            )
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started = event.activity_task_started_event_attributes
            state.by_event[started.scheduled_event_id].started = _ns(event)
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            attrs = event.activity_task_completed_event_attributes
            timing = state.by_event[attrs.scheduled_event_id]
            timing.completed = _ns(event)
            timing.result_bytes = sum(p.ByteSize() for p in attrs.result.payloads)
            state.waiting.append(timing)
    return [t for t in state.by_event.values() if t.done]


def workflow_tasks_per_update(events: Sequence[HistoryEvent]) -> list[int]:
    """Workflow tasks per accepted update: the one that accepted it and those up to the next update."""
    counts: list[int] = []
    for event in events:
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
            counts.append(0)
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED and counts:
            # Counted for the previous update: its own later tasks, and the task that takes the
            # next update (which stands in for the one that took this update).
            counts[-1] += 1
    if counts:
        counts[-1] += 1  # the last update: nobody stood in for its accepting task
    return counts


class HistoryTail:
    """Follows a workflow's history with server long-polls: it sees a step end without a query.

    Queries are answered by the worker, which runs in the benchmark's process; a client that
    polls with queries takes CPU from the steps it measures. A history long-poll is answered
    by the server alone. Follows continue-as-new into the next run.
    """

    def __init__(self, client: Client, workflow_id: str) -> None:
        self._client = client
        self._workflow_id = workflow_id
        self._token = b""
        self._activity_ids: dict[int, str] = {}
        self._completed: list[str] = []
        self.processed: set[str] = set()

    async def until_processed(self, activity_id: str, timeout: float = 120.0) -> None:
        """Wait until the workflow task after activity `activity_id`'s completion has completed."""
        async with asyncio.timeout(timeout):
            while activity_id not in self.processed:
                await self._poll()

    async def _poll(self) -> None:
        try:
            response = await self._client.workflow_service.get_workflow_execution_history(
                GetWorkflowExecutionHistoryRequest(
                    namespace=self._client.namespace,
                    execution=WorkflowExecution(workflow_id=self._workflow_id),
                    next_page_token=self._token,
                    wait_new_event=True,
                )
            )
        except RPCError as error:
            # A long poll the server ends without a new event (CANCELLED when many sessions
            # wait longer than its long-poll limit, as in bench.peers): the caller polls again.
            if error.status not in (RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED):
                raise
            return
        for event in response.history.events:
            kind = event.event_type
            if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
                self._activity_ids[event.event_id] = (
                    event.activity_task_scheduled_event_attributes.activity_id
                )
            elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
                scheduled = event.activity_task_completed_event_attributes.scheduled_event_id
                self._completed.append(self._activity_ids[scheduled])
            elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
                self.processed.update(self._completed)
                self._completed = []
        self._token = response.next_page_token
        if not self._token:  # the run closed (continued as new): the next poll reads the new run
            self._activity_ids = {}
