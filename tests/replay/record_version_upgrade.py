"""Record sessions that continue as new onto a new worker deployment version (issue 26).

    uv run python -m tests.replay.record_version_upgrade

Two in-process workers of one worker deployment, builds A and B, on a dev server of its own.
Two sessions start on A (current):

- `version-upgrade-after-approval`: turn 1 waits for a write's approval; B becomes current;
  the approval is answered, the turn ends on A, and the session continues as new (with the
  `sessionflow-version-upgrade` marker) onto B.
- `version-upgrade-idle`: turn 1 ends on A; B becomes current; the `check_version` signal
  wakes the idle session, which continues as new onto B.

The first run of each (the one on A) is written to `histories/`, and `test_replay.py` replays it.
"""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from datetime import timedelta
from pathlib import Path

from sessionflow import AgentSessionClient, AgentSnapshot, AgentStatus, SessionTimings, serve_agent_flows
from sessionflow.temporal import (
    DevServer,
    DevServerConfig,
    WorkerDeployment,
    export_history,
    set_current_version,
    wake_sessions_on_old_versions,
    with_payload_store,
)
from sessionflow.testing import save_scripted_flow, wait_for_agent_snapshot, wait_until, write_script

HERE = Path(__file__).parent / "histories"
AFTER_APPROVAL = "version-upgrade-after-approval"
IDLE = "version-upgrade-idle"


def _turn_done(snapshot: AgentSnapshot) -> bool | None:
    state = snapshot.state
    return (
        bool(state and state.turn_count >= 1 and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE) or None
    )


async def record() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        config = DevServerConfig(
            data_dir=root / "server", dynamic_config={"system.enableSendTargetVersionChanged": True}
        )
        async with DevServer(config) as server:
            client = with_payload_store(await server.connect())
            timings = SessionTimings(
                retry_initial_interval=timedelta(milliseconds=100), heartbeat_interval=timedelta(seconds=1)
            )
            flow = save_scripted_flow(root / "state", "replay-recorder", timings=timings)
            write_script(
                root / "state",
                AFTER_APPROVAL,
                [
                    [
                        {"tool_calls": [{"id": "w", "name": "publish", "arguments": {"n": 1}}]},
                        {"text": "published"},
                    ]
                ],
                {"publish": {"effect": "non_idempotent_write"}},
            )
            write_script(root / "state", IDLE, [[{"text": "hello"}]])
            sessions = AgentSessionClient(client, flow)
            name = f"recorder-{uuid.uuid4().hex[:8]}"
            release_a, release_b = WorkerDeployment(name, "A"), WorkerDeployment(name, "B")
            stop = asyncio.Event()
            workers = [
                asyncio.create_task(serve_agent_flows(client, [flow], stop=stop, deployment=release_a)),
                asyncio.create_task(serve_agent_flows(client, [flow], stop=stop, deployment=release_b)),
            ]
            try:
                await set_current_version(client, release_a)
                first_runs: dict[str, str] = {}
                for session_id in (AFTER_APPROVAL, IDLE):
                    await sessions.start_session(session_id, "start")
                    first_runs[session_id] = (await client.get_workflow_handle(session_id).describe()).run_id
                await wait_for_agent_snapshot(
                    sessions,
                    AFTER_APPROVAL,
                    lambda s: bool(s.pending_interrupts) or None,
                    description="approval",
                )
                await wait_for_agent_snapshot(sessions, IDLE, _turn_done, description="turn 1")
                await set_current_version(client, release_b)
                assert await sessions.resolve_interrupt(AFTER_APPROVAL, "turn-1:w", approved=True)
                assert IDLE in await wake_sessions_on_old_versions(client, name)
                for session_id, run_id in first_runs.items():

                    async def moved(session_id: str = session_id, run_id: str = run_id) -> bool:
                        return (await client.get_workflow_handle(session_id).describe()).run_id != run_id

                    await wait_until(f"{session_id} to continue as new", moved, timeout=60)
                    await sessions.stop_session(session_id)
                    await export_history(client, session_id, HERE / f"{session_id}.json", run_id=run_id)
                    print(f"recorded {session_id}")
            finally:
                stop.set()
                await asyncio.gather(*workers)


if __name__ == "__main__":
    asyncio.run(record())
