"""Record a turn that moved between runs (issue 41).

    uv run python -m tests.replay.record_long_turn

On a dev server of its own, with an in-process worker, one turn of 12 model -> tool rounds
under `continue_as_new_after_events=40`: the run continues as new between two of the
turn's steps (the `sessionflow-mid-turn-continue` marker) and the next run resumes the
turn. Written to `histories/`: the first run (`long-turn-moved`, ending in the move), one
in the middle (`long-turn-resumed`, starting from a carried turn and moving again) and
the last (`long-turn-ended`, where the turn ends and a second turn runs).
"""

from __future__ import annotations

import asyncio
import tempfile
from datetime import timedelta
from pathlib import Path

from sessionflow import AgentSessionClient, SessionTimings, TurnStatus, serve_agent_flows
from sessionflow.temporal import DevServer, DevServerConfig, export_history, with_payload_store
from sessionflow.testing import save_scripted_flow, write_script

HERE = Path(__file__).parent / "histories"
SESSION = "long-turn"
ROUNDS = 12


async def record() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        async with DevServer(DevServerConfig(data_dir=root / "server")) as server:
            client = with_payload_store(await server.connect())
            timings = SessionTimings(
                retry_initial_interval=timedelta(milliseconds=100), heartbeat_interval=timedelta(seconds=1)
            )
            flow = save_scripted_flow(
                root / "state", "replay-recorder", timings=timings, continue_as_new_after_events=40
            )
            sessions = AgentSessionClient(client, flow)
            rounds: list[dict[str, object]] = [
                {"tool_calls": [{"id": f"c{n}", "name": "lookup", "arguments": {}}]} for n in range(ROUNDS)
            ]
            write_script(
                root / "state",
                SESSION,
                [[*rounds, {"text": "done"}], [{"text": "again"}]],
                {"lookup": {"effect": "read"}},
            )
            stop = asyncio.Event()
            worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
            try:
                for text in ("work", "more"):
                    result = await sessions.run_turn(SESSION, text, timeout=120)
                    if result.status is not TurnStatus.COMPLETED:
                        raise RuntimeError(f"the turn ended {result.status}: {result.error}")
                await sessions.stop_session(SESSION)
                await client.get_workflow_handle(SESSION).result()
                runs = [e.run_id async for e in client.list_workflows(f"WorkflowId = '{SESSION}'")][::-1]
                if len(runs) < 3:
                    raise RuntimeError(f"the turn should have moved at least twice: {len(runs)} runs")
                for name, run_id in (
                    ("long-turn-moved", runs[0]),
                    ("long-turn-resumed", runs[1]),
                    ("long-turn-ended", runs[-1]),
                ):
                    await export_history(client, SESSION, HERE / f"{name}.json", run_id=run_id)
                    print(f"recorded {name}")
            finally:
                stop.set()
                await worker


if __name__ == "__main__":
    asyncio.run(record())
