"""A session that a flow-type client starts replays, even when queries arrive while it starts.

Such a session's first run awaits a local activity (`FlowRunConfig`) before its first state
change. A query that arrives while that local activity runs makes the worker end the
workflow task there, so the code after it runs in the next task; on replay it runs in the
first. Anything that answers by workflow task (`workflow.patched`) must be asked before
the local activity, or a worker that replays the session (a restart, an evicted cache)
fails it with a nondeterminism error. Every follower of a session (`run_turn`, the CLI,
the console) queries it, so this is the common case, not a race.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.worker import Worker

from sessionflow import AgentSessionClient, AgentSessionFlow, TurnStatus
from sessionflow.builtin import ChatCompletionsRunner
from sessionflow.demo import ModelReply, ScriptedModelServer
from sessionflow.temporal import SessionflowPlugin, replay_histories


def _split_after_first_local_step(events: list[HistoryEvent]) -> bool:
    """Whether the first workflow task ended right after recording its local activity."""
    first = next(
        n
        for n, e in enumerate(events)
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and e.marker_recorded_event_attributes.marker_name == "core_local_activity"
    )
    return events[first + 1].event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED


async def test_sessions_queried_while_they_start_replay(temporal_address: str, tmp_path: Path) -> None:
    queue = f"queried-{uuid.uuid4().hex[:8]}"
    with ScriptedModelServer() as server:
        server.respond(queue, lambda _request: ModelReply.say("Done."))
        runner = ChatCompletionsRunner(
            model="gpt-4.1-mini", base_url=server.base_url(queue), api_key="unused"
        )
        flow = AgentSessionFlow(runner, flow_type=queue)
        client = await Client.connect(temporal_address, plugins=[SessionflowPlugin(flows=[flow])])
        ids = [f"{queue}-{n}" for n in range(6)]
        async with Worker(client, task_queue=queue):
            sessions = AgentSessionClient(client, queue)

            async def started_under_queries(session_id: str) -> None:
                await sessions.start_session(session_id, "hello")
                for _ in range(20):  # what a follower does while the first task runs
                    await sessions.list_agent_events(session_id, after=0)
                result = await sessions.run_turn(session_id, "again")
                assert (result.status, result.text) == (TurnStatus.COMPLETED, "Done.")

            await asyncio.gather(*(started_under_queries(s) for s in ids))

        paths: list[Path] = []
        split = 0
        for session_id in ids:
            history = await client.get_workflow_handle(session_id).fetch_history()
            split += _split_after_first_local_step(list(history.events))
            path = tmp_path / f"{session_id}.json"
            path.write_text(history.to_json())
            paths.append(path)
    # The case this test is for happened: a first task ended after its local activity.
    assert split > 0
    assert await replay_histories(paths) == [p.stem for p in paths]
