"""The README's runnable example runs as written."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

README = Path(__file__).parents[2] / "packages" / "adapter-claude" / "README.md"


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
    assert """approving Bash {"command":"echo 'buy bread' >> todo.txt && wc -l < todo.txt"}""" in text
    expected = (
        "     user: Add bread to my list.\n"
        "     tool: PreToolUse:Read hook error: Not an error: this call already ran in its own durable step "
        "(sessionflow), and this is its result.\n"
        "     1\tbuy milk\n"
        "     tool: 2\n"
        "assistant: Added bread; the list has 2 items.\n"
        "todo.txt: 'buy milk\\nbuy bread\\n'"
    )
    assert text.rstrip().endswith(expected), text
