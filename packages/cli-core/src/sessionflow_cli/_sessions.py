"""Sessions of this command's flow type: names, listing (Temporal visibility), and resuming."""

from __future__ import annotations

import asyncio
import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from temporalio.api.common.v1 import WorkflowExecution as WorkflowExecutionRef
from temporalio.api.workflowservice.v1 import (
    GetWorkflowExecutionHistoryReverseRequest,
    ResetStickyTaskQueueRequest,
)
from temporalio.client import Client, WorkflowExecution, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from sessionflow import AgentSessionClient, AgentSnapshot, AgentStatus
from sessionflow_cli._errors import UsageError

__all__ = ["SessionRow", "check_resumable", "list_sessions", "new_session_id"]

_QUERY_TIMEOUT = 10.0


def new_session_id(framework: str, now: datetime | None = None) -> str:
    """``<framework>-YYYYMMDD-HHMMSS-<6 hex digits>`` in local time."""
    moment = now or datetime.now()
    return f"{framework}-{moment:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


@dataclass(frozen=True, kw_only=True)
class SessionRow:
    """One line of `sessionflow sessions`."""

    session_id: str
    status: str
    last_activity: datetime | None
    turns: int | None


async def list_sessions(sessions: AgentSessionClient) -> list[SessionRow]:
    """This flow type's sessions, most recent activity first.

    Reads Temporal visibility, then each session's last history event (last activity) and
    its snapshot (status and turns; the worker of this process answers the query).
    """
    client = sessions.client
    latest: dict[str, WorkflowExecution] = {}
    async for execution in client.list_workflows(f'WorkflowType="{sessions.flow.flow_type}"'):
        if execution.status is WorkflowExecutionStatus.CONTINUED_AS_NEW:
            continue
        known = latest.get(execution.id)
        if known is None or execution.start_time > known.start_time:
            latest[execution.id] = execution
    rows = await asyncio.gather(*(_row(sessions, execution) for execution in latest.values()))
    epoch = datetime.min.replace(tzinfo=UTC)
    return sorted(rows, key=lambda row: row.last_activity or epoch, reverse=True)


async def _row(sessions: AgentSessionClient, execution: WorkflowExecution) -> SessionRow:
    last = await _last_activity(sessions.client, execution)
    snapshot: AgentSnapshot | None = None
    try:
        snapshot = await asyncio.wait_for(sessions.get_agent_snapshot(execution.id), _QUERY_TIMEOUT)
    except Exception:
        snapshot = None
    return SessionRow(
        session_id=execution.id,
        status=_status(execution, snapshot),
        last_activity=last,
        turns=snapshot.state.turn_count if snapshot is not None and snapshot.state is not None else None,
    )


def _status(execution: WorkflowExecution, snapshot: AgentSnapshot | None) -> str:
    if execution.status is WorkflowExecutionStatus.COMPLETED or (snapshot is not None and snapshot.stopped):
        return "stopped"
    if execution.status is not WorkflowExecutionStatus.RUNNING:
        return execution.status.name.lower() if execution.status is not None else "unknown"
    if snapshot is None or snapshot.state is None:
        return "open"
    if snapshot.pending_interrupts:
        return "waiting for approval"
    if snapshot.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE:
        return "idle"
    return snapshot.state.status.value.replace("_", " ")


async def _last_activity(client: Client, execution: WorkflowExecution) -> datetime | None:
    try:
        response = await client.workflow_service.get_workflow_execution_history_reverse(
            GetWorkflowExecutionHistoryReverseRequest(
                namespace=client.namespace,
                execution=WorkflowExecutionRef(workflow_id=execution.id, run_id=execution.run_id),
                maximum_page_size=1,
            )
        )
    except RPCError:
        return execution.close_time or execution.start_time
    events = response.history.events
    if not events:
        return execution.start_time
    return events[0].event_time.ToDatetime(tzinfo=UTC)


async def check_resumable(sessions: AgentSessionClient, session_id: str) -> None:
    """Refuse (exit 2) a session that does not exist, is stopped, or has another flow type."""
    handle = sessions.client.get_workflow_handle(session_id)
    try:
        description = await handle.describe()
    except RPCError as error:
        if error.status is RPCStatusCode.NOT_FOUND:
            raise UsageError(f"there is no session {session_id!r} on this server") from None
        raise
    flow_type = sessions.flow.flow_type
    if description.workflow_type != flow_type:
        started = await _start_environment(sessions.client, session_id)
        where = f" It was started {started}." if started else ""
        raise UsageError(
            f"session {session_id!r} belongs to flow type {description.workflow_type!r}, not {flow_type!r}: "
            "it was started with another framework, user, configuration file or workspace, and only a "
            f"command with the same ones may continue it.{where}"
        )
    if description.status is WorkflowExecutionStatus.COMPLETED:
        raise UsageError(f"session {session_id!r} is stopped and cannot continue")
    if description.status is not WorkflowExecutionStatus.RUNNING:
        status = description.status.name.lower() if description.status is not None else "unknown"
        raise UsageError(f"session {session_id!r} has ended ({status}) and cannot continue")
    await _reset_sticky(sessions.client, session_id)


async def _reset_sticky(client: Client, session_id: str) -> None:
    """Send the session's next tasks to the flow's task queue, not to a worker that may be gone.

    A command killed without a chance to clean up leaves the session pinned to its worker's
    own queue until a timeout; the resuming command would wait for it.
    """
    try:
        await client.workflow_service.reset_sticky_task_queue(
            ResetStickyTaskQueueRequest(
                namespace=client.namespace, execution=WorkflowExecutionRef(workflow_id=session_id)
            )
        )
    except RPCError:
        return


async def _start_environment(client: Client, session_id: str) -> str | None:
    """Where a session was started, from the environment in its first start input."""
    try:
        handle = client.get_workflow_handle(session_id)
        async for event in handle.fetch_history_events():
            payloads = event.workflow_execution_started_event_attributes.input.payloads
            if not payloads:
                return None
            data: Any = json.loads(payloads[0].data)
            environment = cast(dict[str, Any], data).get("environment") if isinstance(data, dict) else None
            if not isinstance(environment, dict) or not environment:
                return None
            env = cast(dict[str, Any], environment)
            return (
                f"on host {env.get('host_name')!s} by user {env.get('user_name') or env.get('user_id')!s} "
                f"with configuration {env.get('config_identity')!s} in workspace {env.get('workspace')!s}"
            )
    except Exception:
        return None
    return None
