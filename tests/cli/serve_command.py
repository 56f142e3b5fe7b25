"""`sessionflow serve` as a process of its own, and the login URL it prints."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

from sessionflow.testing import wait_until
from tests.cli.conftest import COMMAND, Cli

__all__ = ["ServeCommand"]

_URL = re.compile(r"(http://127\.0\.0\.1:\d+)/#code=(\S+)")


class ServeCommand:
    def __init__(self, cli: Cli, log: Path, *args: str) -> None:
        self.log_path = log
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                [COMMAND, "serve", "--port", "0", *args],
                cwd=cli.workspace,
                env=cli.environment(),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    async def login_url(self) -> tuple[str, str]:
        def probe() -> tuple[str, str] | None:
            if self.process.poll() is not None:
                raise AssertionError(f"serve exited with {self.process.returncode}:\n{self.output()}")
            found = _URL.search(self.output())
            return (found.group(1), found.group(2)) if found else None

        return await wait_until("the login URL", probe, timeout=120)

    def stop(self) -> int:
        os.killpg(self.process.pid, signal.SIGTERM)
        return self.process.wait(60)

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
