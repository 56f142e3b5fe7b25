"""The resident worker (issue 43): `-p` reuses one background `sessionflow worker --resident`,
starts another when the configuration changes, survives its SIGKILL mid-turn, and stops
when idle. Real processes throughout; every worker a test starts is stopped by its pid."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sessionflow import AgentEventType, AgentSessionClient, connect
from sessionflow.demo import ModelReply, ScriptedToolCall
from sessionflow.temporal import free_port
from sessionflow.testing import FileGate, wait_until
from sessionflow_cli._resident import list_residents, pid_alive, stop_all_residents, workers_dir
from sessionflow_cli._socket_deltas import socket_path
from tests.cli.conftest import COMMAND, LOCAL_TOOLS_OFF, Cli, expect_group, finish

STARTED = re.compile(r"Started the resident worker \(pid (\d+), config ([0-9a-f]+)\)")
USING = re.compile(r"Using the resident worker \(pid (\d+), config ([0-9a-f]+)\)")
LISTED = re.compile(r"^  pid (\d+)  config ([0-9a-f]+) ", re.MULTILINE)
SESSION = re.compile(r"^session (\S+)$", re.MULTILINE)


@dataclass
class Residents:
    """The test's command with the resident worker on, and every worker pid it saw."""

    cli: Cli
    seen: set[int] = field(default_factory=lambda: set[int]())

    def started(self, stderr: str) -> tuple[int, str]:
        found = STARTED.search(stderr)
        assert found is not None, stderr
        self.seen.add(int(found[1]))
        return int(found[1]), found[2]

    def using(self, stderr: str) -> tuple[int, str]:
        found = USING.search(stderr)
        assert found is not None, stderr
        self.seen.add(int(found[1]))
        return int(found[1]), found[2]

    def listed(self) -> list[tuple[int, str]]:
        """What `sessionflow server status` lists: (pid, config hash) of each resident worker."""
        status = self.cli.run("server", "status")
        assert status.returncode == 0, status.stderr
        listed = [(int(pid), key) for pid, key in LISTED.findall(status.stdout)]
        if not listed:
            assert "No resident worker is running." in status.stdout
        self.seen.update(pid for pid, _ in listed)
        return listed

    def home(self) -> Path:
        return self.cli.home / ".sessionflow"


@pytest.fixture
def residents(cli: Cli) -> Iterator[Residents]:
    cli.env.update(
        SESSIONFLOW_RESIDENT_WORKER="1",
        # A SIGKILLed worker's step is noticed in 2 s, its cached sessions in 1 s.
        SESSIONFLOW_HEARTBEAT_TIMEOUT="2",
        SESSIONFLOW_STICKY_QUEUE_TIMEOUT="1",
    )
    residents = Residents(cli)
    try:
        yield residents
    finally:
        stop_all_residents(residents.home(), timeout=10)
        for pid in residents.seen:
            if pid_alive(pid) and pid not in {s.pid for s in list_residents(residents.home())}:
                _kill_if_resident(pid)


def _kill_if_resident(pid: int) -> None:
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return
    if b"--resident" in args:
        os.kill(pid, signal.SIGKILL)


