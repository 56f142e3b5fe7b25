"""Running an example program as a user would: its own process, a terminal-like stdin and stdout."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


async def start(example: Path, args: list[str], env: dict[str, str], cwd: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        str(example),
        *args,
        cwd=cwd,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )


async def read_until(process: asyncio.subprocess.Process, pattern: re.Pattern[str], timeout: float) -> str:
    stdout = process.stdout
    assert stdout is not None
    text = ""

    async def read() -> str:
        nonlocal text
        while not pattern.search(text):
            chunk = await stdout.read(1024)
            assert chunk, f"the program ended before {pattern.pattern!r}:\n{text}"
            text += chunk.decode()
        return text

    return await asyncio.wait_for(read(), timeout)
