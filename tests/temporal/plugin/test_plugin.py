"""`SessionflowPlugin` on a plain Temporal client and worker, against the real dev server.

Two flows name one task queue, and one plain ``Worker`` child process (`plain_worker`)
serves both. A client that has only a flow type (no runner, no framework) starts sessions
of either: the worker builds the user message and says the session's configuration.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import cast

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.worker import Worker

from sessionflow import (
    AgentInterrupt,
    AgentSessionClient,
    AgentSessionFlow,
    ToolEffect,
    ToolPolicy,
    TurnStatus,
)
from sessionflow.temporal import SessionflowPlugin, build_workers, default_build_id
from sessionflow.temporal._payloads import BUILD_USER_MESSAGE, FLOW_RUN_CONFIG
from sessionflow.testing import CRASH_TIMINGS, AgentTestStack, InvocationLog, write_script
from sessionflow.testing._scripted_flow import STATE_DIR_ENV, save_scripted_flow

REPO = Path(__file__).resolve().parents[3]


async def local_steps(client: Client, session_id: str) -> list[str]:
    """The activity types of the session's local activities, in the order their markers were recorded."""
    history = await client.get_workflow_handle(session_id).fetch_history()
    found: list[str] = []
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            details = event.marker_recorded_event_attributes.details
            if "data" in details:
                found.append(json.loads(details["data"].payloads[0].data)["activity_type"])
    return found


@pytest.fixture
async def shared_queue(
    temporal_address: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[AgentTestStack, list[AgentSessionFlow], str]]:
    digest = hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:10]
    queue = f"shared-{digest}"
    flows = [
        save_scripted_flow(
            tmp_path / "support", f"support-{digest}", timings=CRASH_TIMINGS, task_queue=queue
        ),
        save_scripted_flow(
            tmp_path / "billing",
            f"billing-{digest}",
            timings=replace(CRASH_TIMINGS, interrupt_deadline=timedelta(hours=1)),
            tool_policies={
                "refund": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True)
            },
            task_queue=queue,
        ),
    ]
    stack = AgentTestStack(
        tmp_path / "support",
        flows,
        worker_module="tests.temporal.plugin.plain_worker",
        worker_cwd=REPO,
        worker_env={
            STATE_DIR_ENV: os.pathsep.join([str(tmp_path / "support"), str(tmp_path / "billing")]),
            "PLAIN_WORKER_TASK_QUEUE": queue,
        },
        server_address=temporal_address,
    )
    async with stack:
        await stack.start_worker()
        yield stack, flows, queue


async def test_two_flows_share_one_plain_worker_and_a_client_needs_only_the_flow_type(
    shared_queue: tuple[AgentTestStack, list[AgentSessionFlow], str], tmp_path: Path
) -> None:
    stack, (support, billing), queue = shared_queue
    write_script(tmp_path / "support", "plug-support", [[{"text": "support here"}]])
    write_script(
        tmp_path / "billing",
        "plug-billing",
        [[{"tool_calls": [{"id": "r1", "name": "refund", "arguments": {"order": 7}}]}, {"text": "refunded"}]],
        {"refund": {"output": "done"}},
    )
    # A client process as a web backend has it: a plugin without flows, and flow types only.
    client = await Client.connect(stack.server_address or "", plugins=[SessionflowPlugin()])
    by_type = [AgentSessionClient(client, flow.flow_type, task_queue=queue) for flow in (support, billing)]
    assert all(sessions.flow is None for sessions in by_type)

    first = await by_type[0].run_turn("plug-support", "hello", timeout=60)
    asked: list[AgentInterrupt] = []

    def approve(interrupt: AgentInterrupt) -> bool:
        asked.append(interrupt)
        return True

    second = await by_type[1].run_turn("plug-billing", "refund order 7", on_interrupt=approve, timeout=60)

    assert (first.status, first.text) == (TurnStatus.COMPLETED, "support here")
    assert (second.status, second.text) == (TurnStatus.COMPLETED, "refunded")
    assert [(c.tool_name, c.status) for c in second.tool_calls] == [("refund", "succeeded")]
    # Each flow's own runner ran its steps: its own log holds them.
    support_log = InvocationLog(tmp_path / "support" / "invocations.jsonl")
    billing_log = InvocationLog(tmp_path / "billing" / "invocations.jsonl")
    assert len(support_log.entries("model", session="plug-support")) == 1
    assert support_log.entries("model", session="plug-billing") == []
    assert len(billing_log.entries("tool", session="plug-billing")) == 1
    # The worker's billing flow said the configuration: its interrupt deadline is the
    # approval's, though the client never saw the flow.
    (interrupt,) = asked
    assert (interrupt.tool_name, interrupt.deadline is not None) == ("refund", True)
    # The worker built the user message.
    for session_id in ("plug-support", "plug-billing"):
        assert (await local_steps(client, session_id))[:2] == [FLOW_RUN_CONFIG, BUILD_USER_MESSAGE]
    snapshot = await by_type[1].get_agent_snapshot("plug-billing")
    assert snapshot.messages[0].message.text == "refund order 7"


async def test_a_client_with_the_flow_builds_the_message_and_sends_the_configuration(
    shared_queue: tuple[AgentTestStack, list[AgentSessionFlow], str], tmp_path: Path
) -> None:
    stack, (support, _), _ = shared_queue
    write_script(tmp_path / "support", "plug-with-flow", [[{"text": "hi"}]])
    result = await stack.sessions(support).run_turn("plug-with-flow", "hello", timeout=60)
    assert result.text == "hi"
    assert await local_steps(stack.client, "plug-with-flow") == []


async def test_a_worker_on_a_queue_no_flow_names_is_left_alone(
    temporal_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SESSIONFLOW_BUILD_ID", raising=False)
    flow = save_scripted_flow(tmp_path, "plug-alone", task_queue="plug-alone-queue")
    plugin = SessionflowPlugin([flow])
    client = await Client.connect(temporal_address, plugins=[plugin])
    with pytest.raises(ValueError, match="At least one activity"):
        # Nothing of sessionflow's is added to another application's worker.
        Worker(client, task_queue="someone-elses-queue")
    worker = Worker(client, task_queue="plug-alone-queue")
    # Named, so the worker does not hash every loaded module for a build ID.
    assert cast(dict[str, object], worker.config(active_config=True)).get("build_id") == default_build_id()
    # build_workers refuses a client that already carries the plugin, instead of serving twice.
    with pytest.raises(ValueError, match="already carries a SessionflowPlugin"):
        build_workers(client, [flow])


def test_a_flow_type_given_twice_is_refused(tmp_path: Path) -> None:
    flow = save_scripted_flow(tmp_path, "plug-twice")
    with pytest.raises(ValueError, match="'plug-twice' is given twice"):
        SessionflowPlugin([flow, flow])


def test_a_bad_task_queue_is_refused(tmp_path: Path) -> None:
    flow = save_scripted_flow(tmp_path, "plug-queue")
    with pytest.raises(ValueError, match="task_queue 'no spaces' must be"):
        AgentSessionFlow(flow.runner, flow_type="plug-queue", task_queue="no spaces")
    with pytest.raises(ValueError, match="flow_type 'bad type' must be"):
        AgentSessionClient(cast(Client, None), "bad type")
