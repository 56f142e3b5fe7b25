"""The README's runnable example runs as written."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

README = Path(__file__).parents[2] / "packages" / "adapter-pydantic-ai" / "README.md"


def example_code() -> str:
    section = README.read_text().split("## A runnable example", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, "the README has no example"
    return match.group(1)


async def test_the_readme_example_runs(temporal_address: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(example_code())
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(script),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    output, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    text = output.decode()
    assert process.returncode == 0, text
    assert 'approving cancel_order {"order_id":7}' in text
    assert "tool: cancelled order 7 (idempotency key orders-" in text
    assert text.rstrip().endswith("assistant: Order 7 had already shipped; I cancelled it anyway, as you asked.")
