"""Cross-process rendezvous points and call counters for crash tests."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

__all__ = ["FileGate", "InvocationLog"]


class FileGate:
    """A point a worker process marks and then waits at until the test releases it.

    The test awaits `wait_until_reached()` and can SIGKILL the worker at exactly that
    moment. Two gates reached at once prove two steps run in parallel.
    """

    def __init__(self, state_dir: Path | str, name: str) -> None:
        self.directory = Path(state_dir)
        self.name = name

    @property
    def _reached(self) -> Path:
        return self.directory / f"gate-{self.name}.reached"

    @property
    def _released(self) -> Path:
        return self.directory / f"gate-{self.name}.released"

    def mark_reached(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._reached.write_text(str(os.getpid()))

    def is_reached(self) -> bool:
        return self._reached.exists()

    def release(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._released.write_text("released")

    def is_released(self) -> bool:
        return self._released.exists()

    async def wait_for_release(self, poll: float = 0.01) -> None:
        """Mark the gate and wait (worker side)."""
        self.mark_reached()
        while not self.is_released():  # noqa: ASYNC110 - another process releases it through a file
            await asyncio.sleep(poll)

    async def wait_until_reached(self, timeout: float = 30.0, poll: float = 0.01) -> None:
        """Wait until a worker marked the gate (test side)."""
        deadline = time.monotonic() + timeout
        while not self.is_reached():
            if time.monotonic() > deadline:
                raise TimeoutError(f"gate {self.name!r} was not reached within {timeout} s")
            await asyncio.sleep(poll)


class InvocationLog:
    """Counts real tool and model calls across processes: one JSON line per call."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def record(self, kind: str, name: str, **fields: Any) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"kind": kind, "name": name, "pid": os.getpid(), "at": time.time(), **fields}
        line = json.dumps(entry, sort_keys=True) + "\n"
        # One O_APPEND write per line keeps concurrent writers from interleaving.
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)

    def entries(self, kind: str | None = None, name: str | None = None, **match: Any) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        found: list[dict[str, Any]] = []
        for line in self.path.read_text().splitlines():
            entry: dict[str, Any] = json.loads(line)
            if kind is not None and entry.get("kind") != kind:
                continue
            if name is not None and entry.get("name") != name:
                continue
            if any(entry.get(k) != v for k, v in match.items()):
                continue
            found.append(entry)
        return found

    def count(self, kind: str | None = None, name: str | None = None, **match: Any) -> int:
        return len(self.entries(kind, name, **match))
