"""Throughput of 50 concurrent sessions and worker RSS with 1,000 idle sessions (issue 13, items 2-3).

    uv run python -m bench.idle [--sessions 50 --turns 10 --idle 1000 --cache 1000]

One embedded dev server. The worker is a child process (`serve_agent_flows` with
`max_cached_workflows=--cache`) serving one flow with `ZeroLatencyRunner` (bench/_common.py:
no HTTP model, so that concurrent sessions need no per-session script). A "tools" turn is the
same shape as in bench.peers: model -> 2 parallel read tools -> model. The parent only drives
clients; turn ends are seen by history long-polls (`HistoryTail`), never by worker queries.
RSS is VmRSS of the worker process from /proc.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench._common import HistoryTail, ZeroLatencyRunner
from bench._peer_loop import rss_kib
from sessionflow import AgentSessionClient, AgentSessionFlow, serve_agent_flows
from sessionflow.temporal import DevServer, DevServerConfig

ROOT = Path(__file__).resolve().parent.parent
FLOW_TYPE = "bench-idle"


def _flow() -> AgentSessionFlow:
    return AgentSessionFlow(ZeroLatencyRunner(), flow_type=FLOW_TYPE)


def worker_main() -> None:
    """Child: serve the flow until stdin closes."""
    address, cache = sys.argv[1], int(sys.argv[2])

    async def run() -> None:
        from sessionflow import connect

        client = await connect(address)
        stop = asyncio.Event()
        task = asyncio.create_task(
            serve_agent_flows(client, [_flow()], stop=stop, max_cached_workflows=cache)
        )
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        stop.set()
        await task

    asyncio.run(run())


def rss_mib(pid: int) -> float:
    return rss_kib(pid) / 1024


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--cache", type=int, default=1000)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}, cpus {os.cpu_count()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="sessionflow-idle-") as tmp:
        server = DevServer(DevServerConfig(data_dir=Path(tmp)))
        handle = await server.start()
        worker = subprocess.Popen(  # noqa: ASYNC220 - started once, before anything is timed
            [
                sys.executable,
                "-c",
                "from bench.idle import worker_main; worker_main()",
                handle.address,
                str(args.cache),
            ],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert worker.stdout is not None and worker.stdin is not None
            assert worker.stdout.readline().strip() == "ready"
            client = await handle.connect()
            sessions = AgentSessionClient(client, _flow())
            prefix = uuid.uuid4().hex[:6]

            # -- 2. throughput: N concurrent sessions, each doing `turns` tool turns back to back
            ready = asyncio.Event()
            warmed = asyncio.Event()
            warm_count = [0]

            async def one_session(index: int) -> int:
                session_id = f"tp-{prefix}-{index}"
                tail = HistoryTail(client, session_id)
                await sessions.start_session(session_id, "tools")
                await tail.until_processed("turn-1/model-2")  # warm-up turn, not timed
                warm_count[0] += 1
                if warm_count[0] == args.sessions:
                    warmed.set()
                await ready.wait()
                for turn in range(2, args.turns + 2):
                    if not await sessions.send_user_message(session_id, "tools"):
                        raise RuntimeError(f"{session_id} refused a message")
                    await tail.until_processed(f"turn-{turn}/model-2")
                return args.turns

            tasks = [asyncio.create_task(one_session(i)) for i in range(args.sessions)]
            waiter = asyncio.create_task(warmed.wait())
            await asyncio.wait([waiter, *tasks], return_when=asyncio.FIRST_COMPLETED)
            for task in tasks:
                if task.done():
                    task.result()
            await asyncio.sleep(1.0)
            started = time.perf_counter()
            ready.set()
            done = sum(await asyncio.gather(*tasks))
            elapsed = time.perf_counter() - started
            print(
                f"2. throughput: {args.sessions} concurrent sessions x {args.turns} tool turns = {done} turns "
                f"in {elapsed:.1f} s: {done / elapsed:.1f} turns/s (worker process RSS now {rss_mib(worker.pid):.0f} MiB)",
                flush=True,
            )
            for i in range(args.sessions):
                await sessions.stop_session(f"tp-{prefix}-{i}")

            # -- 3. RSS with `idle` sessions that each completed one turn and wait for a message
            await asyncio.sleep(2.0)
            before = rss_mib(worker.pid)
            gate = asyncio.Semaphore(100)

            async def idle_session(index: int) -> None:
                async with gate:
                    session_id = f"idle-{prefix}-{index}"
                    tail = HistoryTail(client, session_id)
                    await sessions.start_session(session_id, "text")
                    await tail.until_processed("turn-1/model-1")

            started = time.perf_counter()
            await asyncio.gather(*(idle_session(i) for i in range(args.idle)))
            took = time.perf_counter() - started
            await asyncio.sleep(3.0)
            after = rss_mib(worker.pid)
            print(
                f"3. worker RSS (max_cached_workflows={args.cache}): {before:.0f} MiB before, {after:.0f} MiB with "
                f"{args.idle} idle sessions (+{after - before:.0f} MiB, {(after - before) * 1024 / args.idle:.0f} KiB/session); "
                f"starting them and their first turn took {took:.1f} s",
                flush=True,
            )
        finally:
            if worker.stdin is not None:
                worker.stdin.close()
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
            await server.stop()
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    asyncio.run(main())
