"""A `sessionflow` command left running in its own process group, its output in a file:
`sessionflow worker` and `sessionflow serve`, stopped by a real SIGTERM or SIGKILL."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
from pathlib import Path

from sessionflow.testing import wait_until
from tests.cli.conftest import COMMAND, Cli

__all__ = ["BackgroundCommand", "ServeCommand", "WorkerCommand"]

_LOGIN_URL = re.compile(r"(http://127\.0\.0\.1:\d+)/#code=(\S+)")
WORKER_READY = "sessionflow worker ready"


class BackgroundCommand:
    """`sessionflow <args>` with the test's HOME and workspace, until it is stopped."""

    def __init__(self, cli: Cli, log: Path, *args: str) -> None:
        self.log_path = log
        self.name = args[0]
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                [COMMAND, *args],
                cwd=cli.workspace,
                env=cli.environment(),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    async def wait_for_output(self, what: str, pattern: re.Pattern[str]) -> re.Match[str]:
        """The first match of `pattern` in the output; fails at once if the command exits."""

        def probe() -> re.Match[str] | None:
            if self.process.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.process.returncode}:\n{self.output()}")
            return pattern.search(self.output())

        return await wait_until(what, probe, timeout=120)

    def sigterm(self) -> None:
        os.killpg(self.process.pid, signal.SIGTERM)

    async def exit_code(self) -> int:
        return await asyncio.wait_for(asyncio.to_thread(self.process.wait), 120)

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


class WorkerCommand(BackgroundCommand):
    def __init__(self, cli: Cli, log: Path, *args: str) -> None:
        super().__init__(cli, log, "worker", *args)

    async def ready(self) -> str:
        ready = re.compile(rf"^{re.escape(WORKER_READY)}.*$", re.MULTILINE)
        return (await self.wait_for_output("the worker to be ready", ready)).group(0)


class ServeCommand(BackgroundCommand):
    def __init__(self, cli: Cli, log: Path, *args: str) -> None:
        super().__init__(cli, log, "serve", "--port", "0", *args)

    async def login_url(self) -> tuple[str, str]:
        """The API's base URL and the one-time login code that `sessionflow serve` printed."""
        found = await self.wait_for_output("the login URL", _LOGIN_URL)
        return found.group(1), found.group(2)

    async def stop(self) -> int:
        self.sigterm()
        return await self.exit_code()
