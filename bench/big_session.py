"""Sessions of any size (issue 16): latency, history and worker memory at 1, 10 and 100 MB.

    uv run python -m bench.big_session            # full run (see bench/README.md for its duration)
    uv run python -m bench.big_session --quick    # smoke run: small sizes, few turns

One run, one embedded dev server on the server's default limits, one payload store in a temp
folder (``$SESSIONFLOW_PAYLOADS``; never the user's home). Workers are child processes
(`bench._big_runner`). A turn is model -> one read tool returning `--turn-kb` of unique text
-> model; a session of S MB is grown with S / turn size such turns, then timed turns run
interleaved across the sizes, one at a time, so every size sees the same machine. Turn ends
are seen by history long-polls (`HistoryTail`), never by queries to the worker.

1. per-turn latency (send -> the workflow task that processed the second model result).
2. history bytes and events added per timed turn (`history_size` before and after; a turn
   across a continue-as-new is not counted), and continues-as-new over the whole run.
3. worker RSS with `--cached-sessions` sessions of `--session-mb` idle in a second worker's
   cache, and a labelled linear extrapolation to 1,000 x 10 MB.
4. history bytes per tool turn, sessionflow + OpenAI Agents vs the temporalio-openai-agents
   plugin: `bench.peers` run as a child with the same store (its own dev server).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from bench._big_runner import big_flow
from bench._big_table import Report, print_report
from bench._common import HistoryTail
from bench._peer_loop import rss_kib
from sessionflow import AgentSessionClient, connect
from sessionflow.temporal import (
    PAYLOADS_ENV,
    DevServer,
    DevServerConfig,
    PayloadStore,
    TemporalClient,
    history_size,
)

ROOT = Path(__file__).resolve().parent.parent
MB = 1_000_000
"""Sizes are decimal: a 500 KB output is 500,000 characters, a 1 MB session two such turns."""
TURN_TIMEOUT = 300.0


@dataclass
class Tracked:
    """One session the parent drives: its turns so far and the runs (continues-as-new) seen."""

    session_id: str
    tail: HistoryTail
    turns: int = 0
    run_id: str = ""
    continues: int = 0


@dataclass
class Bucket:
    """The sessions of one size and what their timed turns measured."""

    size_mb: float
    grow_turns: int
    timed_per_session: int
    sessions: list[Tracked] = field(default_factory=lambda: [])
    ms: list[float] = field(default_factory=lambda: [])
    history_bytes: list[int] = field(default_factory=lambda: [])
    history_events: list[int] = field(default_factory=lambda: [])


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: sizes 1,4,10 MB, 4 timed turns, 20 x 1 MB cached"
    )
    parser.add_argument("--sizes", default="1,10,100", help="session sizes in MB (decimal), comma-separated")
    parser.add_argument("--timed", type=int, default=20, help="timed turns per size")
    parser.add_argument("--turn-kb", type=int, default=500, help="tool output per turn, KB (decimal)")
    parser.add_argument("--cached-sessions", type=int, default=200)
    parser.add_argument("--session-mb", type=float, default=2.0, help="size of each cached session")
    parser.add_argument("--gate", type=int, default=20, help="cached sessions grown at once")
    parser.add_argument(
        "--can-events", type=int, default=10_000, help="the flow's continue_as_new_after_events"
    )
    parser.add_argument("--peer-turns", type=int, default=10, help="bench.peers turns (0: skip item 4)")
    if "--quick" in sys.argv[1:]:
        # Smoke defaults; a flag given with --quick still wins.
        parser.set_defaults(sizes="1,4,10", timed=4, cached_sessions=20, session_mb=1.0, peer_turns=2)
    args = parser.parse_args()
    return args


async def _describe_run(client: TemporalClient, tracked: Tracked) -> None:
    run_id = (await client.get_workflow_handle(tracked.session_id).describe()).run_id or ""
    if tracked.run_id and run_id != tracked.run_id:
        tracked.continues += 1
    tracked.run_id = run_id


async def _turn(sessions: AgentSessionClient, tracked: Tracked) -> float:
    """One tool turn; milliseconds from the call until its second model result was processed."""
    number = tracked.turns + 1
    started = time.perf_counter()
    if number == 1:
        await sessions.start_session(tracked.session_id, "read")
    elif not await sessions.send_user_message(tracked.session_id, "read"):
        raise RuntimeError(f"{tracked.session_id} refused turn {number}")
    await tracked.tail.until_processed(f"turn-{number}/model-2", timeout=TURN_TIMEOUT)
    tracked.turns = number
    return (time.perf_counter() - started) * 1000


async def _grow(client: TemporalClient, sessions: AgentSessionClient, tracked: Tracked, turns: int) -> None:
    for _ in range(turns):
        await _turn(sessions, tracked)
        await _describe_run(client, tracked)


def _start_worker(
    address: str, flow_type: str, output_bytes: int, can_events: int, cache: int
) -> subprocess.Popen[str]:
    code = "from bench._big_runner import worker_main; worker_main()"
    argv = [sys.executable, "-c", code, address, flow_type, str(output_bytes), str(can_events), str(cache)]
    worker = subprocess.Popen(
        argv,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert worker.stdout is not None
    line = worker.stdout.readline()
    if not line.startswith("ready"):
        worker.kill()
        raise RuntimeError(f"worker did not start (rc={worker.poll()})")
    return worker


def _stop_worker(worker: subprocess.Popen[str]) -> None:
    if worker.stdin is not None:
        worker.stdin.close()
    try:
        worker.wait(timeout=60)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()


def _peak_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


async def latency_and_history(
    args: argparse.Namespace, address: str, client: TemporalClient, store: Path, report: Report
) -> None:
    """Items 1-2: grow sessions to each size, then time turns interleaved across the sizes."""
    turn_bytes = args.turn_kb * 1000
    flow = big_flow("bench-big", turn_bytes, args.can_events)
    sessions = AgentSessionClient(client, flow)
    prefix = uuid.uuid4().hex[:6]
    buckets: list[Bucket] = []
    for size in (float(s) for s in args.sizes.split(",")):
        grow = max(1, round(size * MB / turn_bytes))
        # A session takes at most half its own size in timed turns (a 1 MB session one turn),
        # so each size stays within 1.5x of its label; smaller sizes use more sessions.
        per_session = max(1, grow // 2)
        bucket = Bucket(size_mb=size, grow_turns=grow, timed_per_session=per_session)
        for index in range(math.ceil(args.timed / per_session)):
            session_id = f"big-{prefix}-{size:g}mb-{index}"
            bucket.sessions.append(Tracked(session_id, HistoryTail(client, session_id)))
        buckets.append(bucket)
    worker = _start_worker(address, flow.flow_type, turn_bytes, args.can_events, 1000)
    try:
        started = time.perf_counter()
        await asyncio.gather(*(_grow(client, sessions, t, b.grow_turns) for b in buckets for t in b.sessions))
        grown = sum(b.grow_turns * len(b.sessions) for b in buckets)
        print(f"grew {grown} turns in {time.perf_counter() - started:.0f} s", flush=True)
        await asyncio.sleep(2.0)
        for rnd in range(args.timed):
            shift = rnd % len(buckets)
            for bucket in buckets[shift:] + buckets[:shift]:
                tracked = bucket.sessions[rnd // bucket.timed_per_session]
                run_before = tracked.run_id
                events_before, bytes_before = await history_size(client, tracked.session_id)
                bucket.ms.append(await _turn(sessions, tracked))
                events_after, bytes_after = await history_size(client, tracked.session_id)
                await _describe_run(client, tracked)
                if tracked.run_id == run_before:  # a continue-as-new voids the difference
                    bucket.history_bytes.append(bytes_after - bytes_before)
                    bucket.history_events.append(events_after - events_before)
            print(
                f"  timed round {rnd + 1}/{args.timed}: "
                + ", ".join(f"{b.size_mb:g} MB {b.ms[-1]:.0f} ms" for b in buckets),
                flush=True,
            )
        report.worker_a_rss_mib = rss_kib(worker.pid) / 1024
    finally:
        _stop_worker(worker)
    turns = sum(t.turns for b in buckets for t in b.sessions)
    report.phase1_store = (folder_bytes(store), turns * turn_bytes)
    for bucket in buckets:
        report.add_size(
            size_mb=bucket.size_mb,
            ms=bucket.ms,
            history_bytes=bucket.history_bytes,
            history_events=bucket.history_events,
            turns_range=(bucket.grow_turns, max(t.turns for t in bucket.sessions)),
            sessions=len(bucket.sessions),
            continues=sum(t.continues for t in bucket.sessions),
            turn_bytes=turn_bytes,
        )


async def cached_sessions(
    args: argparse.Namespace, address: str, client: TemporalClient, store: Path, report: Report
) -> None:
    """Item 3: RSS of a fresh worker once `--cached-sessions` sessions sit idle in its cache."""
    turn_bytes = args.turn_kb * 1000
    turns = max(1, round(args.session_mb * MB / turn_bytes))
    count = args.cached_sessions
    flow = big_flow("bench-big-cache", turn_bytes, args.can_events)
    sessions = AgentSessionClient(client, flow)
    prefix = uuid.uuid4().hex[:6]
    cache = max(count, 1000)  # every session fits: none is evicted and replayed
    stored_before = folder_bytes(store)
    worker = _start_worker(address, flow.flow_type, turn_bytes, args.can_events, cache)
    try:
        await asyncio.sleep(3.0)
        baseline = rss_kib(worker.pid)
        checkpoints = {max(1, count * k // 4) for k in (1, 2, 3, 4)}
        samples: dict[int, int] = {}
        stored: dict[int, int] = {}  # bytes the store holds for these sessions at each sample
        done = [0]
        gate = asyncio.Semaphore(args.gate)

        async def one(index: int) -> None:
            async with gate:
                session_id = f"cache-{prefix}-{index}"
                tracked = Tracked(session_id, HistoryTail(client, session_id))
                for _ in range(turns):
                    await _turn(sessions, tracked)
            done[0] += 1
            if done[0] in checkpoints:
                samples[done[0]] = rss_kib(worker.pid)
                stored[done[0]] = folder_bytes(store) - stored_before
                print(
                    f"  cached sessions: {done[0]}/{count}, worker RSS {samples[done[0]] / 1024:.0f} MiB",
                    flush=True,
                )

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(count)))
        took = time.perf_counter() - started
        await asyncio.sleep(5.0)  # idle: no step is running, every session waits for a message
        report.set_cached(
            count=count,
            session_mb=args.session_mb,
            turns=turns,
            cache=cache,
            baseline_kib=baseline,
            samples_kib=dict(sorted(samples.items())),
            stored_at_samples=stored,
            idle_kib=rss_kib(worker.pid),
            peak_kib=_peak_kib(worker.pid),
            stored_bytes=folder_bytes(store) - stored_before,
            seconds=took,
        )
    finally:
        _stop_worker(worker)


def peers_history(turns: int, report: Report) -> None:
    """Item 4: `bench.peers` for the two OpenAI Agents variants, with this run's store."""
    only = "sessionflow+openai-agents,temporalio-openai-agents plugin"
    argv = [
        sys.executable,
        "-m",
        "bench.peers",
        "--only",
        only,
        "--turns",
        str(turns),
        "--warmup",
        "1",
        "--burst",
        "0",
    ]
    done = subprocess.run(
        argv,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-3000:], sep="\n", file=sys.stderr)
        raise RuntimeError(f"bench.peers exited {done.returncode}")
    for line in done.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 6 and cells[0] in ("sessionflow+openai-agents", "temporalio-openai-agents plugin"):
            report.peers[cells[0]] = (int(cells[4]), int(cells[5]), float(cells[2]))


