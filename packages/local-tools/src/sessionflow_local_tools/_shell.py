"""`run_shell_command`: ``/bin/sh -c`` in the workspace, as one process tree killed whole.

The command runs under a small wrapper process (`_reaper`), a child subreaper: every
process the command starts stays in the wrapper's tree, even one that calls ``setsid``
or forks twice. When the command times out, when the call is cancelled, and when the
shell has ended and its output has drained, the wrapper kills the whole tree; if the
worker dies, the wrapper sees its control pipe close and does the same. The shell gets a
new session, so a Ctrl-C in the terminal never reaches it. Output is read through pipes
this module owns, keeping the start and the end of each stream and dropping the middle
beyond a cap. Given a `ShellSandbox`, the shell runs inside bubblewrap or under Landlock
(`_sandbox`): the workspace read-write, the rest read-only or hidden, no network; when
neither is usable it runs with the worker's permissions and its result says so, as it
says what Landlock leaves unconfined.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from sessionflow.kit import ToolExecutionError
from sessionflow_local_tools import _reaper
from sessionflow_local_tools._sandbox import bwrap_argv, landlock_argv, sandbox_status
from sessionflow_local_tools._settings import ShellSandbox
from sessionflow_local_tools._text import decode

__all__ = [
    "MAX_SHELL_TIMEOUT",
    "MIN_SHELL_TIMEOUT",
    "STREAM_CAP_BYTES",
    "ShellRun",
    "effective_timeout",
    "run_shell",
    "run_shell_command",
]

MAX_SHELL_TIMEOUT = 600.0
"""Seconds; a longer shell timeout, from the settings or the model, is cut down to this."""
MIN_SHELL_TIMEOUT = 1.0
STREAM_CAP_BYTES = 32 * 1024
"""Bytes kept of each stream: the first half and the last half of this."""
DRAIN_GRACE = 2.0
"""Seconds to keep reading after the shell ended, for output still in flight."""
REAP_GRACE = 10.0
"""Seconds the wrapper gets to kill the tree before it is killed itself."""


def effective_timeout(requested: float | None, default: float) -> float:
    """The timeout to use: the requested one or the default, clamped to 1..600 seconds."""
    value = default if requested is None else requested
    if not math.isfinite(value):  # NaN would pass both clamps unchanged
        raise ToolExecutionError("the timeout must be a finite number of seconds")
    return min(max(value, MIN_SHELL_TIMEOUT), MAX_SHELL_TIMEOUT)


@dataclass
class _Capture:
    """The head and tail of one stream, with a count of the bytes dropped between them."""

    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    dropped: int = 0

    def add(self, chunk: bytes) -> None:
        half = STREAM_CAP_BYTES // 2
        room = half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        excess = len(self.tail) - half
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    def text(self) -> str:
        if not self.dropped:
            return decode(bytes(self.head + self.tail))
        return (
            f"{decode(bytes(self.head))}\n[... output truncated: {self.dropped} bytes not shown ...]\n"
            f"{decode(bytes(self.tail))}"
        )


async def run_shell_command(
    command: str, workspace: Path, timeout: float, sandbox: ShellSandbox | None = None
) -> str:
    """Run ``command`` and describe how it ended, with its (capped) stdout and stderr."""
    return (await run_shell(command, workspace, timeout, sandbox=sandbox)).describe()


async def run_shell(
    command: str,
    workspace: Path,
    timeout: float,
    *,
    shell: str = "/bin/sh",
    sandbox: ShellSandbox | None = None,
) -> ShellRun:
    """Run ``shell -c command`` in ``workspace`` as one process tree, killed whole when the call ends.

    With a ``sandbox`` it runs inside bubblewrap or under Landlock (`ShellRun.sandbox`
    says which), or, when neither is usable here, unconfined with `ShellRun.unsandboxed`
    saying why.
    """
    if "\x00" in command:
        raise ToolExecutionError("the command contains a NUL byte")
    try:
        command.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolExecutionError("the command is not valid text (it contains a lone surrogate)") from None
    timeout = effective_timeout(timeout, timeout)
    argv = [shell, "-c", command]
    confined = _Confined(argv)
    if sandbox is not None:  # the probe is cached, but blocks the first time
        confined = await asyncio.to_thread(_confine, argv, sandbox, workspace)
    try:
        run = await _run(command, confined.argv, workspace, timeout)
    finally:
        if confined.tmpdir is not None:  # the tree is dead: nothing writes there any more
            await asyncio.to_thread(shutil.rmtree, confined.tmpdir, True)
    return replace(
        run, sandbox=confined.label, unsandboxed=confined.unsandboxed, unconfined=confined.unconfined
    )


async def _run(command: str, argv: list[str], workspace: Path, timeout: float) -> ShellRun:
    loop = asyncio.get_running_loop()
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    status_read, status_write = os.pipe()
    control_read, control_write = os.pipe()
    try:
        wrapper = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            "-S",
            _reaper.__file__,
            str(status_write),
            *argv,
            cwd=workspace,
            stdin=control_read,
            stdout=out_write,
            stderr=err_write,
            pass_fds=(status_write,),
            start_new_session=True,
        )
    except BaseException:
        for fd in (out_read, err_read, status_read, control_write):
            os.close(fd)
        raise
    finally:
        for fd in (out_write, err_write, status_write, control_read):
            os.close(fd)
    out, err = _Capture(), _Capture()
    transports: list[asyncio.BaseTransport] = []
    readers: list[asyncio.Task[None]] = []
    timed_out = False
    status = ""
    still_open = False
    pipes = [os.fdopen(fd, "rb", buffering=0) for fd in (out_read, err_read, status_read)]
    status_stream = asyncio.StreamReader()
    try:
        for pipe, capture in zip(pipes, (out, err), strict=False):
            stream = asyncio.StreamReader()
            transport, _ = await loop.connect_read_pipe(
                lambda s=stream: asyncio.StreamReaderProtocol(s), pipe
            )
            transports.append(transport)
            readers.append(asyncio.create_task(_drain(stream, capture)))
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(status_stream), pipes[2]
        )
        transports.append(transport)
        try:
            async with asyncio.timeout(timeout):
                status = (await status_stream.readline()).decode("ascii", "replace").strip()
        except TimeoutError:
            timed_out = True
        if not timed_out:
            # Output still in flight, or held open by a background process of the command.
            _, pending = await asyncio.wait(readers, timeout=DRAIN_GRACE)
            still_open = bool(pending)
    finally:
        # Timed out, ended, or cancelled: nothing the command started may outlive the call.
        await _end_tree(wrapper, control_write)
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
        for transport in transports:
            transport.close()
        for pipe in pipes:
            pipe.close()
    return ShellRun(command, status, timed_out, timeout, still_open, out.text(), err.text())


@dataclass(frozen=True)
class _Confined:
    argv: list[str]
    label: str | None = None
    unsandboxed: str | None = None
    unconfined: tuple[str, ...] = ()
    tmpdir: str | None = None
    """The command's private ``TMPDIR`` under Landlock, removed when the call ends."""


