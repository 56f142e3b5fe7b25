"""Record a session started before the payload store and continued after it.

    uv run python -m tests.replay.record_upgrade OLD_PYTHON

OLD_PYTHON is the interpreter of a checkout from before the change (payload version 1), for
example a `git worktree` of commit 269384f after `uv sync`. Its worker runs the session's
first turn (a 300 KB read kept inline), continues as new with a version 1 state, and
raises an approval in turn two; then it is killed, and a worker of this checkout answers
the approval and finishes turn two; the session continues as new again, now with a
version 2 state, runs turn three, and stops. The run in which the upgrade happened (begun
by the old worker, finished by the new one) is written to `histories/upgrade-from-v1.json`,
and `test_replay.py` replays it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from sessionflow import AgentSessionClient, AgentSnapshot, AgentStatus, SessionTimings, serve_agent_flows
from sessionflow.temporal import DevServer, DevServerConfig, export_history
from sessionflow.testing import STATE_DIR_ENV, save_scripted_flow, wait_for_agent_snapshot, write_script

HERE = Path(__file__).parent / "histories"
NAME = "upgrade-from-v1"
TURNS: list[list[dict[str, Any]]] = [
    [{"tool_calls": [{"id": "r1", "name": "read_big", "arguments": {}}]}, {"text": "read it"}],
    [{"tool_calls": [{"id": "w2", "name": "publish", "arguments": {}}]}, {"text": "published"}],
    [
        {"tool_calls": [{"id": "r3", "name": "read_big", "arguments": {"again": True}}]},
        {"text": "read again"},
    ],
]
TOOLS: dict[str, Any] = {
    "read_big": {"effect": "read", "output_bytes": 300_000},
    "publish": {"effect": "non_idempotent_write"},
}


def _turn_done(turn: int):
    def done(snapshot: AgentSnapshot) -> bool | None:
        state = snapshot.state
        return (
            bool(state and state.turn_count >= turn and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE)
            or None
        )

    return done


async def record(old_python: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        os.environ["SESSIONFLOW_PAYLOADS"] = str(root / "payloads")
        async with DevServer(DevServerConfig(data_dir=root / "server")) as server:
            client = await server.connect()
            timings = SessionTimings(
                retry_initial_interval=timedelta(milliseconds=100), heartbeat_interval=timedelta(seconds=1)
            )
            state = root / "state"
            flow = save_scripted_flow(
                state, "replay-recorder", timings=timings, continue_as_new_after_events=20
            )
            write_script(state, NAME, TURNS, TOOLS)
            sessions = AgentSessionClient(client, flow)
            env = {**os.environ, "SESSIONFLOW_SERVER_ADDRESS": server.address, STATE_DIR_ENV: str(state)}
            old = subprocess.Popen(  # noqa: ASYNC220 - the old worker runs on its own
                [old_python, "-m", "sessionflow.testing.scripted_worker"], env=env, start_new_session=True
            )
            try:
                await sessions.start_session(NAME, "turn 1")
                await wait_for_agent_snapshot(sessions, NAME, _turn_done(1), description="turn 1", timeout=60)
                await sessions.send_user_message(NAME, "turn 2")
                await wait_for_agent_snapshot(
                    sessions,
                    NAME,
                    lambda s: bool(s.pending_interrupts) or None,
                    description="approval",
                    timeout=60,
                )
            finally:
                os.killpg(old.pid, signal.SIGKILL)
                old.wait()
            stop = asyncio.Event()
            worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
            try:
                assert await sessions.resolve_interrupt(NAME, "turn-2:w2", approved=True)
                await wait_for_agent_snapshot(sessions, NAME, _turn_done(2), description="turn 2", timeout=60)
                upgraded_run = (await client.get_workflow_handle(NAME).describe()).run_id
                await sessions.send_user_message(NAME, "turn 3")
                await wait_for_agent_snapshot(sessions, NAME, _turn_done(3), description="turn 3", timeout=60)
                snapshot = await sessions.get_agent_snapshot(NAME)
                assert snapshot.message_count == 12, snapshot.message_count
                await sessions.stop_session(NAME)
                await client.get_workflow_handle(NAME).result()
                assert (await client.get_workflow_handle(NAME).describe()).run_id != upgraded_run
                await export_history(client, NAME, HERE / f"{NAME}.json", run_id=upgraded_run)
                print(f"recorded {NAME}")
            finally:
                stop.set()
                await worker


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    asyncio.run(record(sys.argv[1]))
