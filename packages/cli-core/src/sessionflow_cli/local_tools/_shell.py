"""`run_shell_command`: ``/bin/sh -c`` in the workspace, in its own process group.

The command gets a new session (``start_new_session=True``), so a Ctrl-C in the
terminal never reaches it, and a timeout kills its whole process group, grandchildren
included. Its output is read through pipes this module owns, keeping the start and
the end of each stream and dropping the middle beyond a cap. The command runs with the
worker's permissions: nothing confines it to the workspace.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path

from sessionflow_cli.local_tools._settings import MAX_SHELL_TIMEOUT
from sessionflow_cli.local_tools._text import decode

__all__ = ["MIN_SHELL_TIMEOUT", "STREAM_CAP_BYTES", "effective_timeout", "run_shell_command"]

MIN_SHELL_TIMEOUT = 1.0
STREAM_CAP_BYTES = 32 * 1024
"""Bytes kept of each stream: the first half and the last half of this."""
DRAIN_GRACE = 2.0
"""Seconds to keep reading after the shell ended, for output still in flight."""


def effective_timeout(requested: float | None, default: float) -> float:
    """The timeout to use: the requested one or the default, clamped to 1..600 seconds."""
    value = default if requested is None else requested
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


async def run_shell_command(command: str, workspace: Path, timeout: float) -> str:
    """Run ``command`` and describe how it ended, with its (capped) stdout and stderr."""
    loop = asyncio.get_running_loop()
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            command,
            cwd=workspace,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out_write,
            stderr=err_write,
            start_new_session=True,
        )
    except BaseException:
        for fd in (out_read, err_read):
            os.close(fd)
        raise
    finally:
        os.close(out_write)
        os.close(err_write)
    out, err = _Capture(), _Capture()
    transports: list[asyncio.BaseTransport] = []
    readers: list[asyncio.Task[None]] = []
    timed_out = False
    pipes = [os.fdopen(out_read, "rb", buffering=0), os.fdopen(err_read, "rb", buffering=0)]
    try:
        for pipe, capture in zip(pipes, (out, err), strict=True):
            stream = asyncio.StreamReader()
            transport, _ = await loop.connect_read_pipe(
                lambda s=stream: asyncio.StreamReaderProtocol(s), pipe
            )
            transports.append(transport)
            readers.append(asyncio.create_task(_drain(stream, capture)))
        try:
            await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            timed_out = True
            _kill_group(process.pid)
            await process.wait()
        # Output still in flight, or held open by a background process of the command.
        _, pending = await asyncio.wait(readers, timeout=DRAIN_GRACE)
        still_open = bool(pending)
    finally:
        if process.returncode is None:  # cancelled: the command must not outlive the call
            _kill_group(process.pid)
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
        for transport in transports:
            transport.close()
        for pipe in pipes:
            pipe.close()
    return _describe(command, process.returncode, timed_out, timeout, still_open, out, err)


async def _drain(stream: asyncio.StreamReader, capture: _Capture) -> None:
    while chunk := await stream.read(65536):
        capture.add(chunk)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _describe(
    command: str,
    code: int | None,
    timed_out: bool,
    timeout: float,
    still_open: bool,
    out: _Capture,
    err: _Capture,
) -> str:
    if timed_out:
        status = f"timed out after {timeout:g} s; the command's whole process group was killed"
    elif code is not None and code < 0:
        status = f"killed by signal {-code}"
    else:
        status = f"exit code {code}"
    lines = [f"$ {command}", status]
    if still_open:
        lines.append(
            "[background processes of the command still hold its output open; they were left "
            "running, but their further output is not captured]"
        )
    stdout, stderr = out.text(), err.text()
    lines.append("--- stdout ---" if stdout else "--- stdout: (empty) ---")
    if stdout:
        lines.append(stdout.rstrip("\n"))
    lines.append("--- stderr ---" if stderr else "--- stderr: (empty) ---")
    if stderr:
        lines.append(stderr.rstrip("\n"))
    return "\n".join(lines)
