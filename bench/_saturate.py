"""`bench.scale --saturate`: one worker process at its knee, sessionflow beside bare Temporal.

Each system gets one worker process of its own (a child, started as a host starts one) on
one embedded dev server, and the same work: sessions (workflows) of one tool turn each, the
shape of bench.peers: model step -> 2 parallel read tool steps -> model step.

- **sessionflow**: `run_agent_worker` serving `ZeroLatencyRunner` (no HTTP model); a turn is
  `start_session(id, "tools")` up to the workflow task after its second model step.
- **bare Temporal**: a workflow that runs the same four no-op activities (`bare_step`, the
  options of sessionflow's RunModel) and completes; a turn is `execute_workflow`.

The driver raises the number of turns in flight step by step (`--levels`); at each level it
runs `--per-level` turns (at least 4x the level) and records turns/s and the turn latencies.
The knee is the lowest level whose throughput is within 5% of the best level's: past it,
more concurrency only adds latency. Printed: each level's turns/s and p95 for both, the
throughput ratio at each level and at the knee, and the worker's RSS per 1,000 idle sessions
(each system's worker holds `--idle` workflows waiting, in its cache: sessions that ended a
turn, and bare workflows waiting for an update).

The two systems run alternately at each level (the order swapped from level to level), so
load on the shared machine falls on both.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from temporalio import workflow
from temporalio.client import Client

from bench._common import (
    _HEARTBEAT_TIMEOUT,  # pyright: ignore[reportPrivateUsage]
    _RETRY,  # pyright: ignore[reportPrivateUsage]
    _SCHEDULE_TO_CLOSE,  # pyright: ignore[reportPrivateUsage]
    _START_TO_CLOSE,  # pyright: ignore[reportPrivateUsage]
    BareStep,
    BareWorkflow,
    HistoryTail,
    ZeroLatencyRunner,
    bare_step,
    percentile,
)
from bench._peer_loop import rss_kib
from sessionflow import AgentSessionClient, AgentSessionFlow, connect

ROOT = Path(__file__).resolve().parent.parent
SATURATE_FLOW = "bench-saturate"
BARE_QUEUE = "bench-saturate-bare"
IDLE_QUEUE = "bench-saturate-bare-idle"
# What sessionflow's steps carry in this turn, about: the bare chain sends as much.
_STEP = BareStep(data="x" * 200, reply_bytes=200, heartbeat=True)


@workflow.defn(name="bench.BareTurn")
class BareTurnWorkflow:
    """One turn of bench.peers' shape as bare activities: a, (b || c), d; then it completes."""

    @workflow.run
    async def run(self, step: BareStep) -> int:
        model = BareStep(data=step.data, reply_bytes=step.reply_bytes)
        first = await self._one(model, "model-1")
        tools = await asyncio.gather(self._one(step, "tool-a"), self._one(step, "tool-b"))
        last = await self._one(model, "model-2")
        return len(first) + sum(len(t) for t in tools) + len(last)

    @staticmethod
    async def _one(step: BareStep, name: str) -> str:
        return await workflow.execute_activity(
            bare_step,
            step,
            activity_id=name,
            start_to_close_timeout=_START_TO_CLOSE,
            schedule_to_close_timeout=_SCHEDULE_TO_CLOSE,
            heartbeat_timeout=_HEARTBEAT_TIMEOUT,
            retry_policy=_RETRY,
        )


def _flow() -> AgentSessionFlow:
    return AgentSessionFlow(ZeroLatencyRunner(), flow_type=SATURATE_FLOW)


def sessionflow_worker_main() -> None:
    """Child: one sessionflow worker process (server from the environment), until SIGTERM."""
    from sessionflow import run_agent_worker

    run_agent_worker([_flow()])


def bare_worker_main() -> None:
    """Child: one bare Temporal worker process for both bare workflows, until stdin closes."""
    from temporalio.worker import Worker
    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

    async def run() -> None:
        client = await Client.connect(os.environ["SESSIONFLOW_SERVER_ADDRESS"])
        # As a sessionflow worker is built (`build_workers`' defaults): sandboxed with its own
        # modules passed through, 100 activity slots, 1,000 cached workflows.
        runner = SandboxedWorkflowRunner(
            restrictions=SandboxRestrictions.default.with_passthrough_modules("sessionflow", "bench")
        )
        workers = [
            Worker(
                client,
                task_queue=queue,
                workflows=[workflow_class],
                activities=[bare_step],
                workflow_runner=runner,
                max_concurrent_activities=100,
                max_concurrent_local_activities=100,
                max_cached_workflows=1000,
            )
            for queue, workflow_class in ((BARE_QUEUE, BareTurnWorkflow), (IDLE_QUEUE, BareWorkflow))
        ]
        async with workers[0], workers[1]:
            print("sessionflow worker ready", flush=True)
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)

    asyncio.run(run())


