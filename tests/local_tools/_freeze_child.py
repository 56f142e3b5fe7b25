"""Child process for the freeze test: an adversarial search runs while the event loop must keep serving.

``python -m tests.local_tools._freeze_child WORKSPACE`` searches WORKSPACE for a
catastrophic pattern through the CLI's `search_files` tool while a heartbeat task ticks
and a second call (another session's read) runs; it prints one JSON line of what
happened. A search that holds the GIL freezes this whole process, so the parent runs it
with a deadline and kills it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import time
from pathlib import Path

from tests.local_tools.conftest import Tools


async def main(workspace: Path) -> None:
    tools = Tools(workspace)
    ticks: list[float] = []
    search_done = asyncio.Event()

    async def heartbeat() -> None:
        while not search_done.is_set():
            ticks.append(time.monotonic())
            await asyncio.sleep(0.01)

    async def search() -> str:
        try:
            return await tools.call("search_files", pattern="(a+)+$", regex=True, session_id="s-attacker")
        finally:
            search_done.set()

    beating = asyncio.create_task(heartbeat())
    searching = asyncio.create_task(search())
    await asyncio.sleep(0.2)  # the search is under way
    other = await tools.call("read_file", path="other-session.txt", session_id="s-other")
    other_done_first = not search_done.is_set()
    found = await searching
    await beating
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    print(
        json.dumps(
            {
                "other": other,
                "other_done_while_searching": other_done_first,
                "ticks": len(ticks),
                "max_gap": max(gaps, default=0.0),
                "summary": found.splitlines()[-2:],
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
