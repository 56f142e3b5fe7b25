"""Search attributes (issue 26, section 3): sessions carry flow type, state, user and last
activity, and `list_sessions` filters on the server with them."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from google.protobuf.duration_pb2 import Duration
from temporalio.api.enums.v1 import EventType
from temporalio.api.workflowservice.v1 import RegisterNamespaceRequest

from sessionflow import AgentSessionClient, AgentStatus, connect, serve_agent_flows
from sessionflow.temporal import SearchAttributesMissingError, SessionState, SessionSummary, list_sessions
from sessionflow.temporal._search_attributes import registration_command
from sessionflow.testing import wait_for_agent_snapshot, wait_until
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after, pending_interrupt

APPROVAL_TURN: list[list[dict[str, Any]]] = [
    [{"tool_calls": [{"id": "w", "name": "publish", "arguments": {}}]}, {"text": "done"}]
]
TOOLS = {"publish": {"effect": "non_idempotent_write"}}


async def _until(
    harness: Harness, expected: set[str], timeout: float = 60.0, **filters: Any
) -> list[SessionSummary]:
    """List until exactly `expected` comes back: visibility is eventually consistent."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = await list_sessions(harness.sessions.client, harness.flow.flow_type, **filters)
        if {s.session_id for s in found} == expected:
            return found
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(
                f"{filters}: got {sorted(s.session_id for s in found)}, expected {sorted(expected)}"
            )
        await asyncio.sleep(0.2)


async def test_filters_by_flow_type_user_state_and_last_activity(harness_factory: HarnessFactory) -> None:
    first: Harness = await harness_factory()
    second: Harness = await harness_factory()
    tag = uuid.uuid4().hex[:8]
    a1, a2, b1 = f"a1-{tag}", f"a2-{tag}", f"b1-{tag}"
    before = datetime.now(UTC) - timedelta(minutes=5)
    first.script(a1, [[{"text": "hi"}]])
    first.script(a2, APPROVAL_TURN, TOOLS)
    second.script(b1, [[{"text": "hi"}]])
    assert await first.sessions.uses_search_attributes()
    await first.sessions.start_session(a1, "hello", environment={"user": "alice"})
    await first.sessions.start_session(a2, "hello", environment={"user": "bob"})
    await second.sessions.start_session(b1, "hello", environment={"user": "alice"})
    await idle_after(first, a1, 1)
    await idle_after(second, b1, 1)
    interrupt = await pending_interrupt(first, a2)

    await _until(first, {a1, a2})
    (alice,) = await _until(first, {a1}, user="alice")
    assert (alice.user, alice.state, alice.flow_type) == ("alice", SessionState.IDLE, first.flow.flow_type)
    assert alice.last_activity is not None and alice.last_activity >= before
    await _until(first, {a2}, user="bob")
    (waiting,) = await _until(first, {a2}, state=SessionState.WAITING_FOR_APPROVAL)
    assert waiting.state is SessionState.WAITING_FOR_APPROVAL
    await _until(first, {a1}, state="idle")
    await _until(second, {b1}, user="alice")
    await _until(second, set(), user="bob")
    await _until(first, {a1, a2}, since=before)
    assert (
        await list_sessions(
            first.sessions.client, first.flow.flow_type, since=datetime.now(UTC) + timedelta(hours=1)
        )
        == []
    )

    # The state follows the session: the approval answered, then a1 stopped.
    assert await first.sessions.resolve_interrupt(a2, interrupt.interrupt_id, approved=True)
    await idle_after(first, a2, 1)
    await _until(first, {a1, a2}, state=SessionState.IDLE)
    await first.sessions.stop_session(a1)
    await _until(first, {a1}, state=SessionState.STOPPED)
    await _until(first, {a2}, state=SessionState.IDLE, user="bob")

    with pytest.raises(ValueError, match="asleep"):
        await list_sessions(first.sessions.client, first.flow.flow_type, state="asleep")


async def test_a_namespace_without_them_lists_unfiltered_and_names_the_command(
    temporal_address: str, harness: Harness
) -> None:
    namespace = f"bare-{uuid.uuid4().hex[:8]}"
    client = harness.sessions.client
    await client.workflow_service.register_namespace(
        RegisterNamespaceRequest(
            namespace=namespace, workflow_execution_retention_period=Duration(seconds=86400)
        )
    )
    bare = await _connect_when_ready(temporal_address, namespace)
    sessions = AgentSessionClient(bare, harness.flow)
    assert not await sessions.uses_search_attributes()
    # A session there runs, and never upserts (an unregistered upsert would fail its task).
    session_id = f"bare-session-{uuid.uuid4().hex[:8]}"
    harness.script(session_id, [[{"text": "hi"}]])
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(bare, [harness.flow], stop=stop))
    try:
        await sessions.start_session(session_id, "hello", environment={"user": "alice"})
        await wait_for_agent_snapshot(
            sessions,
            session_id,
            lambda s: (
                s.state is not None
                and s.state.turn_count == 1
                and s.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
            ),
            description="the turn to end",
        )
    finally:
        stop.set()
        await worker
    history = await bare.get_workflow_handle(session_id).fetch_history()
    upserted = {
        name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES
        for name in e.upsert_workflow_search_attributes_event_attributes.search_attributes.indexed_fields
    }
    # Only Temporal's own TemporalChangeVersion, which the SDK upserts with a patch marker
    # and every namespace has: none of sessionflow's.
    assert upserted <= {"TemporalChangeVersion"}
    (listed,) = await _listed_when_visible(bare, harness.flow.flow_type)  # unfiltered: works
    assert (listed.session_id, listed.user, listed.state) == (session_id, None, None)
    with pytest.raises(SearchAttributesMissingError) as raised:
        await list_sessions(bare, harness.flow.flow_type, user="alice")
    assert registration_command(namespace) in str(raised.value)
    assert "temporal operator search-attribute create" in str(raised.value)
    assert "--name SessionflowStatus --type Keyword" in str(raised.value)


async def _listed_when_visible(client: Any, flow_type: str) -> list[SessionSummary]:
    return await wait_until(
        "the session to become visible", lambda: list_sessions(client, flow_type), timeout=60, interval=0.2
    )


async def _connect_when_ready(address: str, namespace: str) -> Any:
    """A new namespace takes a moment to be served (its calls fail meanwhile): poll it."""

    async def served() -> Any:
        client = await connect(address, namespace)
        await list_sessions(client, "probe")
        return client

    return await wait_until(f"namespace {namespace} to be served", served, timeout=60, interval=0.5)
