"""The README's runnable example runs as written."""

from __future__ import annotations

from pathlib import Path

from tests.examples import readme_example, run_example


async def test_the_readme_example_runs(temporal_address: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(readme_example("adapter-claude"))
    text = await run_example(script)
    assert """approving Bash {"command":"echo 'buy bread' >> todo.txt && wc -l < todo.txt"}""" in text
    expected = (
        "     user: Add bread to my list.\n"
        "     tool: 1\tbuy milk\n2\t\n"
        "     tool: 2\n"
        "assistant: Added bread; the list has 2 items.\n"
        "todo.txt: 'buy milk\\nbuy bread\\n'"
    )
    assert text.rstrip().endswith(expected), text
