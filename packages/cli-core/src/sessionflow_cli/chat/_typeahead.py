"""Lines typed while the agent works: the chat reads them without a prompt, line by line.

Between two prompts the terminal is in its normal (canonical) mode: it echoes what is typed
and hands a line over when Enter is pressed, and Ctrl-C still sends SIGINT. The reader
watches standard input only while the chat follows a turn, and stands aside while a prompt
of its own (an approval, a question) reads the terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Generator

__all__ = ["TypeAhead"]


class TypeAhead:
    """Whole lines typed at the terminal while it is `watching`, in order."""

    def __init__(self, fd: int | None = None) -> None:
        self._fd = sys.stdin.fileno() if fd is None else fd
        self._buffer = b""
        self._lines: asyncio.Queue[str] = asyncio.Queue()
        self._watching = False

    @property
    def available(self) -> bool:
        """Standard input is a terminal (a pipe has no one typing)."""
        try:
            return os.isatty(self._fd)
        except OSError:
            return False

    def start(self) -> None:
        if self._watching or not self.available:
            return
        asyncio.get_running_loop().add_reader(self._fd, self._readable)
        self._watching = True

    def stop(self) -> None:
        if self._watching:
            asyncio.get_running_loop().remove_reader(self._fd)
            self._watching = False
        # A line begun but not ended goes with the turn: the next prompt starts afresh.
        self._buffer = b""

    @contextlib.contextmanager
    def set_aside(self) -> Generator[None]:
        """Stop watching while a prompt reads the terminal; watch again after, if it was."""
        was = self._watching
        self.stop()
        try:
            yield
        finally:
            if was:
                self.start()

    async def next_line(self) -> str:
        return await self._lines.get()

    def _readable(self) -> None:
        try:
            data = os.read(self._fd, 4096)
        except OSError:
            data = b""
        if not data:  # end of input: nothing more to read while the turn runs
            self.stop()
            return
        self._buffer += data
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            self._lines.put_nowait(line.decode(errors="replace").rstrip("\r"))
