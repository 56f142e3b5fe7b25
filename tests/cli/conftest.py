"""Run the `sessionflow` command as a process: a private HOME per test, the test run's dev server."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pexpect
import pytest

from sessionflow.demo import ModelReply, RecordedRequest, ScriptedModelServer
from sessionflow.temporal import free_port, stop_dev_server
from sessionflow_cli._resident import stop_all_residents

REPO = Path(__file__).parents[2]
SCRIPTED_PLUGIN = "tests.cli.scripted_plugin"
COMMAND = str(Path(sys.executable).parent / "sessionflow")

LOCAL_TOOLS_OFF = "local_tools: {files: false, shell: {enabled: false}, web_fetch: false, browser: false}\n"


@pytest.fixture(scope="session")
def model_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as server:
        yield server


@pytest.fixture(scope="module")
def private_port() -> int:
    """A port no server uses, for ``server: auto`` runs of this module (SESSIONFLOW_SERVER_PORT)."""
    return free_port()


@dataclass
class Cli:
    """The command with a private HOME and workspace, talking to the scripted model server."""

    home: Path
    workspace: Path
    server_address: str
    model_server: ScriptedModelServer
    key: str
    env: dict[str, str] = field(default_factory=lambda: dict[str, str]())

    @property
    def server_port(self) -> int:
        return int(self.server_address.rpartition(":")[2])

    def config_path(self, framework: str = "scripted") -> Path:
        return self.home / ".sessionflow" / f"{framework}.yaml"

    def write_config(self, text: str | None = None, framework: str = "scripted") -> Path:
        """The configuration file; by default the test server, local tools off, model `scripted`."""
        body = (
            text if text is not None else f"model: scripted\nserver: {self.server_address}\n{LOCAL_TOOLS_OFF}"
        )
        path = self.config_path(framework)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
        return path

    def script(self, replies: Sequence[ModelReply]) -> None:
        self.model_server.script(self.key, replies)

    def requests(self) -> list[RecordedRequest]:
        return self.model_server.requests(self.key)

    def environment(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {**self.env, **(extra or {})}

    def run(
        self,
        *args: str,
        timeout: float = 120,
        cwd: Path | None = None,
        extra_env: dict[str, str] | None = None,
        stdin: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run without a terminal: standard input is /dev/null, or a pipe that carries `stdin`."""
        return subprocess.run(
            [COMMAND, *args],
            cwd=cwd or self.workspace,
            env=self.environment(extra_env),
            input=stdin,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def spawn(self, *args: str, timeout: float = 60, cwd: Path | None = None) -> pexpect.spawn[str]:
        """Run in a pseudo-terminal."""
        child: pexpect.spawn[str] = pexpect.spawn(
            COMMAND,
            list(args),
            cwd=str(cwd or self.workspace),
            env=self.environment(),
            encoding="utf-8",
            timeout=timeout,
            dimensions=(50, 200),
            preexec_fn=_as_in_a_terminal,
        )
        child.logfile_read = _Transcript(self.home / "transcript.txt")
        return child


def _as_in_a_terminal() -> None:
    # A command started from a shell without job control (`cmd &` in a script, as a CI
    # runner may start this suite) inherits SIGINT ignored, and Python then leaves it
    # ignored. A person's terminal delivers Ctrl-C: give the child the default.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class _Transcript:
    """Keeps what a terminal run printed, for the failure report of a test."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, text: str) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(f"<{time.monotonic():.1f}>" + text)

    def flush(self) -> None:
        return


def base_environment(home: Path, port: int) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SESSIONFLOW_", "TEMPORAL_", "OPENAI_", "ANTHROPIC_", "PYTEST_", "COV_"))
        # No XDG folders: the command keeps everything in the private ~/.sessionflow (and
        # Temporal looks for temporal.toml in the private ~/.config).
        and not (key.startswith("XDG_") and key.endswith("_HOME"))
    }
    env.update(
        HOME=str(home),
        PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        SESSIONFLOW_LOAD_PLUGINS=SCRIPTED_PLUGIN,
        SESSIONFLOW_SERVER_PORT=str(port),
        TERM="dumb",
        NO_COLOR="1",
        COLUMNS="200",
        PROMPT_TOOLKIT_NO_CPR="1",
        PYTHONUNBUFFERED="1",
        # Each command serves its flow in its own process: the tests of the resident worker
        # (test_resident_worker.py) turn it back on, and stop what they start.
        SESSIONFLOW_RESIDENT_WORKER="0",
    )
    return env


@pytest.fixture
def cli(
    tmp_path: Path,
    temporal_address: str,
    model_server: ScriptedModelServer,
    private_port: int,
    request: pytest.FixtureRequest,
) -> Iterator[Cli]:
    home = tmp_path / "home"
    workspace = tmp_path / "workspace"
    home.mkdir()
    workspace.mkdir()
    key = hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:16]
    env = base_environment(home, private_port)
    env.update(OPENAI_BASE_URL=model_server.base_url(key), OPENAI_API_KEY="test")
    yield Cli(
        home=home,
        workspace=workspace,
        server_address=temporal_address,
        model_server=model_server,
        key=key,
        env=env,
    )
    # A resident worker a test started is stopped by its pid (its state file names it), and
    # so is an embedded dev server a `server: auto` run started in the test's HOME.
    stop_all_residents(home / ".sessionflow", timeout=10)
    stop_dev_server(home / ".sessionflow" / "server")


def finish(child: pexpect.spawn[str], timeout: float = 60) -> int:
    """Wait for a terminal run to end; its exit code."""
    child.expect(pexpect.EOF, timeout=timeout)
    child.close()
    assert child.exitstatus is not None, f"ended by signal {child.signalstatus}"
    return child.exitstatus


def ready_for_keys(child: pexpect.spawn[str]) -> None:
    """Wait until the prompt reads keys itself (raw mode turns echo off), so control keys arrive."""
    assert child.waitnoecho(timeout=30), "the prompt never took the terminal"


def expect_group(child: pexpect.spawn[str], pattern: str) -> str:
    """Wait for `pattern` and return its first group."""
    child.expect(pattern)
    match = child.match
    assert isinstance(match, re.Match)
    return str(match.group(1))
