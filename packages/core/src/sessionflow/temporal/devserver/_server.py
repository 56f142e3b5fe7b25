"""`DevServer`: start, reuse and stop one embedded server per data folder."""

from __future__ import annotations

import asyncio
import shlex
import signal
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from types import TracebackType

from sessionflow.home import private_dir, tighten
from sessionflow.temporal.client._probe import FrontendState
from sessionflow.temporal.devserver._binary import find_temporal_binary
from sessionflow.temporal.devserver._config import DevServerConfig
from sessionflow.temporal.devserver._errors import DevServerError
from sessionflow.temporal.devserver._probe import (
    PROBE_TIMEOUT,
    REUSE_PROBE_WINDOW,
    free_port,
    hostport,
    probe_state,
    probe_until_ready,
)
from sessionflow.temporal.devserver._process import (
    CHILDREN,
    STOP_TIMEOUT,
    is_live_server,
    launch,
    log_tail,
    signal_server,
    terminate,
    wait_dead,
)
from sessionflow.temporal.devserver._state import (
    LOCK_FILE_NAME,
    DataDirLock,
    DevServerHandle,
    now_iso,
    read_state,
    remove_state,
    write_state,
)

__all__ = ["DevServer", "stop_dev_server"]


def _stop_locked(data_dir: Path, grace_period: float) -> bool:
    """Stop the recorded server (caller holds the lock). True if a live server was stopped."""
    state = read_state(data_dir)
    stopped = False
    if state is not None and is_live_server(state):
        terminate(state.pid, grace_period)
        stopped = True
    remove_state(data_dir)
    return stopped


def stop_dev_server(data_dir: Path | str, *, grace_period: float = STOP_TIMEOUT) -> bool:
    """Stop the dev server recorded in ``data_dir`` (blocking).

    Only signals the recorded pid's process group, and only after checking that the pid is
    still a ``temporal ... start-dev`` process for this data folder's database. Sends SIGTERM,
    waits up to ``grace_period`` seconds, then SIGKILL; removes the state file.

    Returns:
        True if a running server was stopped, False if none was running.
    """
    path = Path(data_dir).expanduser().resolve()
    if not path.is_dir():
        return False
    with DataDirLock(path, timeout=grace_period + 30):
        return _stop_locked(path, grace_period)


