"""The shell tool's wrapper process: runs one command and can kill every process it made.

Run as a script (``python -I -S _reaper.py STATUS_FD ARGV...``; standard library only,
so it starts fast). It makes itself a child subreaper (``PR_SET_CHILD_SUBREAPER``), so
every orphaned descendant of the command, even one that called ``setsid`` or forked
twice, becomes its child instead of init's, and none can slip out of the tree. It
starts ``ARGV`` (``SHELL -c COMMAND``, inside ``bwrap`` when sandboxed) in a new session, writes how the shell ended to STATUS_FD
(``exit N`` or ``signal N``), and then waits on its standard input, a pipe from the
tool: a byte or end of file (the tool gave up, was cancelled, or its worker died) makes
it SIGKILL every descendant, reap them all, and exit.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import subprocess
import sys

_PR_SET_CHILD_SUBREAPER = 36
_KILL_ROUNDS = 200
"""Kill-and-rescan rounds before giving up on a process tree that keeps forking."""


def _descendants(root: int) -> list[int]:
    """Every live process below ``root``, from the parent links in /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                fields = file.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue  # ended while we looked
        if fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))  # fields[1]: the parent
    found: list[int] = []
    pending = [root]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def _reap() -> list[tuple[int, int]]:
    ended: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        ended.append((pid, status))


def _kill_tree() -> None:
    me = os.getpid()
    for _ in range(_KILL_ROUNDS):
        alive = _descendants(me)
        if not alive:
            break
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _reap()
    _reap()


def _status_text(status: int) -> bytes:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}\n".encode()
    return f"exit {os.waitstatus_to_exitcode(status)}\n".encode()


def main(argv: list[str]) -> int:
    status_fd, command = int(argv[1]), argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        os.write(status_fd, b"error cannot become a child subreaper\n")
        return 1
    wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    shell = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    # Only the shell and its descendants hold the output pipes, so the tool sees them close.
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    os.close(quiet)
    control = sys.stdin.fileno()
    reported = False
    while True:
        for pid, status in _reap():
            if pid == shell.pid and not reported:
                os.write(status_fd, _status_text(status))
                os.close(status_fd)
                reported = True
        readable, _, _ = select.select([control, wake_read], [], [])
        if wake_read in readable:
            while True:
                try:
                    os.read(wake_read, 512)
                except BlockingIOError:
                    break
        if control in readable:
            _kill_tree()  # any byte, or end of file: the tool is done with this command
            return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