@dataclass
class Level:
    in_flight: int
    turns: int
    seconds: float
    latencies: list[float] = field(default_factory=lambda: [])

    @property
    def rate(self) -> float:
        return self.turns / self.seconds

    @property
    def p95(self) -> float:
        return percentile(self.latencies, 95)


@dataclass
class System:
    name: str
    turn: Callable[[str], Awaitable[None]]
    idle: Callable[[str], Awaitable[None]]
    pid: int
    levels: list[Level] = field(default_factory=lambda: [])
    idle_mib_per_1000: float = float("nan")

    def knee(self) -> Level:
        best = max(level.rate for level in self.levels)
        return next(level for level in self.levels if level.rate >= 0.95 * best)


async def _level(system: System, in_flight: int, turns: int) -> Level:
    gate = asyncio.Semaphore(in_flight)
    prefix = f"{system.name[:4]}-{in_flight}-{uuid.uuid4().hex[:6]}"

    async def one(index: int) -> float:
        async with gate:
            started = time.perf_counter()
            await system.turn(f"{prefix}-{index}")
            return time.perf_counter() - started

    started = time.perf_counter()
    latencies = await asyncio.gather(*(one(i) for i in range(turns)))
    return Level(
        in_flight=in_flight, turns=turns, seconds=time.perf_counter() - started, latencies=list(latencies)
    )


async def _idle_rss(system: System, count: int) -> None:
    await asyncio.sleep(1.0)
    before = rss_kib(system.pid)
    gate = asyncio.Semaphore(50)

    async def one(index: int) -> None:
        async with gate:
            await system.idle(f"idle-{system.name[:4]}-{uuid.uuid4().hex[:6]}-{index}")

    await asyncio.gather(*(one(i) for i in range(count)))
    await asyncio.sleep(2.0)
    system.idle_mib_per_1000 = (rss_kib(system.pid) - before) / 1024 * 1000 / count


def _start(argv_main: str, environment: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-c", f"from bench._saturate import {argv_main}; {argv_main}()"],
            cwd=ROOT,
            env=environment,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.PIPE,
            start_new_session=True,
        )


async def saturate(
    address: str,
    environment: dict[str, str],
    folder: Path,
    levels: list[int],
    per_level: int,
    idle: int,
    ready: Callable[[subprocess.Popen[bytes], Path], Awaitable[None]],
    stop: Callable[[list[subprocess.Popen[bytes]]], Awaitable[None]],
    profile: Path | None = None,
) -> list[System]:
    logs = [folder / "saturate-sessionflow.log", folder / "saturate-bare.log"]
    processes = [
        _start("sessionflow_worker_main", environment, logs[0]),
        _start("bare_worker_main", environment, logs[1]),
    ]
    try:
        for process, log in zip(processes, logs, strict=True):
            await ready(process, log)
        client = await connect(address, "default")
        sessions = AgentSessionClient(client, _flow())

        async def session_turn(session_id: str) -> None:
            tail = HistoryTail(client, session_id)
            await sessions.start_session(session_id, "tools")
            await tail.until_processed("turn-1/model-2", timeout=600)

        async def bare_turn(workflow_id: str) -> None:
            await client.execute_workflow(BareTurnWorkflow.run, _STEP, id=workflow_id, task_queue=BARE_QUEUE)

        async def bare_idle(workflow_id: str) -> None:
            handle = await client.start_workflow(BareWorkflow.run, id=workflow_id, task_queue=IDLE_QUEUE)
            await handle.execute_update(BareWorkflow.chain, _STEP)  # pyright: ignore[reportUnknownMemberType]

        systems = [
            System("sessionflow", session_turn, session_turn, processes[0].pid),
            System("bare Temporal", bare_turn, bare_idle, processes[1].pid),
        ]
        for system in systems:  # warm-up, untimed
            await _level(system, 10, 40)
        profilers = _start_profilers(profile, processes[0].pid) if profile is not None else []
        for index, in_flight in enumerate(levels):
            order = systems if index % 2 == 0 else systems[::-1]
            for system in order:
                level = await _level(system, in_flight, max(per_level, 4 * in_flight))
                system.levels.append(level)
                print(
                    f"  {system.name}: {in_flight} in flight: {level.rate:.1f} turns/s, "
                    f"p95 {level.p95 * 1000:.0f} ms",
                    flush=True,
                )
        await _stop_profilers(profilers)
        for system in systems:
            await _idle_rss(system, idle)
        return systems
    finally:
        for process in processes:
            if process.stdin is not None:
                process.stdin.close()
        await stop(processes)


# -- the worker's profile under load (py-spy, sampling, from outside the process) ----------------