class DevServer:
    """Runs ``temporal server start-dev`` for one data folder.

    Typical use::

        handle = await DevServer.ensure_running(DevServerConfig(data_dir=Path(".sessionflow")))
        client = await handle.connect()
        ...
        stop_dev_server(handle.data_dir)  # or leave it running for the next process

    or scoped: ``async with DevServer(config) as handle: ...``.
    """

    def __init__(self, config: DevServerConfig) -> None:
        self._config = config
        self._handle: DevServerHandle | None = None

    @property
    def config(self) -> DevServerConfig:
        return self._config

    @property
    def handle(self) -> DevServerHandle | None:
        """The server started or reused through this object, if any."""
        return self._handle

    @staticmethod
    def status(data_dir: Path | str) -> DevServerHandle | None:
        """The server recorded in ``data_dir`` if its process is alive and is that server.

        Does not touch the network nor the files; a stale state file yields ``None``.
        """
        state = read_state(Path(data_dir).expanduser().resolve())
        if state is None or not is_live_server(state):
            return None
        return state

    async def start(self) -> DevServerHandle:
        """Start a new server; fails if one recorded in the data folder is still running."""
        cfg = self._config
        _private_data_dir(cfg)
        async with DataDirLock(cfg.data_dir, timeout=cfg.startup_timeout + 30):
            state = read_state(cfg.data_dir)
            if state is not None and is_live_server(state):
                raise DevServerError(
                    f"a dev server for {cfg.data_dir} is already running (pid {state.pid}, "
                    f"{state.address}); reuse it or stop it first"
                )
            remove_state(cfg.data_dir)
            return await self._start_locked()

    @classmethod
    async def ensure_running(cls, config: DevServerConfig) -> DevServerHandle:
        """Reuse the server recorded in ``config.data_dir`` if it is healthy, else start one.

        Reused only when the recorded pid is alive, is a ``temporal ... start-dev`` process for
        this folder's database, and its address answers as a Temporal frontend that has
        ``config.namespace``. A stale state file is removed; a recorded server that is alive but
        does not answer is stopped and replaced. A live server that does not match the config
        (other port/host, missing namespace, no UI) is an error: stop it first.
        """
        server = cls(config)
        _private_data_dir(config)
        async with DataDirLock(config.data_dir, timeout=config.startup_timeout + 30):
            state = read_state(config.data_dir)
            if state is not None and is_live_server(state):
                mismatch = server._mismatch(state)
                if mismatch:
                    raise DevServerError(
                        f"the dev server for {config.data_dir} is running (pid {state.pid}, {state.address}) "
                        f"but {mismatch}; stop it first"
                    )
                result = await probe_until_ready(state.address, config.namespace, REUSE_PROBE_WINDOW)
                if result is FrontendState.READY:
                    server._handle = replace(state, reused=True)
                    return server._handle
                if result is FrontendState.NAMESPACE_MISSING:
                    raise DevServerError(
                        f"the dev server for {config.data_dir} at {state.address} has no namespace "
                        f"{config.namespace!r}; stop it first"
                    )
                # Ours (verified above) but not answering: wedged. Replace it rather than run a second
                # server on the same SQLite file.
                await asyncio.to_thread(terminate, state.pid, STOP_TIMEOUT)
            remove_state(config.data_dir)
            return await server._start_locked()

    async def stop(self, *, grace_period: float = STOP_TIMEOUT) -> bool:
        """Stop the server recorded in the data folder; see :func:`stop_dev_server`."""
        cfg = self._config
        if not cfg.data_dir.is_dir():
            return False
        async with DataDirLock(cfg.data_dir, timeout=grace_period + 30):
            stopped = await asyncio.to_thread(_stop_locked, cfg.data_dir, grace_period)
        self._handle = None
        return stopped

    async def __aenter__(self) -> DevServerHandle:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # -- internals ---------------------------------------------------------------------------

    def _mismatch(self, state: DevServerHandle) -> str | None:
        cfg = self._config
        if state.host != cfg.host:
            return f"it listens on host {state.host}, not {cfg.host}"
        if cfg.port is not None and state.port != cfg.port:
            return f"it listens on port {state.port}, not {cfg.port}"
        if cfg.ui and state.ui_address is None:
            return "it runs without the Web UI"
        if (
            cfg.ui
            and cfg.ui_port is not None
            and state.ui_address != f"http://{hostport(cfg.host, cfg.ui_port)}"
        ):
            return f"its Web UI is at {state.ui_address}, not port {cfg.ui_port}"
        return None

    async def _check_port_free(self, port: int) -> None:
        cfg = self._config
        address = hostport(cfg.host, port)
        result = await probe_state(address, cfg.namespace)
        if result is FrontendState.UNREACHABLE:
            return
        if result is FrontendState.NOT_TEMPORAL:
            raise DevServerError(
                f"cannot start the Temporal dev server on {address}: an unknown service answers on that "
                "port (it accepts TCP connections but is not a Temporal frontend); free the port or "
                "configure another one"
            )
        raise DevServerError(
            f"cannot start the Temporal dev server on {address}: a Temporal frontend that was not "
            f"started from {cfg.data_dir} already answers there; stop it or configure another port"
        )

    async def _start_locked(self) -> DevServerHandle:
        # A port this process picked can be taken by another process before the server binds
        # it (or the server's own derived ports can be): the server then exits at once, and a
        # start on fresh ports succeeds. A port the caller chose is never swapped.
        tries = _PICKED_PORT_TRIES if self._config.port is None else 1
        for attempt in range(1, tries + 1):
            try:
                return await self._start_once()
            except _ExitedBeforeReady:
                if attempt == tries:
                    raise
        raise AssertionError("unreachable")

    async def _start_once(self) -> DevServerHandle:
        cfg = self._config
        binary = cfg.binary if cfg.binary is not None else find_temporal_binary()
        if cfg.port is None:
            port = free_port(cfg.host)
        else:
            port = cfg.port
            await self._check_port_free(port)
        ui_port: int | None = None
        if cfg.ui:
            ui_port = cfg.ui_port if cfg.ui_port is not None else free_port(cfg.host)

        args = cfg.command(binary, port, ui_port)
        try:
            proc, log_offset = launch(args, cfg.log_file, cfg.data_dir)
        except OSError as err:
            raise DevServerError(f"cannot run {binary}: {err}") from err

        handle = DevServerHandle(
            pid=proc.pid,
            address=hostport(cfg.host, port),
            ui_address=f"http://{hostport(cfg.host, ui_port)}" if ui_port is not None else None,
            namespace=cfg.namespace,
            db_file=cfg.db_file,
            binary=binary,
            started_at=now_iso(),
            data_dir=cfg.data_dir,
        )
        try:
            write_state(handle)
            await self._wait_ready(proc, args, handle, log_offset)
        except BaseException:
            # Includes cancellation: never leave a half-started server behind. SIGKILL directly,
            # there is nothing to shut down gracefully yet. Only while poll() says it runs: once
            # reaped, its pid may already belong to someone else.
            if proc.poll() is None:
                signal_server(proc.pid, signal.SIGKILL)
                wait_dead(proc.pid, 5.0)
            CHILDREN.pop(proc.pid, None)
            remove_state(cfg.data_dir)
            raise
        self._handle = handle
        return handle

    async def _wait_ready(
        self, proc: subprocess.Popen[bytes], args: list[str], handle: DevServerHandle, log_offset: int
    ) -> None:
        cfg = self._config
        deadline = time.monotonic() + cfg.startup_timeout
        while True:
            code = proc.poll()
            if code is not None:
                CHILDREN.pop(proc.pid, None)
                raise _ExitedBeforeReady(
                    f"temporal dev server exited with code {code} before it was ready "
                    f"(command: {shlex.join(args)}); log tail of {cfg.log_file}:\n"
                    + log_tail(cfg.log_file, log_offset)
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DevServerError(
                    f"temporal dev server (pid {proc.pid}) did not answer on {handle.address} within "
                    f"{cfg.startup_timeout:.0f}s; log tail of {cfg.log_file}:\n"
                    + log_tail(cfg.log_file, log_offset)
                )
            if (
                await probe_state(handle.address, cfg.namespace, min(PROBE_TIMEOUT, remaining))
                is FrontendState.READY
            ):
                return
            await asyncio.sleep(0.05)


_PICKED_PORT_TRIES = 3
"""Starts on freshly picked ports before a server that exits at once is an error."""


class _ExitedBeforeReady(DevServerError):
    """The server process ended before its frontend answered."""


def _private_data_dir(config: DevServerConfig) -> None:
    """The data folder 0700, and the files the server and we keep in it 0600 (an older
    sessionflow, or a server started without our umask, left them readable)."""
    private_dir(config.data_dir)
    for file in (config.db_file, config.log_file, config.state_file, config.data_dir / LOCK_FILE_NAME):
        tighten(file)
    for suffix in ("-wal", "-shm", "-journal"):
        tighten(config.db_file.with_name(config.db_file.name + suffix))
