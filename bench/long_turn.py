"""One turn of thousands of model -> tool rounds (issue 41): sessionflow vs the OpenAI Agents plugin.

    uv run python -m bench.long_turn                     # full run: 2,000 rounds, then 40 x 1 MB
    uv run python -m bench.long_turn --quick             # smoke run: 40 rounds, 4 x 1 MB (< ~60 s)
    uv run python -m bench.long_turn --rounds 5000 --sessionflow-only

One process, one embedded dev server on its default limits (51,200 events / 50 MB per run,
2 MiB per payload; never raised), one in-process `ScriptedModelServer` that answers by what
each request holds: `lookup` call number k+1 while the request has k tool results and k < N,
then the answer. Both sides get the same replies.

1. Long turn. sessionflow: the built-in Chat Completions runner, in-process worker, the
   flow's default `continue_as_new_after_events` (so the server's suggestion decides), a
   payload store in a temp folder. The plugin: `bench/_long_turn_openai.py` in an isolated
   env, `max_turns` above N, so only the server's limits stop it. Per run of the chain:
   events and bytes (`describe()`); per round: the time from one model step's
   `ActivityTaskScheduled` to the next one's (round to round), rounds 1-100 vs the last 100.
   Tool calls are counted where they run: every call ID must run exactly once.
2. 40 x 1 MB: one model reply asks for 40 `lookup` calls at once, each returns 1,000,000
   unique characters, then the model answers.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import itertools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from bench._common import HistoryTail, percentile
from sessionflow import (
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    ToolEffect,
    connect,
    serve_agent_flows,
)
from sessionflow.builtin import ChatCompletionsRunner, tool
from sessionflow.demo import ModelReply, RecordedRequest, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import ToolInvocation
from sessionflow.temporal import PAYLOADS_ENV, DevServer, DevServerConfig, PayloadStore, find_temporal_binary

ROOT = Path(__file__).resolve().parent.parent
PEER_OPENAI = ("temporalio-openai-agents==1.1.0", "temporalio==1.35.0")
MB = 1_000_000
SF = "sessionflow (builtin runner)"
PLUGIN = "temporalio-openai-agents plugin"


# -- the model -------------------------------------------------------------------------------


def responder(model: ScriptedModelServer, key: str, rounds: int, parallel: int) -> Any:
    """Replies by what the request holds: round k+1's `parallel` calls while k < rounds, then the answer.

    The server keeps every request it was sent; a 2,000-round turn sends ~2,000 requests of up
    to a few MB each, so the responder drops them as it goes (it runs under the server's lock).
    """
    records: dict[str, list[RecordedRequest]] = model._book._records  # pyright: ignore[reportPrivateUsage]

    def reply(request: RecordedRequest) -> ModelReply:
        done = len(request.tool_results())
        records[key].clear()
        k = done // parallel
        if k >= rounds:
            return ModelReply.say(f"all {rounds} rounds done ({done} results)")
        first = k * parallel + 1
        return ModelReply.call(
            *(ScriptedToolCall(f"c{n}", "lookup", {"n": n}) for n in range(first, first + parallel))
        )

    return reply


# -- history ---------------------------------------------------------------------------------


@dataclass
class Chain:
    """The runs of one workflow ID, oldest first, with their histories."""

    runs: list[tuple[str, int, int]] = field(default_factory=lambda: [])
    """(run_id, events, bytes) per run."""
    histories: list[list[HistoryEvent]] = field(default_factory=lambda: [])
    status: str = ""


async def fetch_chain(client: Client, workflow_id: str) -> Chain:
    chain = Chain()
    ids = [e.run_id async for e in client.list_workflows(f"WorkflowId = '{workflow_id}'")]
    for run_id in ids[::-1]:
        handle = client.get_workflow_handle(workflow_id, run_id=run_id)
        info = (await handle.describe()).raw_description.workflow_execution_info
        history = await handle.fetch_history()
        chain.runs.append((run_id, info.history_length, info.history_size_bytes))
        chain.histories.append(list(history.events))
        chain.status = EventType.Name(history.events[-1].event_type).removeprefix("EVENT_TYPE_")
    return chain


def _ns(event: HistoryEvent) -> int:
    return event.event_time.seconds * 1_000_000_000 + event.event_time.nanos


def model_scheduled(chain: Chain, is_model: Any) -> list[int]:
    """Times (ns) of every model step's ActivityTaskScheduled across the chain, in order."""
    times: list[int] = []
    for events in chain.histories:
        for e in events:
            if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED and is_model(
                e.activity_task_scheduled_event_attributes
            ):
                times.append(_ns(e))
    return times


def completed_tools(chain: Chain, is_model: Any) -> int:
    count = 0
    for events in chain.histories:
        kinds = {
            e.event_id: is_model(e.activity_task_scheduled_event_attributes)
            for e in events
            if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        }
        count += sum(
            1
            for e in events
            if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
            and not kinds.get(e.activity_task_completed_event_attributes.scheduled_event_id, True)
        )
    return count


def round_ms(times: list[int]) -> list[float]:
    return [(b - a) / 1e6 for a, b in itertools.pairwise(times)]


def _marks(events: list[HistoryEvent], is_model: Any) -> list[int]:
    return [
        i
        for i, e in enumerate(events)
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and is_model(e.activity_task_scheduled_event_attributes)
    ]


def round_bytes(chain: Chain, is_model: Any) -> list[int]:
    """Bytes of each round's events (one model step's ActivityTaskScheduled to the next, in one run)."""
    sizes: list[int] = []
    for events in chain.histories:
        marks = _marks(events, is_model)
        sizes += [sum(e.ByteSize() for e in events[a:b]) for a, b in itertools.pairwise(marks)]
    return sizes


def round_breakdown(chain: Chain, is_model: Any) -> tuple[int, dict[str, tuple[int, int]]]:
    """Event types (count, bytes) from one model step's ActivityTaskScheduled to the next, a
    middle round of the longest run: where one round's events go."""
    events = max(chain.histories, key=len)
    marks = _marks(events, is_model)
    if len(marks) < 3:
        return 0, {}
    middle = len(marks) // 2
    counts: dict[str, tuple[int, int]] = {}
    for e in events[marks[middle] : marks[middle + 1]]:
        name = EventType.Name(e.event_type).removeprefix("EVENT_TYPE_")
        n, size = counts.get(name, (0, 0))
        counts[name] = (n + 1, size + e.ByteSize())
    return middle, counts


def sf_is_model(attrs: Any) -> bool:
    return str(attrs.activity_type.name).endswith("RunModel")


def plugin_is_model(attrs: Any) -> bool:
    return "model" in str(attrs.activity_type.name).lower()


def enum_name(cause: int) -> str:
    from temporalio.api.enums.v1 import WorkflowTaskFailedCause

    return WorkflowTaskFailedCause.Name(cause).removeprefix("WORKFLOW_TASK_FAILED_CAUSE_")  # pyright: ignore[reportArgumentType]


def last_failure(chain: Chain) -> str:
    """Why the chain's last run stopped, from its last events."""
    if not chain.histories:
        return "no history"
    events = chain.histories[-1]
    last = events[-1]
    kind = last.event_type
    failed = [e for e in events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED]
    wft = ""
    if failed:
        attrs = failed[-1].workflow_task_failed_event_attributes
        cause = enum_name(attrs.cause)
        wft = f"; {len(failed)} workflow task failure(s), last: {cause}: {attrs.failure.message[:300]}"
    if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
        attrs = last.workflow_execution_terminated_event_attributes
        return f"terminated: {attrs.reason}{wft}"
    if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
        return f"failed: {last.workflow_execution_failed_event_attributes.failure.message[:300]}"
    if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
        return "completed"
    return EventType.Name(kind) + wft


# -- results ---------------------------------------------------------------------------------


@dataclass
class Side:
    name: str
    rounds_asked: int
    rounds_done: int = 0
    tool_calls: int = 0
    tools_once: bool = False
    completed: bool = False
    seconds: float = 0.0
    outcome: str = ""
    chain: Chain = field(default_factory=Chain)
    first_ms: list[float] = field(default_factory=lambda: [])
    last_ms: list[float] = field(default_factory=lambda: [])
    first_bytes: list[int] = field(default_factory=lambda: [])
    last_bytes: list[int] = field(default_factory=lambda: [])
    breakdown: tuple[int, dict[str, tuple[int, int]]] = (0, {})
    versions: dict[str, str] = field(default_factory=lambda: {})
    store_bytes: int = 0
    """What the payload store gained during this side's turn (sessionflow only)."""

    def measure(self, is_model: Any) -> None:
        times = model_scheduled(self.chain, is_model)
        rounds = round_ms(times)
        self.rounds_done = completed_tools(self.chain, is_model)
        window = min(100, len(rounds) // 2) or len(rounds)
        self.first_ms, self.last_ms = rounds[:window], rounds[-window:]
        self.breakdown = round_breakdown(self.chain, is_model)
        sizes = round_bytes(self.chain, is_model)
        window = min(100, len(sizes) // 2) or len(sizes)
        self.first_bytes, self.last_bytes = sizes[:window], sizes[-window:]


# -- sessionflow -----------------------------------------------------------------------------


async def run_sessionflow(
    client: Client,
    model: ScriptedModelServer,
    *,
    name: str,
    rounds: int,
    parallel: int,
    output_bytes: int,
    max_continues: int,
    timeout: float,
) -> Side:
    key = f"sf-{uuid.uuid4().hex[:8]}"
    model.respond(key, responder(model, key, rounds, parallel))
    calls: Counter[str] = Counter()

    def lookup(n: int, invocation: ToolInvocation) -> str:
        """Look up record n."""
        calls[invocation.tool_call_id] += 1
        if output_bytes:
            seed = f"{n}|{invocation.idempotency_key}|"
            return (seed * (output_bytes // len(seed) + 1))[:output_bytes]
        return f"found {n}"

    runner = ChatCompletionsRunner(
        model="bench-model",
        tools=[tool(lookup, effect=ToolEffect.READ)],
        base_url=model.base_url(key),
        api_key="x",
    )
    flow = AgentSessionFlow(
        runner,
        flow_type=f"bench-long-turn-{key}",
        options=AgentSessionOptions(max_continues_per_turn=max_continues),
    )
    sessions = AgentSessionClient(client, flow)
    session_id = f"long-{key}"
    side = Side(name, rounds * parallel)
    store_before = folder_bytes(Path(os.environ[PAYLOADS_ENV]))
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
    started = time.perf_counter()
    try:
        await sessions.start_session(session_id, "look records up until done")
        tail = HistoryTail(client, session_id)
        await tail.until_processed(f"turn-1/model-{rounds + 1}", timeout=timeout)
        side.seconds = time.perf_counter() - started
        snapshot = await sessions.get_agent_snapshot(session_id)
        last = (snapshot.messages[-1].message.text or "") if snapshot.messages else ""
        side.completed = last.startswith(f"all {rounds} rounds done")
        side.outcome = f"answered: {last!r}"
    except TimeoutError:
        side.seconds = time.perf_counter() - started
        side.outcome = f"not done after {timeout:.0f} s"
    finally:
        stop.set()
        await worker
        model.respond(key, None)
    side.store_bytes = folder_bytes(Path(os.environ[PAYLOADS_ENV])) - store_before
    side.tool_calls = sum(calls.values())
    # Every call the model asked for ran exactly once: c1..ck, no gaps, no repeats.
    side.tools_once = set(calls) == {f"c{n}" for n in range(1, len(calls) + 1)} and set(calls.values()) <= {1}
    side.chain = await fetch_chain(client, session_id)
    side.measure(sf_is_model)
    return side


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


# -- the plugin ------------------------------------------------------------------------------


async def run_plugin(
    client: Client,
    model: ScriptedModelServer,
    address: str,
    *,
    rounds: int,
    parallel: int,
    output_bytes: int,
    timeout: float,
) -> Side:
    key = f"oa-{uuid.uuid4().hex[:8]}"
    model.respond(key, responder(model, key, rounds, parallel))
    workflow_id = f"long-{key}"
    env = {
        **os.environ,
        "OPENAI_BASE_URL": model.base_url(key),
        "OPENAI_API_KEY": "x",
        "OPENAI_AGENTS_DISABLE_TRACING": "1",
    }
    argv = [
        "uv",
        "run",
        "--isolated",
        "--no-project",
        *[a for p in PEER_OPENAI for a in ("--with", p)],
        "python",
        "bench/_long_turn_openai.py",
        address,
        workflow_id,
        str(rounds),
        str(output_bytes),
        str(timeout),
    ]
    side = Side(PLUGIN, rounds * parallel)
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, start_new_session=True
    )
    assert proc.stdout is not None
    result: dict[str, Any] = {}
    try:
        async with asyncio.timeout(timeout + 300):
            while line := await proc.stdout.readline():
                if line.startswith(b"{"):
                    data = json.loads(line)
                    if "ready" in data:
                        side.versions = data["versions"]
                    else:
                        result = data
            await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        model.respond(key, None)
    side.seconds = float(result.get("seconds", 0.0))
    side.tool_calls = int(result.get("tool_calls", 0))
    side.tools_once = side.tool_calls == int(result.get("distinct_tool_calls", -1))
    side.completed = str(result.get("answer", "")).startswith(f"all {rounds} rounds done")
    side.chain = await fetch_chain(client, workflow_id)
    side.outcome = last_failure(side.chain) if not side.completed else "completed"
    if not result:
        side.outcome = f"child exited {proc.returncode} without a result; {side.outcome}"
    side.measure(plugin_is_model)
    return side


# -- tables ----------------------------------------------------------------------------------


def _p(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{percentile(values, 50):.1f} (p95 {percentile(values, 95):.1f})"


def _b(values: list[int]) -> str:
    return f"{percentile([float(v) for v in values], 50):,.0f}" if values else "-"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "-"


def print_long(sf: Side, peer: Side | None) -> None:
    sides = [sf] + ([peer] if peer else [])
    print(f"\n### 1. one turn of {sf.rounds_asked} model -> tool rounds\n")
    print("| metric | " + " | ".join(s.name for s in sides) + " |")
    print("| --- |" + " --- |" * len(sides))

    def row(label: str, cells: list[str]) -> None:
        print(f"| {label} | " + " | ".join(cells) + " |")

    row("outcome", [s.outcome.replace("|", "/") for s in sides])
    row("rounds completed (tool results in history)", [f"{s.rounds_done} / {s.rounds_asked}" for s in sides])
    row(
        "tool calls run (each call ID once?)",
        [f"{s.tool_calls} ({'yes' if s.tools_once else 'NO'})" for s in sides],
    )
    row("runs used", [str(len(s.chain.runs)) for s in sides])
    row("history events, total / largest run", [_events(s) for s in sides])
    row("history bytes, total / largest run", [_bytes(s) for s in sides])
    row("events per round (total / rounds)", [f"{_total(s, 1) / max(1, s.rounds_done):.1f}" for s in sides])
    row("bytes per round (total / rounds)", [f"{_total(s, 2) / max(1, s.rounds_done):,.0f}" for s in sides])
    row("history bytes of one round, first 100 rounds (p50)", [_b(s.first_bytes) for s in sides])
    row("history bytes of one round, last 100 rounds (p50)", [_b(s.last_bytes) for s in sides])
    row(
        "payload store: bytes written during the turn",
        [f"{s.store_bytes:,}" if s is sf else "-" for s in sides],
    )
    row("wall time, s", [f"{s.seconds:.0f}" for s in sides])
    row("round to round, first 100 rounds, ms", [_p(s.first_ms) for s in sides])
    row("round to round, last 100 rounds, ms", [_p(s.last_ms) for s in sides])
    row(
        "last 100 / first 100 (p50)",
        [_ratio(percentile(s.last_ms, 50), percentile(s.first_ms, 50)) if s.first_ms else "-" for s in sides],
    )
    for s in sides:
        print(f"\n{s.name}: runs (events, bytes): " + ", ".join(f"({e}, {b:,})" for _, e, b in s.chain.runs))
        index, counts = s.breakdown
        if counts:
            listed = ", ".join(
                f"{k} {n} ({b:,} B)" for k, (n, b) in sorted(counts.items(), key=lambda kv: -kv[1][1])
            )
            total = sum(n for n, _ in counts.values()), sum(b for _, b in counts.values())
            print(
                f"{s.name}: one round (from model step {index + 1} of the longest run to the next): "
                f"{total[0]} events, {total[1]:,} B: {listed}"
            )


def print_big(sf: Side, peer: Side | None, output_bytes: int, parallel: int) -> None:
    sides = [sf] + ([peer] if peer else [])
    print(f"\n### 2. one turn of {parallel} tool calls returning {output_bytes / MB:g} MB each\n")
    print("| metric | " + " | ".join(s.name for s in sides) + " |")
    print("| --- |" + " --- |" * len(sides))

    def row(label: str, cells: list[str]) -> None:
        print(f"| {label} | " + " | ".join(cells) + " |")

    row("outcome", [s.outcome.replace("|", "/") for s in sides])
    row("tool results in history", [f"{s.rounds_done} / {s.rounds_asked}" for s in sides])
    row("tool calls run", [f"{s.tool_calls} ({'each once' if s.tools_once else 'REPEATS'})" for s in sides])
    row("runs used", [str(len(s.chain.runs)) for s in sides])
    row("history events, total / largest run", [_events(s) for s in sides])
    row("history bytes, total / largest run", [_bytes(s) for s in sides])
    if peer and peer.chain.runs and sf.chain.runs:
        row("history bytes vs the plugin", [_ratio(_total(sf, 2), _total(peer, 2)), "1.00"])
    row(
        "payload store: bytes written during the turn",
        [f"{s.store_bytes:,}" if s is sf else "-" for s in sides],
    )
    row("wall time, s", [f"{s.seconds:.1f}" for s in sides])


def _total(side: Side, index: int) -> int:
    return sum(int(r[index]) for r in side.chain.runs)


def _events(side: Side) -> str:
    return f"{_total(side, 1):,} / {max((r[1] for r in side.chain.runs), default=0):,}"


def _bytes(side: Side) -> str:
    return f"{_total(side, 2):,} / {max((r[2] for r in side.chain.runs), default=0):,}"


# -- main ------------------------------------------------------------------------------------


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: 40 rounds, 4 x 1 MB")
    parser.add_argument("--rounds", type=int, default=2000, help="model -> tool rounds of the long turn")
    parser.add_argument(
        "--big-calls", type=int, default=40, help="tool calls of the big-output turn (0: skip)"
    )
    parser.add_argument("--big-mb", type=float, default=1.0, help="output of each big call, MB (decimal)")
    parser.add_argument("--sessionflow-only", action="store_true", help="skip the plugin")
    parser.add_argument(
        "--max-continues",
        type=int,
        default=8,
        help="the flow's max_continues_per_turn (model calls that ask to continue; a run's move is not one)",
    )
    parser.add_argument("--timeout", type=float, default=3600.0, help="bound on each side of each case, s")
    parser.add_argument(
        "--big-timeout", type=float, default=120.0, help="bound on the plugin's big-output turn, s"
    )
    if "--quick" in sys.argv[1:]:
        parser.set_defaults(rounds=40, big_calls=4, timeout=120.0, big_timeout=20.0)
    return parser.parse_args()


def _server_version() -> str:
    try:
        done = subprocess.run(
            [str(find_temporal_binary()), "--version"], capture_output=True, text=True, check=False
        )
    except OSError:
        return "unknown"
    return done.stdout.strip()


async def main() -> None:
    args = _args()
    load_start = os.getloadavg()
    started = time.perf_counter()
    print(
        f"bench.long_turn {' '.join(sys.argv[1:])}: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="bench-long-turn-") as tmp, ScriptedModelServer() as model:
        store = Path(tmp) / "payloads"
        store.mkdir()
        os.environ[PAYLOADS_ENV] = str(store)
        server = DevServer(DevServerConfig(data_dir=Path(tmp) / "server"))
        handle = await server.start()
        try:
            client = await connect(handle.address, payloads=PayloadStore(location=str(store)))
            plain = await Client.connect(handle.address)
            big = int(args.big_mb * MB)
            common = {"max_continues": args.max_continues, "timeout": args.timeout}
            sf = await run_sessionflow(
                client, model, name=SF, rounds=args.rounds, parallel=1, output_bytes=0, **common
            )
            print(f"sessionflow long turn: {sf.outcome}, {sf.seconds:.0f} s", flush=True)
            peer = None
            if not args.sessionflow_only:
                peer = await run_plugin(
                    plain,
                    model,
                    handle.address,
                    rounds=args.rounds,
                    parallel=1,
                    output_bytes=0,
                    timeout=args.timeout,
                )
                print(f"plugin long turn: {peer.outcome}, {peer.seconds:.0f} s", flush=True)
            print_long(sf, peer)
            if args.big_calls > 0:
                sf_big = await run_sessionflow(
                    client, model, name=SF, rounds=1, parallel=args.big_calls, output_bytes=big, **common
                )
                peer_big = None
                if not args.sessionflow_only:
                    peer_big = await run_plugin(
                        plain,
                        model,
                        handle.address,
                        rounds=1,
                        parallel=args.big_calls,
                        output_bytes=big,
                        timeout=args.big_timeout,
                    )
                print_big(sf_big, peer_big, big, args.big_calls)
        finally:
            await server.stop()
    load_end = os.getloadavg()
    version = _server_version()

    print(
        f"\nmachine: cpus: {os.cpu_count()} (usable {len(os.sched_getaffinity(0))}), "
        f"load average {' '.join(f'{x:.2f}' for x in load_start)} (start) / "
        f"{' '.join(f'{x:.2f}' for x in load_end)} (end)\n"
        f"         python {platform.python_version()} on {platform.platform()}\n"
        f"         temporalio {importlib.metadata.version('temporalio')}, {version}"
        + (f"\n         plugin env: {peer.versions}" if peer and peer.versions else "")
        + f"\ntotal {time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    asyncio.run(main())