_LINE = re.compile(r":\d+\)$")
PY_SPY = ("uvx", "--from", "py-spy==0.4.3", "py-spy")


def _start_profilers(folder: Path, pid: int) -> list[subprocess.Popen[bytes]]:
    """Sample the sessionflow worker through the levels: a flame graph, and raw stacks to rank."""
    folder.mkdir(parents=True, exist_ok=True)
    common = ["record", "--pid", str(pid), "--rate", "100", "--nonblocking", "--idle"]
    outputs = (("flamegraph", "sessionflow-worker.svg"), ("raw", "sessionflow-worker.txt"))
    return [
        subprocess.Popen(
            [*PY_SPY, *common, "--format", kind, "--output", str(folder / name)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for kind, name in outputs
    ]


async def _stop_profilers(profilers: list[subprocess.Popen[bytes]]) -> None:
    for process in profilers:
        process.send_signal(signal.SIGINT)  # py-spy writes its output on SIGINT
    for process in profilers:
        await asyncio.to_thread(process.wait)


def top_frames(raw: Path, count: int = 10) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """The `count` frames with the most samples on top of the stack (self), and sessionflow's
    functions with the most samples anywhere in the stack (total), each as a share of the worker's busy samples (idle waits excluded: `--idle` keeps them in the
    file, so the share of time the event loop waited is known, but they are not work)."""
    own: dict[str, int] = {}
    total: dict[str, int] = {}
    busy = 0
    for line in raw.read_text().splitlines():
        stack, _, samples = line.rpartition(" ")
        frames = stack.split(";")
        if not frames or not samples.isdigit() or _idle(frames[-1]):
            continue
        n = int(samples)
        busy += n
        own[frames[-1]] = own.get(frames[-1], 0) + n
        # Total time only of sessionflow's own functions: the event loop, the threads and
        # the entry point are in every stack and would fill the ranking.
        # A function counts once per stack, whichever of its lines the samples are on.
        functions = {_LINE.sub(")", frame) for frame in frames[1:]}  # the first is the thread
        for function in functions:
            if "sessionflow/" in function and "sessionflow/temporal/worker/_worker.py" not in function:
                total[function] = total.get(function, 0) + n

    def ranked(counts: dict[str, int]) -> list[tuple[str, float]]:
        best = sorted(counts.items(), key=lambda item: -item[1])[:count]
        return [(frame, n / busy) for frame, n in best]

    return ranked(own), ranked(total)


def _idle(frame: str) -> bool:
    return any(
        wait in frame for wait in ("select (selectors.py", "epoll", "_worker (concurrent/futures/thread.py")
    )


def print_profile(folder: Path) -> None:
    raw = folder / "sessionflow-worker.txt"
    if not raw.exists():
        print(f"no profile written in {folder} (py-spy needs ptrace rights)")
        return
    own, total = top_frames(raw)
    print(f"\nworker profile (py-spy, 100 Hz, through the levels): {folder / 'sessionflow-worker.svg'}")
    for title, rows in (("self", own), ("total", total)):
        scope = "any function" if title == "self" else "sessionflow's functions"
        print(f"\n| top 10 by {title} ({scope}) | share of busy samples |\n| --- | ---: |")
        for frame, share in rows:
            print(f"| `{frame}` | {share:.1%} |")


def print_saturation(systems: list[System], idle: int) -> None:
    mine, bare = systems
    print("\n| turns in flight | sessionflow turns/s | p95 ms | bare Temporal turns/s | p95 ms | ratio |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for level, base in zip(mine.levels, bare.levels, strict=True):
        print(
            f"| {level.in_flight} | {level.rate:.1f} | {level.p95 * 1000:.0f} | {base.rate:.1f} "
            f"| {base.p95 * 1000:.0f} | {level.rate / base.rate:.2f}x |"
        )
    knee, base_knee = mine.knee(), bare.knee()
    best = max(level.rate for level in mine.levels) / max(level.rate for level in bare.levels)
    print(
        f"\nknee: sessionflow {knee.rate:.1f} turns/s at {knee.in_flight} in flight (p95 {knee.p95 * 1000:.0f} ms); "
        f"bare Temporal {base_knee.rate:.1f} turns/s at {base_knee.in_flight} (p95 {base_knee.p95 * 1000:.0f} ms); "
        f"saturation throughput ratio {knee.rate / base_knee.rate:.2f}x at the knees, {best:.2f}x best against best "
        "(goal >= 0.8x)"
    )
    print(
        f"worker RSS per 1,000 idle workflows ({idle} held): sessionflow {mine.idle_mib_per_1000:.0f} MiB, "
        f"bare Temporal {bare.idle_mib_per_1000:.0f} MiB"
    )


__all__ = ["BareTurnWorkflow", "print_profile", "print_saturation", "saturate", "top_frames"]
