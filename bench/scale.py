"""Scale-out: 1,000 sessions across 1, 2 and 4 worker processes (issue 26, section 4).

    uv run python -m bench.scale                         # 1,000 sessions at 1, 2 and 4 workers
    uv run python -m bench.scale --sessions 200 --workers 1 2   # a smaller run
    uv run python -m bench.scale --saturate              # one worker at its knee, beside bare Temporal

`--saturate` is described in bench/_saturate.py: one worker process of each system, the turns
in flight raised level by level (`--levels`, `--per-level`), turns/s and p95 at the knee, and
worker RSS per 1,000 idle workflows (`--idle`).

One embedded dev server and one payload store (a folder every process is given through
``$SESSIONFLOW_PAYLOADS``, as hosts share one S3 bucket). Each worker is a process of its own,
started through `run_agent_worker`, the entry point a host runs, as if on a separate host.
The model is `ZeroLatencyRunner` (bench/_common.py): no latency, no HTTP. Every session runs
one turn of the same shape as bench.peers and bench.idle: model -> 2 parallel read tools ->
model. A fixed number of sessions is in flight at once (`--concurrency`), so the worker
count is the only thing that changes between runs; each worker count gets its own flow type
(task queue) and fresh workers, warmed up by a few untimed sessions.

Printed per worker count: turns/s (sessions / wall time), p50 and p99 turn latency (start of
the session to the workflow task after its last model step, seen by history long-polls, never
by queries the workers would answer), CPU seconds each worker used (how evenly the server
spread the steps), the dev server's and the driver's, and the scaling ratio: turns/s at N / turns/s at 1.
On one machine the workers share its cores with the server and the driver: the ratio says
how much the work spreads, not what separate hosts would gain.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from bench._common import HistoryTail, ZeroLatencyRunner, summarize
from sessionflow import AgentSessionClient, AgentSessionFlow, connect, run_agent_worker
from sessionflow.temporal import DevServer, DevServerConfig, PayloadStore

ROOT = Path(__file__).resolve().parent.parent
READY_LINE = "sessionflow worker ready"
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _flow(flow_type: str) -> AgentSessionFlow:
    return AgentSessionFlow(ZeroLatencyRunner(), flow_type=flow_type)


def worker_main() -> None:
    """Child: one worker process serving `argv[1]`; server and payload store from the environment."""
    run_agent_worker([_flow(sys.argv[1])])


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (and its reaped children), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    # Fields after the command: state is [0], utime [11], stime [12], cutime [13], cstime [14].
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / _CLOCK_TICKS


@dataclass
class Round:
    workers: int
    sessions: int
    seconds: float
    latencies: list[float]
    worker_cpu: list[float]
    server_cpu: float
    driver_cpu: float
    load_before: str
    load_after: str

    @property
    def turns_per_second(self) -> float:
        return self.sessions / self.seconds


def _start_worker(flow_type: str, environment: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-c", "from bench.scale import worker_main; worker_main()", flow_type],
            cwd=ROOT,
            env=environment,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def _text(log: Path) -> str:
    return log.read_text(errors="replace") if log.exists() else ""


async def _ready(process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while READY_LINE not in _text(log):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"worker not ready:\n{_text(log)[-3000:]}")
        await asyncio.sleep(0.05)


async def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM: the graceful shutdown a host's rolling restart uses (nothing runs by now)."""
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            await asyncio.wait_for(asyncio.to_thread(process.wait), 60)
        except TimeoutError:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


async def run_round(
    address: str,
    server_pid: int,
    store: PayloadStore,
    folder: Path,
    workers: int,
    sessions: int,
    concurrency: int,
    warmup: int,
) -> Round:
    flow_type = f"bench-scale-{workers}-{uuid.uuid4().hex[:6]}"
    environment = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PYTHONUNBUFFERED": "1",
        "SESSIONFLOW_SERVER_ADDRESS": address,
        "SESSIONFLOW_NAMESPACE": "default",
        **store.environment(),
    }
    logs = [folder / f"{flow_type}-worker-{i}.log" for i in range(workers)]
    processes = [_start_worker(flow_type, environment, log) for log in logs]
    try:
        for process, log in zip(processes, logs, strict=True):
            await _ready(process, log)
        client = await connect(address, "default", payloads=store)
        client_sessions = AgentSessionClient(client, _flow(flow_type))
        gate = asyncio.Semaphore(concurrency)

        async def one(session_id: str) -> float:
            async with gate:
                tail = HistoryTail(client, session_id)
                started = time.perf_counter()
                await client_sessions.start_session(session_id, "tools")
                await tail.until_processed("turn-1/model-2", timeout=600)
                return time.perf_counter() - started

        await asyncio.gather(*(one(f"{flow_type}-warm-{i}") for i in range(warmup)))
        worker_cpu = [cpu_seconds(p.pid) for p in processes]
        server_cpu = cpu_seconds(server_pid)
        driver_cpu = cpu_seconds(os.getpid())
        load_before = _load()
        started = time.perf_counter()
        latencies = await asyncio.gather(*(one(f"{flow_type}-{i}") for i in range(sessions)))
        seconds = time.perf_counter() - started
        return Round(
            workers=workers,
            sessions=sessions,
            seconds=seconds,
            latencies=list(latencies),
            worker_cpu=[cpu_seconds(p.pid) - before for p, before in zip(processes, worker_cpu, strict=True)],
            server_cpu=cpu_seconds(server_pid) - server_cpu,
            driver_cpu=cpu_seconds(os.getpid()) - driver_cpu,
            load_before=load_before,
            load_after=_load(),
        )
    finally:
        await _stop(processes)


