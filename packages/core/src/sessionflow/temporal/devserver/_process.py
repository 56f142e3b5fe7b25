"""The server's process: launching it detached, inspecting, signalling and reaping it."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

from sessionflow.home import PRIVATE_UMASK, open_private
from sessionflow.temporal.devserver._errors import DevServerError
from sessionflow.temporal.devserver._state import DevServerHandle, now_iso

__all__ = [
    "CHILDREN",
    "STOP_TIMEOUT",
    "is_live_server",
    "launch",
    "log_tail",
    "signal_server",
    "terminate",
    "wait_dead",
]

STOP_TIMEOUT = 10.0
"""Seconds between SIGTERM and SIGKILL."""


# Popen objects of servers started by this process, so their exit can be reaped (an unreaped
# child stays a zombie: ``kill(pid, 0)`` would still succeed and it would look alive).
CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    # The command name (field 2) may contain spaces and parentheses; the state follows the last ")".
    fields = stat.rpartition(")")[2].split()
    return bool(fields) and fields[0] == "Z"


def _pid_alive(pid: int) -> bool:
    child = CHILDREN.get(pid)
    if child is not None:
        if child.poll() is None:
            return True
        del CHILDREN[pid]
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return not _is_zombie(pid)


def _process_args(pid: int) -> list[str] | None:
    """The command line of ``pid``, or ``None`` if it cannot be read."""
    proc = Path("/proc")
    if proc.is_dir():
        try:
            raw = (proc / str(pid) / "cmdline").read_bytes()
        except OSError:
            return None
        return [part.decode(errors="replace") for part in raw.split(b"\0") if part]
    # No procfs (macOS): ps prints the command line space-joined, good enough for the checks below.
    try:
        out = subprocess.run(
            ["ps", "-o", "command=", "-p", str(pid)], capture_output=True, text=True, check=False, timeout=5
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    line = out.stdout.strip()
    return line.split() if line else None


def _is_temporal_dev_server(pid: int, db_file: Path | None = None) -> bool:
    """Whether ``pid`` runs ``temporal ... start-dev`` (with ``db_file`` when given).

    Guards against pid reuse: a recycled pid must never be signalled or mistaken for our server.
    """
    args = _process_args(pid)
    if not args:
        return False
    if "temporal" not in Path(args[0]).name or "start-dev" not in args:
        return False
    return db_file is None or str(db_file) in args


def is_live_server(handle: DevServerHandle) -> bool:
    return _pid_alive(handle.pid) and _is_temporal_dev_server(handle.pid, handle.db_file)


def signal_server(pid: int, sig: signal.Signals) -> None:
    """Signal the process group ``pid`` leads, or just ``pid`` if it leads none."""
    try:
        # The server was started with start_new_session=True, so it leads its own group; never
        # signal a group it does not lead (that could be the caller's own group).
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except ProcessLookupError:
        pass


def wait_dead(pid: int, timeout: float) -> bool:
    child = CHILDREN.get(pid)
    if child is not None:
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        CHILDREN.pop(pid, None)
        return True
    deadline = time.monotonic() + timeout
    while _pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def terminate(pid: int, timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM, wait up to ``timeout`` seconds, then SIGKILL. Blocking."""
    signal_server(pid, signal.SIGTERM)
    if wait_dead(pid, timeout):
        return
    signal_server(pid, signal.SIGKILL)
    if not wait_dead(pid, 5.0):
        raise DevServerError(f"temporal dev server pid {pid} survived SIGKILL")


def log_tail(log_file: Path, offset: int, max_lines: int = 40) -> str:
    """The last lines written to ``log_file`` since ``offset`` (this launch only)."""
    try:
        with log_file.open("rb") as fh:
            fh.seek(offset)
            data = fh.read()
    except OSError:
        return "(no log)"
    lines = data.decode(errors="replace").splitlines()[-max_lines:]
    return "\n".join(lines) if lines else "(log is empty)"


def launch(args: list[str], log_file: Path, cwd: Path) -> tuple[subprocess.Popen[bytes], int]:
    """Start the server detached in its own session; returns it and the log offset of this run."""
    with os.fdopen(open_private(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND), "ab") as log:
        offset = log.tell()
        log.write(f"--- sessionflow: starting dev server at {now_iso()}\n$ {shlex.join(args)}\n".encode())
        log.flush()
        # Own session: Ctrl-C in the caller's terminal does not hit the server, and stop() can
        # signal exactly the group it leads. The log handle is inherited; ours closes on exit.
        proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
            # The server creates its database (and SQLite its -wal and -shm files): 0600.
            umask=PRIVATE_UMASK,
        )
    CHILDREN[proc.pid] = proc
    return proc, offset
