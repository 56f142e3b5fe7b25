"""Races run concurrently, 2,000 tries each: another process changes the workspace while the tools run.

The figures each race measures are printed (run with ``-s`` to see them) and asserted:
no line an appender wrote is lost to ``edit_file``, no write that landed outside the
workspace is reported as a success, and nothing outside is touched by reads and searches.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

from sessionflow.kit import ToolExecutionError
from tests.local_tools.conftest import SENTINEL_TEXT, Sandbox, Untouched

TRIES = 2000

APPENDER = textwrap.dedent(
    """
    import os, sys, time
    path, stop = sys.argv[1], sys.argv[2]
    count = 0
    while not os.path.exists(stop):
        with open(path, "a") as file:  # no lock: a plain `echo line >> file`
            file.write(f"appended {count}\\n")
        count += 1
        time.sleep(0.001)
    print(count)
    """
)


def _start(script: str, *args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)], stdout=subprocess.PIPE, text=True
    )


async def test_edit_file_loses_no_line_of_a_concurrent_appender(sandbox: Sandbox) -> None:
    log = sandbox.ws / "log.txt"
    log.write_text("counter: 0\n")
    stop = sandbox.root / "stop-appender"
    appender = _start(APPENDER, log, stop)
    edited = refused = 0
    try:
        for number in range(TRIES):
            text = log.read_text()
            current = next(line for line in text.splitlines() if line.startswith("counter: "))
            try:
                await sandbox.tools.call(
                    "edit_file", path="log.txt", old_string=current, new_string=f"counter: {number + 1}"
                )
                edited += 1
            except ToolExecutionError as error:
                assert "changed since edit_file read it" in error.message or "kept growing" in error.message
                refused += 1
    finally:
        stop.touch()
        out, _ = appender.communicate(timeout=30)
    appended = int(out)
    lines = Counter(line for line in log.read_text().splitlines() if line.startswith("appended "))
    lost = appended - len(lines)
    print(
        f"\nedit_file vs appender: {edited} edits, {refused} refused, {appended} lines appended, {lost} lost"
    )
    assert edited > TRIES // 2, f"only {edited} of {TRIES} edits went through"
    assert all(count == 1 for count in lines.values()), "a line was kept twice"
    assert lost == 0, f"{lost} appended lines lost in {TRIES} edits"


MOVER = textwrap.dedent(
    """
    import os, sys, time
    inside, outside, stop, mode, seen_path = sys.argv[1:6]
    landed = set()
    parked = {}
    round = 0
    while not os.path.exists(stop):
        round += 1
        away = outside if mode == "back" else f"{outside}-{round}"
        try:
            os.rename(inside, away)
        except OSError:
            continue
        # What was there when it left; names that show up later landed outside, for sure.
        before = set(os.listdir(away))
        if mode == "back":
            os.sched_yield()
            landed |= set(os.listdir(away)) - before
            retry = 0
            while True:
                try:
                    os.rename(away, inside)
                    break
                except OSError:  # write_file made a new directory there meanwhile: park it
                    retry += 1
                    try:
                        os.rename(inside, f"{outside}-recreated-{round}-{retry}")
                    except FileNotFoundError:
                        pass
        else:
            parked[away] = before
            try:
                os.mkdir(inside)  # a fresh directory in its place; the old one stays outside
            except FileExistsError:
                pass  # write_file made it
        # Paced so that on a loaded machine writes still land between moves as well as across them.
        time.sleep(0.0002 if mode == "back" else 0.002)
    for away, before in parked.items():
        landed |= set(os.listdir(away)) - before
    with open(seen_path, "w") as file:
        file.write("\\n".join(sorted(landed)))
    print(round)
    """
)


async def _writes_under_moves(sandbox: Sandbox, mode: str) -> tuple[set[str], set[str], set[str], int]:
    sub = sandbox.ws / "sub"
    sub.mkdir()
    stop = sandbox.root / f"stop-{mode}"
    seen_file = sandbox.root / f"seen-{mode}.txt"
    mover = _start(MOVER, sub, sandbox.moved / "sub", stop, mode, seen_file)
    succeeded: set[str] = set()
    failed: set[str] = set()
    try:
        for number in range(TRIES):
            name = f"w{number}.txt"
            try:
                await sandbox.tools.call("write_file", path=f"sub/{name}", content=f"payload {number}\n")
                succeeded.add(name)
            except ToolExecutionError:
                failed.add(name)
    finally:
        stop.touch()
        out, _ = mover.communicate(timeout=30)
    seen = set(filter(None, seen_file.read_text().splitlines()))
    return succeeded, failed, seen, int(out)


async def test_a_write_into_a_directory_moved_out_and_back_is_never_a_success(sandbox: Sandbox) -> None:
    succeeded, failed, landed_outside, rounds = await _writes_under_moves(sandbox, "back")
    print(
        f"\nwrites vs a directory moved out and back ({rounds} moves): {len(succeeded)} succeeded, "
        f"{len(failed)} errors, {len(landed_outside)} seen landing outside, "
        f"{len(landed_outside & succeeded)} of those reported as success"
    )
    assert rounds > 10 and failed and len(succeeded) > 100, "the race did not run"
    assert landed_outside & succeeded == set()


async def test_a_write_into_a_directory_moved_out_for_good_is_never_a_success(sandbox: Sandbox) -> None:
    succeeded, failed, outside, rounds = await _writes_under_moves(sandbox, "away")
    print(
        f"\nwrites vs a directory moved out for good ({rounds} moves): {len(succeeded)} succeeded, "
        f"{len(failed)} errors, {len(outside)} landed outside, {len(outside & succeeded)} of those "
        "reported as success"
    )
    assert rounds > 10 and failed and len(succeeded) >= 20, "the race did not run"
    assert outside & succeeded == set()
    assert outside <= failed


SWAPPER = textwrap.dedent(
    """
    import os, sys, time
    inside, parked, target, stop = sys.argv[1:5]
    rounds = 0
    while not os.path.exists(stop):
        os.rename(inside, parked)
        os.symlink(target, inside)
        os.unlink(inside)
        os.rename(parked, inside)
        rounds += 1
        time.sleep(0.0002)
    print(rounds)
    """
)


async def test_reads_and_searches_under_a_concurrent_swap_touch_nothing_outside(sandbox: Sandbox) -> None:
    sub = sandbox.ws / "sub"
    sub.mkdir()
    (sub / "f.txt").write_text("inside\n")
    watch = Untouched(sandbox.sentinel, sandbox.outside)
    stop = sandbox.root / "stop-swapper"
    swapper = _start(SWAPPER, sub, sandbox.moved / "sub", sandbox.outside, stop)
    answered = refused = 0
    try:
        for number in range(TRIES):
            args: dict[str, Any]
            tool, args = (
                ("read_file", {"path": "sub/f.txt"})
                if number % 2
                else ("search_files", {"pattern": "TOP-SECRET", "path": "sub"})
            )
            try:
                text = await asyncio.wait_for(sandbox.tools.call(tool, **args), timeout=30)
                assert SENTINEL_TEXT not in text
                answered += 1
            except ToolExecutionError as error:
                assert SENTINEL_TEXT not in error.message
                refused += 1
    finally:
        stop.touch()
        out, _ = swapper.communicate(timeout=30)
    events = watch.events()
    watch.close()
    print(
        f"\nreads/searches vs swaps ({out.strip()} swaps): {answered} answered, {refused} refused, {len(events)} outside events"
    )
    assert int(out) > 10 and refused > 0, "the race did not run"
    assert events == [], "something outside the workspace was opened or read"


async def test_reads_of_a_directory_moved_out_and_back_answer_inside_content_or_refuse(
    sandbox: Sandbox,
) -> None:
    sub = sandbox.ws / "sub"
    sub.mkdir()
    (sub / "f.txt").write_text("inside\n")
    stop = sandbox.root / "stop-reads"
    mover = _start(MOVER, sub, sandbox.moved / "sub", stop, "back", sandbox.root / "seen-reads.txt")
    outcomes: Counter[str] = Counter()
    try:
        for _ in range(TRIES):
            try:
                assert await sandbox.tools.call("read_file", path="sub/f.txt") == "inside\n"
                outcomes["answered"] += 1
            except ToolExecutionError as error:
                if "before opening it" in error.message:
                    outcomes["refused by the kernel's lookup"] += 1
                elif "outside the workspace" in error.message:
                    outcomes["opened inside, moved out before the check"] += 1
                else:
                    assert "no such file" in error.message, error.message
                    outcomes["not there"] += 1
    finally:
        stop.touch()
        out, _ = mover.communicate(timeout=30)
    print(f"\nreads vs a directory moved out and back ({out.strip()} moves): {dict(outcomes)}")
    assert outcomes["answered"] > 0 and sum(outcomes.values()) == TRIES
