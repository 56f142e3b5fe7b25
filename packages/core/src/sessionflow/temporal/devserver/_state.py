"""The data folder's state: the recorded handle in ``dev-server.json`` and its lock."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Self

from sessionflow.home import open_private
from sessionflow.temporal.devserver._errors import DevServerError
from sessionflow.temporal.devserver._probe import split_hostport

if TYPE_CHECKING:
    # Imported by `connect`: a server's state (status, start, stop) needs no client, and
    # temporalio's client costs ~0.4 s to import.
    from temporalio.client import Client

if sys.platform != "win32":
    import fcntl

__all__ = [
    "DB_FILE_NAME",
    "LOCK_FILE_NAME",
    "LOG_FILE_NAME",
    "STATE_FILE_NAME",
    "DataDirLock",
    "DevServerHandle",
    "now_iso",
    "read_state",
    "remove_state",
    "write_state",
]

STATE_FILE_NAME = "dev-server.json"
LOG_FILE_NAME = "temporal.log"
DB_FILE_NAME = "temporal.sqlite"
LOCK_FILE_NAME = "dev-server.lock"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True, kw_only=True)
class DevServerHandle:
    """A running dev server, as recorded in ``<data_dir>/dev-server.json``.

    ``reused`` is true when :meth:`DevServer.ensure_running` found this server already running.
    """

    pid: int
    address: str
    ui_address: str | None
    namespace: str
    db_file: Path
    binary: Path
    started_at: str
    data_dir: Path
    reused: bool = False

    @property
    def host(self) -> str:
        return split_hostport(self.address)[0]

    @property
    def port(self) -> int:
        return split_hostport(self.address)[1]

    @property
    def state_file(self) -> Path:
        return self.data_dir / STATE_FILE_NAME

    @property
    def log_file(self) -> Path:
        return self.data_dir / LOG_FILE_NAME

    async def connect(self) -> Client:
        """Connect a client to this server's namespace."""
        from temporalio.client import Client

        return await Client.connect(self.address, namespace=self.namespace)

    def to_state(self) -> dict[str, object]:
        """The JSON document stored in the state file."""
        return {
            "pid": self.pid,
            "address": self.address,
            "ui_address": self.ui_address,
            "namespace": self.namespace,
            "db_file": str(self.db_file),
            "binary": str(self.binary),
            "started_at": self.started_at,
        }

    @classmethod
    def from_state(cls, data: Mapping[str, object], data_dir: Path, *, reused: bool = False) -> Self:
        """Parse a state document; raises ``ValueError`` when it is malformed."""
        pid = data.get("pid")
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
            raise ValueError(f"bad pid {pid!r}")
        ui_address = data.get("ui_address")
        if ui_address is not None and not isinstance(ui_address, str):
            raise ValueError(f"bad ui_address {ui_address!r}")
        address = _required_str(data, "address")
        split_hostport(address)  # validates the port part
        return cls(
            pid=pid,
            address=address,
            ui_address=ui_address,
            namespace=_required_str(data, "namespace"),
            db_file=Path(_required_str(data, "db_file")),
            binary=Path(_required_str(data, "binary")),
            started_at=_required_str(data, "started_at"),
            data_dir=data_dir,
            reused=reused,
        )


def _required_str(data: Mapping[str, object], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"bad {key} {value!r}")
    return value


def read_state(data_dir: Path) -> DevServerHandle | None:
    """The recorded server, or ``None`` when there is no (readable, well-formed) state file."""
    try:
        raw = (data_dir / STATE_FILE_NAME).read_text(encoding="utf-8")
        data = json.loads(raw)
        if not isinstance(data, dict):
            return None
        return DevServerHandle.from_state(data, data_dir)  # pyright: ignore[reportUnknownArgumentType]
    except (OSError, ValueError):
        return None


def write_state(handle: DevServerHandle) -> None:
    # Write-then-rename so a concurrent reader never sees a half-written file.
    tmp = handle.state_file.with_name(f".{STATE_FILE_NAME}.{os.getpid()}.tmp")
    with os.fdopen(open_private(tmp), "w", encoding="utf-8") as file:
        file.write(json.dumps(handle.to_state(), indent=2) + "\n")
    os.replace(tmp, handle.state_file)


def remove_state(data_dir: Path) -> None:
    (data_dir / STATE_FILE_NAME).unlink(missing_ok=True)


class DataDirLock:
    """Advisory ``flock`` on ``<data_dir>/dev-server.lock`` (no-op on Windows).

    flock locks belong to the open file description, so two tasks in the same process exclude
    each other too. Acquisition polls with a non-blocking flock so async waits stay cancellable.
    """

    def __init__(self, data_dir: Path, timeout: float) -> None:
        self._path = data_dir / LOCK_FILE_NAME
        self._timeout = timeout
        self._fd: int | None = None

    def _try_acquire(self) -> bool:
        if sys.platform == "win32":
            return True
        fd = open_private(self._path, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def _release(self) -> None:
        if self._fd is not None and sys.platform != "win32":
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
        self._fd = None

    def _timeout_error(self) -> DevServerError:
        return DevServerError(
            f"timed out after {self._timeout:.0f}s waiting for {self._path}: "
            "another process is starting or stopping the dev server for this data folder"
        )

    async def __aenter__(self) -> None:
        deadline = time.monotonic() + self._timeout
        while not self._try_acquire():
            if time.monotonic() > deadline:
                raise self._timeout_error()
            await asyncio.sleep(0.05)

    async def __aexit__(self, *_exc: object) -> None:
        self._release()

    def __enter__(self) -> None:
        deadline = time.monotonic() + self._timeout
        while not self._try_acquire():
            if time.monotonic() > deadline:
                raise self._timeout_error()
            time.sleep(0.05)

    def __exit__(self, *_exc: object) -> None:
        self._release()