async def main() -> None:
    args = _args()
    load_start = os.getloadavg()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-big-session-") as tmp:
        store = Path(tmp) / "payloads"
        store.mkdir()
        # Every process of the run (workers, bench.peers and its children) uses this store.
        os.environ[PAYLOADS_ENV] = str(store)
        report = Report(store=str(store), argv=" ".join(sys.argv[1:]))
        server = DevServer(DevServerConfig(data_dir=Path(tmp) / "server"))
        handle = await server.start()
        try:
            client = await connect(handle.address, payloads=PayloadStore(location=str(store)))
            await latency_and_history(args, handle.address, client, store, report)
            await cached_sessions(args, handle.address, client, store, report)
        except BaseException:
            # The server's log goes with the temp folder: show why it stopped, if it did.
            log = Path(tmp) / "server" / "temporal.log"
            if log.exists():
                print(
                    "dev server log tail:\n" + "\n".join(log.read_text(errors="replace").splitlines()[-30:]),
                    file=sys.stderr,
                )
            raise
        finally:
            await server.stop()
        if args.peer_turns > 0:
            peers_history(args.peer_turns, report)
        report.store_bytes = folder_bytes(store)
    report.load = (load_start, os.getloadavg())
    report.seconds = time.perf_counter() - started
    print_report(report)


if __name__ == "__main__":
    asyncio.run(main())
