"""The README's runnable example runs as written."""

from __future__ import annotations

from pathlib import Path

from tests.examples import readme_example, run_example


async def test_the_readme_example_runs(temporal_address: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(readme_example("adapter-pydantic-ai"))
    text = await run_example(script)
    assert 'approving cancel_order {"order_id":7}' in text
    assert "tool: cancelled order 7 (idempotency key orders-" in text
    assert text.rstrip().endswith(
        "assistant: Order 7 had already shipped; I cancelled it anyway, as you asked."
    )
