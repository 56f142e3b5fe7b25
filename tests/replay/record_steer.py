"""Record a session that steers its running turns (issue 46).

    uv run python -m tests.replay.record_steer

On a dev server of its own, with an in-process worker, session `steer`:

- turn 1: while its tool step waits at a gate, a message is sent under double-texting
  `steer` (and resent with the same ID): the `sessionflow-steer` marker; the turn's second
  model step takes it (`user_message_steered`), after the tool's result;
- turn 2: while its only model step waits at a gate, two messages steer it; the step is the
  turn's last, so the first starts turn 3, whose first model step the second one joins.

The history is written to `histories/`, and `test_replay.py` replays it.
"""

from __future__ import annotations

import asyncio
import tempfile
from datetime import timedelta
from pathlib import Path

from sessionflow import AgentSessionClient, DoubleTexting, SessionTimings, serve_agent_flows
from sessionflow.temporal import DevServer, DevServerConfig, with_payload_store
from sessionflow.testing import FileGate, save_scripted_flow, write_script
from tests.replay.record_double_texting import _idle_after, _stop_and_export  # pyright: ignore[reportPrivateUsage]

STEER = "steer"
NO_ARGUMENTS: dict[str, object] = {}


async def _steer(sessions: AgentSessionClient, state: Path) -> None:
    write_script(
        state,
        STEER,
        [
            [{"tool_calls": [{"id": "c1", "name": "lookup", "arguments": NO_ARGUMENTS}]}, {"text": "one"}],
            [{"gate": "st-2", "text": "two"}],
            [{"text": "three"}],
        ],
        {"lookup": {"effect": "read", "output": "found", "gate": "st-1"}},
    )
    await sessions.start_session(STEER, "first")
    await FileGate(state, "st-1").wait_until_reached()
    for _ in range(2):
        await sessions.send_user_message(
            STEER, "steer one", message_id="s1", double_texting=DoubleTexting.STEER
        )
    FileGate(state, "st-1").release()
    await _idle_after(sessions, STEER, 1)
    await sessions.send_user_message(STEER, "second")
    await FileGate(state, "st-2").wait_until_reached()
    await sessions.send_user_message(STEER, "steer two", message_id="s2", double_texting="steer")
    await sessions.send_user_message(STEER, "steer three", message_id="s3", double_texting="steer")
    FileGate(state, "st-2").release()
    await _idle_after(sessions, STEER, 3)
    await _stop_and_export(sessions, STEER)


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
                await _steer(sessions, root / "state")
            finally:
                stop.set()
                await worker


if __name__ == "__main__":
    asyncio.run(record())
