"""The line protocol every peer child speaks to `bench.peers`, for workflows that run one turn.

Standard library only: the OpenAI peer imports it from an isolated env. The child prints one
JSON `ready` line, then answers `turn` with {"ms", "events", "bytes", "answer"} and `burst N`
with {"seconds", "turns", "ok", "rss_kib"} (N turns at once on the child's worker); `quit`
or end of input stops it.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

RunTurn = Callable[[str], Awaitable[str]]
"""Runs one turn as the workflow with this ID and returns its answer."""


async def serve(client: Any, run: RunTurn, prefix: str, versions: dict[str, str]) -> None:
    print(json.dumps({"ready": True, "versions": versions}), flush=True)
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line or line.strip() == "quit":
            return
        if line.startswith("burst "):
            out = await _burst(run, prefix, int(line.split()[1]))
        else:
            out = await _turn(client, run, prefix)
        print(json.dumps(out), flush=True)


async def _turn(client: Any, run: RunTurn, prefix: str) -> dict[str, Any]:
    workflow_id = f"{prefix}-{uuid.uuid4().hex[:12]}"
    start = time.perf_counter_ns()
    answer = await run(workflow_id)
    ms = (time.perf_counter_ns() - start) / 1e6
    info = (await client.get_workflow_handle(workflow_id).describe()).raw_description.workflow_execution_info
    return {"ms": ms, "events": info.history_length, "bytes": info.history_size_bytes, "answer": answer}


async def _burst(run: RunTurn, prefix: str, count: int) -> dict[str, Any]:
    start = time.perf_counter()
    answers = await asyncio.gather(*(run(f"{prefix}-burst-{uuid.uuid4().hex[:12]}") for _ in range(count)))
    seconds = time.perf_counter() - start
    ok = sum("a:1" in answer for answer in answers)
    return {"seconds": seconds, "turns": count, "ok": ok, "rss_kib": rss_kib()}


def rss_kib(pid: int | str = "self") -> int:
    """Resident set size (`VmRSS`) of a process, this one by default, in KiB."""
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
