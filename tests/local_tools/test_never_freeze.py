"""No input a model can send stalls the worker: searches are linear, reads bounded and cancellable."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from sessionflow.kit import ToolExecutionError
from sessionflow_local_tools import _files, _paths
from sessionflow_local_tools._blocking import Stop
from tests.local_tools.conftest import Sandbox

REPO_ROOT = Path(__file__).resolve().parents[2]
BACKTRACKING_LINE = b"a" * 64 + b"!\n"  # (a+)+$ takes 2**64 steps on this with Python's re


def _bytes_read() -> int:
    """Bytes this process has read so far (``rchar``: every read(2), whatever the file)."""
    with open("/proc/self/io") as io:
        return int(next(line for line in io if line.startswith("rchar:")).split()[1])


def test_an_adversarial_search_leaves_the_event_loop_serving(sandbox: Sandbox) -> None:
    # 24 MiB of backtracking lines keep the search busy for a while, long enough for
    # another session's call to run while it is in flight.
    for index in range(6):
        (sandbox.ws / f"attack-{index}.txt").write_bytes(BACKTRACKING_LINE * (4 * 1024 * 1024 // 66))
    (sandbox.ws / "other-session.txt").write_text("served\n")
    # A child process: a search that holds the GIL would freeze this test process too.
    child = subprocess.run(
        [sys.executable, "-m", "tests.local_tools._freeze_child", str(sandbox.ws)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == 0, child.stderr[-2000:]
    report = json.loads(child.stdout.strip().splitlines()[-1])
    assert report["other"] == "served\n"
    assert report["other_done_while_searching"], report
    assert report["summary"][-1] == "[searched 7 files]" or "searched 7 files" in report["summary"][-1]
    assert report["max_gap"] < 1.0, report  # the heartbeat never stopped for a second


async def test_a_regex_search_over_backtracking_lines_returns(sandbox: Sandbox) -> None:
    (sandbox.ws / "a.txt").write_bytes(BACKTRACKING_LINE * 100)
    text = await asyncio.wait_for(
        sandbox.tools.call("search_files", pattern="(a+)+$", regex=True), timeout=30
    )
    assert text.startswith("no matches")


async def test_a_one_line_file_of_64_mib_is_not_read_whole_for_4_kb(sandbox: Sandbox) -> None:
    (sandbox.ws / "one-line.json").write_bytes(b'{"k": "' + b"v" * (64 * 1024 * 1024) + b'"}')
    before = _bytes_read()
    text = await sandbox.tools.call("read_file", path="one-line.json", limit=1)
    read = _bytes_read() - before
    assert text.startswith('{"k": "vvv') and f"line truncated at {_files.MAX_LINE_CHARS} bytes" in text
    assert "offset=2" in text
    assert read < 1024 * 1024, f"read {read} bytes to show 4 KB"


async def test_a_sparse_file_without_newlines_is_read_within_the_byte_bound(sandbox: Sandbox) -> None:
    path = sandbox.ws / "sparse.log"
    path.write_bytes(b"x" * 9000)  # text first, so it is not taken for a binary file
    os.truncate(path, 8 * 1024**3)  # then an 8 GiB hole: zeros, and never a newline
    cases: list[dict[str, Any]] = [{"limit": 1}, {"offset": 5}, {"offset": 2**31}]
    for args in cases:
        before = _bytes_read()
        text = await sandbox.tools.call("read_file", path="sparse.log", **args)
        read = _bytes_read() - before
        assert read <= _files.MAX_SCAN_BYTES + 1024 * 1024, (args, read)
        assert text.startswith("x") or "stopped after reading" in text, (args, text[:200])


def test_a_cancelled_read_stops_before_reading(sandbox: Sandbox) -> None:
    (sandbox.ws / "big.txt").write_bytes(b"line\n" * 100_000)
    stop = Stop()
    stop.cancel()
    before = _bytes_read()
    with pytest.raises(ToolExecutionError, match="cancelled"):
        _files.read_file(stop, sandbox.ws, "big.txt", offset=90_000)
    assert _bytes_read() - before < 64 * 1024


async def test_cancelling_a_call_ends_its_thread(sandbox: Sandbox) -> None:
    chunk = BACKTRACKING_LINE * (4 * 1024 * 1024 // 66)
    for index in range(32):  # 128 MiB: seconds of searching
        (sandbox.ws / f"big-{index:02}.txt").write_bytes(chunk)
    before = _bytes_read()
    task = asyncio.create_task(sandbox.tools.call("search_files", pattern="a+b", regex=True))
    deadline = asyncio.get_running_loop().time() + 10
    while not _searching():
        assert asyncio.get_running_loop().time() < deadline, "the search never started"
        await asyncio.sleep(0.001)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The thread that ran the search stops at its next check, long before the search's end.
    while _searching():
        assert asyncio.get_running_loop().time() < deadline, "the search thread kept running"
        await asyncio.sleep(0.01)
    read = _bytes_read() - before
    assert read < 48 * 1024 * 1024, f"the cancelled search read on: {read} bytes"


def _searching() -> bool:
    return any(_busy(thread) for thread in threading.enumerate())


def _busy(thread: threading.Thread) -> bool:
    """Whether a pool thread is running work (its frame is not the pool's idle wait)."""
    frame = sys._current_frames().get(thread.ident or -1)  # pyright: ignore[reportPrivateUsage]
    while frame is not None:
        if frame.f_code.co_name == "_search_file":
            return True
        frame = frame.f_back
    return False


async def test_the_file_tools_run_off_the_event_loop_thread(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    (sandbox.ws / "f.txt").write_text("a\n")
    on_loop: dict[str, bool] = {}
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": "f.txt"}),
        ("list_directory", {"path": "."}),
        ("search_files", {"pattern": "a"}),
        ("write_file", {"path": "g.txt", "content": "b\n"}),
        ("edit_file", {"path": "f.txt", "old_string": "a", "new_string": "c"}),
    ]
    for tool, args in calls:

        def hook(stage: str, tool: str = tool) -> None:
            # The "resolved" stage is reached inside the tool's blocking work.
            on_loop.setdefault(tool, threading.current_thread() is threading.main_thread())

        monkeypatch.setattr(_paths, "race_hook", hook)
        await sandbox.tools.call(tool, **args)
    assert on_loop == dict.fromkeys(on_loop, False) and len(on_loop) == len(calls)
