"""Run an adapter's documented example as a user would: a Python script in its own process."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

PACKAGES = Path(__file__).resolve().parents[1] / "packages"


def readme_example(package: str) -> str:
    """The Python block under "## A runnable example" in ``packages/<package>/README.md``."""
    section = (PACKAGES / package / "README.md").read_text().split("## A runnable example", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, f"the README of {package} has no example"
    return match.group(1)


async def run_example(script: Path, env: dict[str, str] | None = None, timeout: float = 120) -> str:
    """Run ``script`` with this interpreter and path; return its output after asserting it exited 0."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(script),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **(env or {})},
    )
    output, _ = await asyncio.wait_for(process.communicate(), timeout=timeout)
    text = output.decode()
    assert process.returncode == 0, text
    return text
