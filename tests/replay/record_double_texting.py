"""Record sessions that use double-texting and fork (issue 27).

    uv run python -m tests.replay.record_double_texting

On a dev server of its own, with an in-process worker:

- `double-texting`: a session whose policy is `reject`. While turn 1's model step waits at
  a gate, a message is refused (and its retry, by the same ID), and one that asks to
  `interrupt` cancels the turn (the `sessionflow-double-texting` marker); turn 2 runs that
  message, and a message queued during it (`enqueue`) runs as turn 3.
- `forked-session`: a fork at turn 1 of a two-turn session (`forked_from` and the policy in
  its start input), which then runs a turn.

Each session's history is written to `histories/`, and `test_replay.py` replays it.
"""

from __future__ import annotations

import asyncio
import tempfile
from datetime import timedelta
from pathlib import Path

from sessionflow import (
    AgentSessionClient,
    AgentSnapshot,
    AgentStatus,
    DoubleTexting,
    MessageRejectedError,
    SessionTimings,
    serve_agent_flows,
)
from sessionflow.temporal import DevServer, DevServerConfig, export_history, with_payload_store
from sessionflow.testing import FileGate, save_scripted_flow, wait_for_agent_snapshot, write_script

HERE = Path(__file__).parent / "histories"
DOUBLE_TEXTING = "double-texting"
ORIGINAL = "fork-original"
FORKED = "forked-session"


async def _idle_after(sessions: AgentSessionClient, session_id: str, turns: int) -> None:
    def done(snapshot: AgentSnapshot) -> bool | None:
        state = snapshot.state
        return (
            bool(state and state.turn_count >= turns and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE)
            or None
        )

    await wait_for_agent_snapshot(sessions, session_id, done, description=f"turn {turns} of {session_id}")


async def _stop_and_export(sessions: AgentSessionClient, session_id: str) -> None:
    await sessions.stop_session(session_id)
    await sessions.client.get_workflow_handle(session_id).result()
    await export_history(sessions.client, session_id, HERE / f"{session_id}.json")
    print(f"recorded {session_id}")


async def _double_texting(sessions: AgentSessionClient, state: Path) -> None:
    write_script(
        state,
        DOUBLE_TEXTING,
        [[{"gate": "dt-1", "text": "never"}], [{"gate": "dt-2", "text": "two"}], [{"text": "three"}]],
    )
    await sessions.start_session(DOUBLE_TEXTING, "first", double_texting=DoubleTexting.REJECT)
    await FileGate(state, "dt-1").wait_until_reached()
    for _ in range(2):
        try:
            await sessions.send_user_message(DOUBLE_TEXTING, "refused", message_id="m-refused")
        except MessageRejectedError:
            pass
        else:
            raise RuntimeError("the message was not refused")
    if not await sessions.send_user_message(
        DOUBLE_TEXTING, "second", message_id="m-second", double_texting=DoubleTexting.INTERRUPT
    ):
        raise RuntimeError("the interrupting message was refused")
    await FileGate(state, "dt-2").wait_until_reached()
    if not await sessions.send_user_message(DOUBLE_TEXTING, "third", double_texting="enqueue"):
        raise RuntimeError("the queued message was refused")
    FileGate(state, "dt-2").release()
    await _idle_after(sessions, DOUBLE_TEXTING, 3)
    await _stop_and_export(sessions, DOUBLE_TEXTING)


async def _fork(sessions: AgentSessionClient, state: Path) -> None:
    write_script(state, ORIGINAL, [[{"text": "a1"}], [{"text": "a2"}]])
    write_script(state, FORKED, [[{"text": "f1"}]])
    await sessions.start_session(ORIGINAL, "q1", double_texting=DoubleTexting.INTERRUPT)
    await _idle_after(sessions, ORIGINAL, 1)
    await sessions.send_user_message(ORIGINAL, "q2")
    await _idle_after(sessions, ORIGINAL, 2)
    await sessions.fork_session(ORIGINAL, at_turn=1, new_session_id=FORKED)
    await sessions.send_user_message(FORKED, "fq")
    await _idle_after(sessions, FORKED, 1)
    await _stop_and_export(sessions, FORKED)


async def record() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        async with DevServer(DevServerConfig(data_dir=root / "server")) as server:
            client = with_payload_store(await server.connect())
            timings = SessionTimings(
                retry_initial_interval=timedelta(milliseconds=100), heartbeat_interval=timedelta(seconds=1)
            )
            flow = save_scripted_flow(root / "state", "replay-recorder", timings=timings)
            sessions = AgentSessionClient(client, flow)
            stop = asyncio.Event()
            worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
            try:
                await _double_texting(sessions, root / "state")
                await _fork(sessions, root / "state")
            finally:
                stop.set()
                await worker


if __name__ == "__main__":
    asyncio.run(record())