def _start(cli: Cli, *args: str) -> subprocess.Popen[str]:
    """The command in the background, its output in pipes."""
    return subprocess.Popen(
        [COMMAND, *args],
        cwd=cli.workspace,
        env=cli.environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_second_prompt_reuses_the_running_worker(residents: Residents) -> None:
    cli = residents.cli
    cli.write_config()
    cli.script([ModelReply.say("first answer"), ModelReply.say("second answer")])
    first = cli.run("-f", "scripted", "-p", "hello")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "first answer"
    pid, key = residents.started(first.stderr)
    assert residents.listed() == [(pid, key)]

    second = cli.run("-f", "scripted", "-p", "again")
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "second answer"
    assert "Started the resident worker" not in second.stderr
    assert residents.using(second.stderr) == (pid, key)
    assert residents.listed() == [(pid, key)]
    assert len(cli.requests()) == 2

    # Its files are its owner's only.
    folder = workers_dir(residents.home())
    assert _mode(folder) == 0o700
    files = sorted(path.suffix for path in folder.iterdir())
    assert files == [".json", ".lease", ".lock", ".log"]
    assert {_mode(path) for path in folder.iterdir()} == {0o600}
    assert "sessionflow worker ready" in (folder / f"{next(folder.glob('*.json')).stem}.log").read_text()


def test_in_process_worker_leaves_the_resident_one_alone(residents: Residents) -> None:
    cli = residents.cli
    cli.write_config()
    cli.script([ModelReply.say("served in the command")])
    result = cli.run("-f", "scripted", "-p", "hello", "--in-process-worker")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "served in the command"
    assert "resident worker" not in result.stderr
    assert residents.listed() == []


def test_a_changed_configuration_starts_a_new_worker(residents: Residents) -> None:
    cli = residents.cli
    cli.write_config()
    cli.script([ModelReply.say("before"), ModelReply.say("after")])
    first = cli.run("-f", "scripted", "-p", "hello")
    assert first.returncode == 0, first.stderr
    old_pid, old_key = residents.started(first.stderr)

    cli.write_config(
        f"model: scripted\nsystem_prompt: Be brief.\nserver: {cli.server_address}\n{LOCAL_TOOLS_OFF}"
    )
    second = cli.run("-f", "scripted", "-p", "hello")
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "after"
    new_pid, new_key = residents.started(second.stderr)
    assert new_pid != old_pid and new_key != old_key
    assert f"The configuration changed ({old_key} -> {new_key})" in second.stderr
    # The old worker was stopped, and waited for, before the new one started.
    assert not pid_alive(old_pid)
    assert residents.listed() == [(new_pid, new_key)]
    assert cli.requests()[1].saw("Be brief.")

    # `server stop` stops the resident workers too.
    stopped = cli.run("server", "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert "Stopped 1 resident worker." in stopped.stdout
    assert not pid_alive(new_pid)
    assert residents.listed() == []


def test_each_workspace_has_its_own_worker_and_its_tools_run_there(residents: Residents) -> None:
    cli = residents.cli
    tools_on = "local_tools: {files: true, shell: {enabled: false}, web_fetch: false, browser: false}\n"
    cli.write_config(f"model: scripted\nserver: {cli.server_address}\n{tools_on}")
    other = cli.workspace.parent / "other-workspace"
    other.mkdir()
    cli.script(
        [
            ModelReply.call(ScriptedToolCall("w1", "write_file", {"path": "note.txt", "content": "one"})),
            ModelReply.say("wrote one"),
            ModelReply.call(ScriptedToolCall("w2", "write_file", {"path": "note.txt", "content": "two"})),
            ModelReply.say("wrote two"),
        ]
    )
    first = cli.run("-f", "scripted", "-p", "write one", "--approve", "write_file")
    assert first.returncode == 0, first.stderr
    second = cli.run("-f", "scripted", "-p", "write two", "--approve", "write_file", cwd=other)
    assert second.returncode == 0, second.stderr
    first_pid, _ = residents.started(first.stderr)
    second_pid, _ = residents.started(second.stderr)
    assert first_pid != second_pid
    assert (cli.workspace / "note.txt").read_text() == "one"
    assert (other / "note.txt").read_text() == "two"
    assert sorted(pid for pid, _ in residents.listed()) == sorted([first_pid, second_pid])


async def test_a_worker_killed_mid_turn_loses_nothing(residents: Residents) -> None:
    cli = residents.cli
    cli.write_config(framework="scripted-gated")
    cli.script(
        [
            ModelReply.call(ScriptedToolCall("g1", "wait_at_gate", {"name": "g"})),
            ModelReply.say("past the gate"),
            ModelReply.say("still here"),
        ]
    )
    gate = FileGate(cli.workspace / ".gates", "g")
    command = _start(cli, "-f", "scripted-gated", "-p", "wait at the gate")
    try:
        await gate.wait_until_reached(timeout=120)
        runs = (cli.workspace / "gate-runs.txt").read_text().split()
        killed = int(runs[0])
        residents.seen.add(killed)
        os.kill(killed, signal.SIGKILL)
        gate.release()
        out, err = await asyncio.to_thread(command.communicate, timeout=180)
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()
    assert command.returncode == 0, err
    assert out.strip() == "past the gate"
    assert f"The resident worker (pid {killed}) stopped; the turn goes on in the next one." in err
    # The tool ran again on the next worker; each model call ran once.
    runs = (cli.workspace / "gate-runs.txt").read_text().split()
    assert len(runs) == 2 and int(runs[0]) == killed
    successor = int(runs[1])
    residents.seen.add(successor)
    assert successor != killed
    assert len(cli.requests()) == 2
    found = SESSION.search(err)
    assert found is not None, err
    session_id = found[1]

    # The next command uses the worker that took over.
    again = cli.run("-f", "scripted-gated", "-p", "and now?", "-r", session_id)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "still here"
    assert residents.using(again.stderr)[0] == successor
    (state,) = list_residents(residents.home())
    sessions = AgentSessionClient(await connect(cli.server_address), state.flow_type)
    events = (await sessions.list_agent_events(session_id)).events
    ended = [e.type for e in events if e.type in (AgentEventType.TURN_COMPLETED, AgentEventType.TURN_FAILED)]
    assert ended == [AgentEventType.TURN_COMPLETED, AgentEventType.TURN_COMPLETED]


async def test_an_idle_worker_stops_on_its_own(residents: Residents) -> None:
    cli = residents.cli
    cli.write_config(
        f"model: scripted\nserver: {cli.server_address}\n{LOCAL_TOOLS_OFF}worker: {{idle_timeout: 1}}\n"
    )
    cli.script([ModelReply.say("hello")])
    result = cli.run("-f", "scripted", "-p", "hi")
    assert result.returncode == 0, result.stderr
    pid, _ = residents.started(result.stderr)
    assert "it stops after 1 s idle" in result.stderr

    await wait_until("the idle worker to exit", lambda: not pid_alive(pid), timeout=120)
    assert residents.listed() == []
    log = next(workers_dir(residents.home()).glob("*.log")).read_text()
    assert "idle for" in log and "sessionflow worker stopped" in log


def test_the_terminal_chat_is_a_client_of_the_resident_worker(residents: Residents) -> None:
    cli = residents.cli
    cli.write_config()
    cli.script(
        [
            ModelReply.say("Streamed over the socket.", chunks=["Streamed", " over", " the socket."]),
            ModelReply.say("The same worker."),
        ]
    )
    child = cli.spawn("chat", "-f", "scripted")
    pid = int(expect_group(child, r"Started the resident worker \(pid (\d+),"))
    residents.seen.add(pid)
    child.expect("you> ")
    child.sendline("hello")
    child.expect_exact("Streamed over the socket.")
    child.expect("you> ")
    # Its live deltas come over the worker's socket while the chat runs.
    (state,) = list_residents(residents.home())
    assert state.pid == pid
    path = socket_path(residents.home(), state.flow_type)
    assert path is not None and path.exists()
    child.sendline("/exit")
    assert finish(child) == 0

    after = cli.run("-f", "scripted", "-p", "again")
    assert after.returncode == 0, after.stderr
    assert after.stdout.strip() == "The same worker."
    assert residents.using(after.stderr)[0] == pid


def test_a_worker_that_cannot_start_fails_the_command_with_its_log(residents: Residents) -> None:
    cli = residents.cli
    down = f"  - name: down\n    url: http://127.0.0.1:{free_port()}/mcp\n    required: true\n"
    cli.write_config(f"model: scripted\nserver: {cli.server_address}\n{LOCAL_TOOLS_OFF}connectors:\n{down}")
    result = cli.run("-f", "scripted", "-p", "hello")
    assert result.returncode == 1, result.stderr
    pid, _ = residents.started(result.stderr)
    assert f"the resident worker (pid {pid}) exited before it was ready" in result.stderr
    assert "down" in result.stderr.split("exited before it was ready", 1)[1]  # its log says why
    assert residents.listed() == []
    assert cli.requests() == []
