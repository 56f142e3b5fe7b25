"""`python -m sessionflow.demo`: the built-in runner against the scripted model server, with no test kit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sessionflow.temporal import stop_dev_server


def test_the_demo_reads_asks_to_write_and_answers(tmp_path: Path) -> None:
    data_dir = tmp_path / "server"
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "sessionflow.demo", "--data-dir", str(data_dir)],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    finally:
        stop_dev_server(data_dir)
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert "read_file" in out and "-> succeeded" in out
    assert "write_file" in out and "-> awaiting_approval" in out
    assert "agent> I read your notes and, with your approval, marked them done." in out
    assert '"requests": 3' in out


def test_the_demo_imports_no_test_kit() -> None:
    code = "import sys, sessionflow.demo.__main__; print(sorted(m for m in sys.modules if m.startswith('sessionflow.testing')))"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert completed.stdout.strip() == "[]"