def _confine(argv: list[str], sandbox: ShellSandbox, workspace: Path) -> _Confined:
    """``argv`` inside bubblewrap or under Landlock, or unchanged with the reason neither is usable."""
    found = sandbox_status(sandbox)
    home = Path(os.path.expanduser("~"))
    root = Path(workspace).absolute()
    if found.backend == "bubblewrap" and found.bwrap is not None:
        return _Confined([*bwrap_argv(found.bwrap, sandbox, root, home), *argv], found.label)
    if found.backend == "landlock":
        tmpdir = tempfile.mkdtemp(prefix="sessionflow-shell-")
        try:
            launcher = landlock_argv(found, sandbox, root, home, Path(tmpdir))
        except BaseException:
            shutil.rmtree(tmpdir, ignore_errors=True)
            raise
        return _Confined([*launcher, *argv], found.label, unconfined=found.unconfined, tmpdir=tmpdir)
    return _Confined(argv, found.label, unsandboxed=found.reason)


async def _end_tree(wrapper: asyncio.subprocess.Process, control: int) -> None:
    """Tell the wrapper to kill the tree and wait for it; kill the wrapper too if it hangs.

    The byte (or the pipe closing) is sent before any wait, so a second cancel while
    waiting still leaves the wrapper killing the tree on its own.
    """
    with contextlib.suppress(OSError):
        os.write(control, b"k")
    os.close(control)
    try:
        await asyncio.wait_for(wrapper.wait(), REAP_GRACE)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(wrapper.pid, signal.SIGKILL)


async def _drain(stream: asyncio.StreamReader, capture: _Capture) -> None:
    while chunk := await stream.read(65536):
        capture.add(chunk)


@dataclass(frozen=True)
class ShellRun:
    """How one command ended, with its (capped) output."""

    command: str
    status: str
    """``exit N`` or ``signal N`` as the wrapper reported it; empty if it reported nothing."""
    timed_out: bool
    timeout: float
    still_open: bool
    """Background processes still held the output open when the shell ended."""
    stdout: str
    stderr: str
    sandbox: str | None = None
    """``sandboxed (bubblewrap)``, ``sandboxed (landlock)`` or ``not sandboxed``; None when
    no sandbox was asked for (`run_shell` without one)."""
    unsandboxed: str | None = None
    """Why a command meant to run sandboxed ran unconfined; None when sandboxed or not meant to be."""
    unconfined: tuple[str, ...] = ()
    """What the sandbox left unconfined (Landlock)."""

    @property
    def succeeded(self) -> bool:
        return not self.timed_out and self.status == "exit 0"

    def describe(self) -> str:
        """The text `run_shell_command` returns: the command, how it ended, both streams."""
        how, _, number = self.status.partition(" ")
        if self.timed_out:
            ended = (
                f"timed out after {self.timeout:g} s; the command and every process it started were killed"
            )
        elif how == "signal":
            ended = f"killed by signal {number}"
        elif how == "exit":
            ended = f"exit code {number}"
        else:
            ended = f"the command could not be run ({self.status or 'its wrapper ended without a status'})"
        lines = [f"$ {self.command}", ended]
        if self.unsandboxed is not None:
            lines.append(
                f"[not sandboxed: {self.unsandboxed}; the command ran with the worker's permissions]"
            )
        if self.unconfined:
            lines.append(f"[{self.sandbox}; not confined: {'; '.join(self.unconfined)}]")
        if self.still_open:
            lines.append(
                "[background processes of the command still held its output open; they were killed "
                "when the call ended, and their further output is not captured]"
            )
        lines.append("--- stdout ---" if self.stdout else "--- stdout: (empty) ---")
        if self.stdout:
            lines.append(self.stdout.rstrip("\n"))
        lines.append("--- stderr ---" if self.stderr else "--- stderr: (empty) ---")
        if self.stderr:
            lines.append(self.stderr.rstrip("\n"))
        return "\n".join(lines)
