"""Upgrading code under live sessions with Temporal's Worker Versioning (issue 26, section 1).

Real worker processes of two releases (build IDs A and B of one worker deployment) on a dev
server of this test's own, whose version drainage is refreshed every 2 s instead of every
3 minutes. Sessions are pinned: a turn that waits for an approval when B becomes current
finishes on A, and the session continues as new onto B when the turn ends. An idle
session's next message moves it before its turn; the other idle sessions are woken onto B
by `wake_sessions_on_old_versions`. Once nothing is pinned to A, its
worker stops and the sessions go on, on B.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from sessionflow import AgentSessionClient
from sessionflow.temporal import (
    DevServer,
    DevServerConfig,
    DrainageStatus,
    WorkerDeployment,
    drainage_status,
    sessions_on_old_versions,
    set_current_version,
    wake_sessions_on_old_versions,
)
from sessionflow.temporal.worker._deployment import BUILD_ID_ENV, DEPLOYMENT_NAME_ENV
from sessionflow.temporal.workflow._continue_as_new import VERSION_UPGRADE_PATCH
from sessionflow.testing import CRASH_TIMINGS, AgentTestStack, InvocationLog, save_scripted_flow, wait_until
from tests.harness import Harness
from tests.harness_helpers import idle_after, pending_interrupt

WAITING = 20
IDLE = 2

VERSIONING_CONFIG = {
    # The server tells a pinned run that its deployment has a new current version (on by
    # default in Server 1.31+; set so the test does not depend on the default).
    "system.enableSendTargetVersionChanged": True,
    # Drainage is checked every 3 minutes by default; a test cannot wait that long.
    "matching.wv.VersionDrainageStatusRefreshInterval": "2s",
    "matching.wv.VersionDrainageStatusVisibilityGracePeriod": "2s",
}


@pytest.fixture
async def versioning_server(tmp_path: Path) -> AsyncIterator[str]:
    async with DevServer(
        DevServerConfig(data_dir=tmp_path / "server", dynamic_config=VERSIONING_CONFIG)
    ) as handle:
        yield handle.address


def _turns(session_id: str) -> list[list[dict[str, object]]]:
    first: list[dict[str, object]] = (
        [
            {"tool_calls": [{"id": "w", "name": "publish", "arguments": {"session": session_id}}]},
            {"text": "one"},
        ]
        if session_id.startswith("wait-")
        else [{"text": "one"}]
    )
    return [first, [{"text": "two"}], [{"text": "three"}]]


async def _history(client: Client, session_id: str, run_id: str) -> list[HistoryEvent]:
    return list((await client.get_workflow_handle(session_id, run_id=run_id).fetch_history()).events)


def _task_builds(events: list[HistoryEvent]) -> set[str]:
    return {
        e.workflow_task_completed_event_attributes.deployment_version.build_id
        for e in events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    }


def _activity_workers(events: list[HistoryEvent]) -> set[str]:
    return {
        e.activity_task_started_event_attributes.identity.split("@")[0]
        for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
    }


async def test_sessions_move_to_the_new_version_at_turn_boundaries(
    versioning_server: str, tmp_path: Path
) -> None:
    deployment = f"sf-{uuid.uuid4().hex[:8]}"
    release_a, release_b = WorkerDeployment(deployment, "A"), WorkerDeployment(deployment, "B")
    state_dir = tmp_path / "state"
    flow = save_scripted_flow(state_dir, f"versioned-{deployment}", timings=CRASH_TIMINGS)
    stack = AgentTestStack(
        state_dir,
        [flow],
        server_address=versioning_server,
        worker_env={DEPLOYMENT_NAME_ENV: deployment, BUILD_ID_ENV: "A"},
    )
    async with stack:
        client = stack.client
        sessions: AgentSessionClient = stack.sessions()
        harness = Harness(stack, flow, sessions, InvocationLog(state_dir / "invocations.jsonl"), state_dir)
        worker_a = await stack.start_worker()
        await set_current_version(client, release_a)

        waiting = [f"wait-{n}" for n in range(WAITING)]
        idle = [f"idle-{n}" for n in range(IDLE)]
        messaged = "idle-messaged"
        everyone = [*waiting, *idle, messaged]
        for session_id in everyone:
            harness.script(session_id, _turns(session_id), {"publish": {"effect": "non_idempotent_write"}})
        await asyncio.gather(*(sessions.start_session(s, "turn 1") for s in everyone))
        interrupts = await asyncio.gather(*(pending_interrupt(harness, s) for s in waiting))
        await asyncio.gather(*(idle_after(harness, s, 1) for s in [*idle, messaged]))
        first_runs = {
            s: (
                await client.get_workflow_handle(s).describe()
            ).raw_description.workflow_execution_info.first_run_id
            for s in everyone
        }

        # Release B: its workers start, and it becomes current while 20 approvals wait on A.
        stack.worker_env[BUILD_ID_ENV] = "B"
        worker_b = await stack.start_worker()
        await set_current_version(client, release_b)
        answers = await asyncio.gather(
            *(
                sessions.resolve_interrupt(s, i.interrupt_id, approved=True)
                for s, i in zip(waiting, interrupts, strict=True)
            )
        )
        assert all(answers)
        await asyncio.gather(*(idle_after(harness, s, 1, timeout=120) for s in waiting))

        # Every waiting turn finished on A, its write run exactly once, by A's worker.
        pid_a, pid_b = str(worker_a.pid), str(worker_b.pid)
        for session_id in waiting:
            writes = harness.log.entries("tool", "publish", session=session_id)
            assert [str(w["pid"]) for w in writes] == [pid_a], session_id
            events = await _history(client, session_id, first_runs[session_id])
            assert _task_builds(events) == {"A"}, session_id
            assert _activity_workers(events) == {pid_a}, session_id
            assert events[-1].event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
            # Other patches (the search attributes') mark the run too: one marker is the move's.
            markers = [
                e
                for e in events
                if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
                and VERSION_UPGRADE_PATCH.encode() in e.SerializeToString()
            ]
            assert len(markers) == 1, session_id

        # An idle session's next message moves it before its turn starts: the turn runs on B.
        await sessions.send_user_message(messaged, "turn 2")
        await idle_after(harness, messaged, 2, timeout=120)
        events = await _history(client, messaged, first_runs[messaged])
        assert _task_builds(events) == {"A"}
        assert events[-1].event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
        assert {str(e["pid"]) for e in harness.log.entries("model", session=messaged, turn="turn-2")} == {
            pid_b
        }

        # The other idle sessions got no workflow task of their own: a signal moves them.
        woken = await wake_sessions_on_old_versions(client, deployment, flow_type=flow.flow_type)
        assert set(idle) <= set(woken)
        await wait_until(
            "no session pinned to A",
            lambda: _none_left(client, deployment, flow.flow_type),
            timeout=120,
            interval=0.5,
        )
        await wait_until(
            "version A drained",
            lambda: _drained(client, release_a),
            timeout=120,
            interval=0.5,
        )

        # Every next turn runs on B, while A's worker still runs.
        await asyncio.gather(*(sessions.send_user_message(s, "turn 2") for s in waiting + idle))
        await asyncio.gather(*(idle_after(harness, s, 2, timeout=120) for s in waiting + idle))
        for session_id in everyone:
            latest = (await client.get_workflow_handle(session_id).describe()).run_id
            assert latest != first_runs[session_id], session_id
            events = await _history(client, session_id, latest)
            assert _task_builds(events) == {"B"}, session_id
            assert _activity_workers(events) == {pid_b}, session_id
            assert {
                str(e["pid"]) for e in harness.log.entries("model", session=session_id, turn="turn-2")
            } == {pid_b}

        # A is drained: its worker stops gracefully, and the sessions go on, on B.
        worker_a.terminate(timeout=60)
        assert worker_a.process.returncode == 0, worker_a.log()[-2000:]
        await asyncio.gather(*(sessions.send_user_message(s, "turn 3") for s in everyone))
        await asyncio.gather(*(idle_after(harness, s, 3, timeout=120) for s in everyone))
        for session_id in waiting:
            assert harness.log.count("tool", "publish", session=session_id) == 1
        assert {str(e["pid"]) for e in harness.log.entries("model", turn="turn-3")} == {pid_b}


async def _none_left(client: Client, deployment: str, flow_type: str) -> bool:
    return not await sessions_on_old_versions(client, deployment, flow_type=flow_type)


async def _drained(client: Client, deployment: WorkerDeployment) -> bool:
    return await drainage_status(client, deployment) is DrainageStatus.DRAINED