async def _saturate_main(levels: list[int], per_level: int, idle: int, profile: Path | None) -> None:
    from bench._saturate import print_profile, print_saturation, saturate

    with tempfile.TemporaryDirectory(prefix="sessionflow-saturate-") as tmp:
        root = Path(tmp)
        store = PayloadStore(location=str(root / "payloads"))
        server = DevServer(DevServerConfig(data_dir=root / "server"))
        handle = await server.start()
        environment = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "PYTHONUNBUFFERED": "1",
            "SESSIONFLOW_SERVER_ADDRESS": handle.address,
            "SESSIONFLOW_NAMESPACE": "default",
            **store.environment(),
        }
        try:
            systems = await saturate(
                handle.address, environment, root, levels, per_level, idle, _ready, _stop, profile
            )
        finally:
            await server.stop()
    print_saturation(systems, idle)
    if profile is not None:
        print_profile(profile)
    print(f"load average at end: {_load()}")


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--concurrency", type=int, default=100, help="sessions in flight at once")
    parser.add_argument("--warmup", type=int, default=20, help="untimed sessions per worker count")
    parser.add_argument(
        "--saturate", action="store_true", help="one worker at its knee, beside bare Temporal"
    )
    parser.add_argument("--levels", type=int, nargs="+", default=[5, 10, 20, 40, 80, 160])
    parser.add_argument("--per-level", type=int, default=200, help="turns per level (at least 4x the level)")
    parser.add_argument("--idle", type=int, default=1000, help="idle workflows held for the RSS figure")
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="with --saturate: py-spy the sessionflow worker into this folder",
    )
    args = parser.parse_args()
    print(f"load average at start: {_load()}, cpus {os.cpu_count()}", flush=True)
    if args.saturate:
        await _saturate_main(args.levels, args.per_level, args.idle, args.profile)
        return
    rounds: list[Round] = []
    with tempfile.TemporaryDirectory(prefix="sessionflow-scale-") as tmp:
        root = Path(tmp)
        store = PayloadStore(location=str(root / "payloads"))
        server = DevServer(DevServerConfig(data_dir=root / "server"))
        handle = await server.start()
        try:
            for workers in args.workers:
                result = await run_round(
                    handle.address,
                    handle.pid,
                    store,
                    root,
                    workers,
                    args.sessions,
                    args.concurrency,
                    args.warmup,
                )
                rounds.append(result)
                latency = summarize(result.latencies)
                print(
                    f"{workers} worker(s): {result.sessions} sessions in {result.seconds:.1f} s = "
                    f"{result.turns_per_second:.1f} turns/s; turn latency p50 {latency.p50:.2f} s, "
                    f"p99 {latency.p99:.2f} s; worker CPU s {[round(c, 1) for c in result.worker_cpu]}, "
                    f"server CPU s {result.server_cpu:.1f}, driver CPU s {result.driver_cpu:.1f}; "
                    f"load {result.load_before} -> {result.load_after}",
                    flush=True,
                )
        finally:
            await server.stop()
    base = rounds[0].turns_per_second if rounds and rounds[0].workers == 1 else None
    print()
    print("| workers | sessions | turns/s | p50 turn s | p99 turn s | scaling (turns/s vs 1 worker) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for result in rounds:
        latency = summarize(result.latencies)
        ratio = f"{result.turns_per_second / base:.2f}x" if base else "n/a"
        print(
            f"| {result.workers} | {result.sessions} | {result.turns_per_second:.1f} | "
            f"{latency.p50:.2f} | {latency.p99:.2f} | {ratio} |"
        )
    print(f"load average at end: {_load()}")


if __name__ == "__main__":
    asyncio.run(main())
