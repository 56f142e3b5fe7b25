"""Finding sessions on the server: list a flow type's sessions, describe one, prepare a resume.

These read Temporal's visibility and histories, so they work without a worker. Only
`list_sessions` given an `AgentSessionClient` asks the sessions themselves (a Query, which
a worker of the flow answers) for their turns and state.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, cast

from temporalio.api.common.v1 import WorkflowExecution as WorkflowExecutionRef
from temporalio.api.enums.v1 import HistoryEventFilterType
from temporalio.api.workflowservice.v1 import (
    GetWorkflowExecutionHistoryRequest,
    GetWorkflowExecutionHistoryReverseRequest,
    ResetStickyTaskQueueRequest,
)
from temporalio.client import Client, WorkflowExecution, WorkflowExecutionDescription, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from sessionflow.session.state import AgentSnapshot, AgentStatus
from sessionflow.temporal._search_attributes import (
    LAST_ACTIVITY_KEY,
    STATE_KEY,
    USER_KEY,
    SearchAttributesMissingError,
    SessionState,
    missing_search_attributes,
    visibility_query,
)
from sessionflow.temporal.client._client import AgentSessionClient

__all__ = [
    "DEFAULT_LIST_LIMIT",
    "SessionStatus",
    "SessionSummary",
    "describe_session",
    "list_sessions",
    "read_start_environment",
    "reset_sticky_task_queue",
]

DEFAULT_LIST_LIMIT = 1000
"""How many executions `list_sessions` reads from visibility unless told otherwise."""

_QUERY_TIMEOUT = 10.0


class SessionStatus(StrEnum):
    """The status of a session's workflow run, as the server records it."""

    RUNNING = "running"
    COMPLETED = "completed"
    """Ended by `stop_session`; its snapshot stays readable."""
    FAILED = "failed"
    CANCELED = "canceled"
    TERMINATED = "terminated"
    CONTINUED_AS_NEW = "continued_as_new"
    """A run that handed over to a newer run of the same session (never the latest run)."""
    TIMED_OUT = "timed_out"
    UNKNOWN = "unknown"

    @property
    def is_open(self) -> bool:
        """The session can take messages."""
        return self is SessionStatus.RUNNING


def _status_of(status: WorkflowExecutionStatus | None) -> SessionStatus:
    if status is None:
        return SessionStatus.UNKNOWN
    try:
        return SessionStatus(status.name.lower())
    except ValueError:
        return SessionStatus.UNKNOWN


@dataclass(frozen=True, kw_only=True)
class SessionSummary:
    """One session as the server knows it.

    Attributes:
        session_id: The session ID (workflow ID).
        run_id: The latest run.
        flow_type: The flow type it runs under.
        status: The latest run's status.
        start_time: When the latest run started (a continue-as-new starts a new run).
        close_time: When the latest run closed; None while it runs.
        last_activity: When the latest run's last history event happened; None when not read.
        turns: Completed and running turns, from the session's snapshot; None when not asked
            or no worker answered.
        agent_status: Where the session stands, from its snapshot; None like `turns`.
        pending_approvals: Calls waiting for a decision, from its snapshot; None like `turns`.
        stopped: The session was stopped (its run completed, or its snapshot says so).
        user: Its ``SessionflowUser`` search attribute (the ``user`` of its start environment);
            None for a session started without search attributes.
        state: Its ``SessionflowStatus`` search attribute (`SessionState`); None like `user`.
        created_at: When the session's first run started, among the runs `list_sessions`
            read (a continue-as-new starts a new run, so `start_time` is not the session's
            birth); None from `describe_session`.
    """

    session_id: str
    run_id: str | None
    flow_type: str
    status: SessionStatus
    start_time: datetime | None
    close_time: datetime | None
    last_activity: datetime | None = None
    turns: int | None = None
    agent_status: AgentStatus | None = None
    pending_approvals: int | None = None
    stopped: bool = False
    user: str | None = None
    state: SessionState | None = None
    created_at: datetime | None = None


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


async def list_sessions(
    client_or_sessions: Client | AgentSessionClient,
    flow_type: str | None = None,
    *,
    limit: int | None = DEFAULT_LIST_LIMIT,
    query_timeout: float = _QUERY_TIMEOUT,
    state: SessionState | str | None = None,
    user: str | None = None,
    since: datetime | None = None,
) -> list[SessionSummary]:
    """The sessions of `flow_type`, most recent activity first.

    `state`, `user` and `since` (last activity at or after) filter on the server, through
    sessionflow's search attributes (`sessionflow.temporal._search_attributes`): only
    sessions started while those were registered carry them. Without filters, every
    session of the flow type is listed.

    Reads visibility (at most `limit` executions, None for all), keeps the latest run of
    each session, and reads each one's last history event for `last_activity`. Given an
    `AgentSessionClient`, it also asks each running session for its snapshot (turns, state,
    pending approvals), waiting at most `query_timeout` seconds: a worker of the flow must
    answer, such as one in this process.

    Args:
        client_or_sessions: A Temporal client, or the `AgentSessionClient` of the flow.
        flow_type: The flow type; defaults to the `AgentSessionClient`'s flow type.
        limit: The most visibility entries to read (newest first, as the server orders them).
        query_timeout: Seconds to wait for one session's snapshot.

    Raises:
        ValueError: No flow type (a bare client without `flow_type`), a bad `limit`, or an
            unknown `state`.
        SearchAttributesMissingError: A filter was given, and the namespace lacks the
            search attributes (its message names the command that registers them).
    """
    sessions = client_or_sessions if isinstance(client_or_sessions, AgentSessionClient) else None
    client = sessions.client if sessions is not None else cast(Client, client_or_sessions)
    if flow_type is None:
        if sessions is None:
            raise ValueError("list_sessions needs a flow_type when given a Temporal client")
        flow_type = sessions.flow_type
    if limit is not None and limit < 1:
        raise ValueError("limit must be at least 1")
    if state is None and user is None and since is None:
        query = f"WorkflowType={_quoted(flow_type)}"
    else:
        query = visibility_query(flow_type, state=state, user=user, since=since)
        try:
            missing = await missing_search_attributes(client)
        except RPCError:
            missing = []  # not allowed to ask (Temporal Cloud): the query itself says
        if missing:
            raise SearchAttributesMissingError(client.namespace, missing)
    latest: dict[str, WorkflowExecution] = {}
    first_start: dict[str, datetime] = {}
    async for execution in client.list_workflows(query, limit=limit):
        known_start = first_start.get(execution.id)
        if known_start is None or execution.start_time < known_start:
            first_start[execution.id] = execution.start_time
        if execution.status is WorkflowExecutionStatus.CONTINUED_AS_NEW:
            continue
        known = latest.get(execution.id)
        if known is None or execution.start_time > known.start_time:
            latest[execution.id] = execution
    summaries = await asyncio.gather(
        *(
            _summary(client, sessions, execution, query_timeout, first_start[execution.id])
            for execution in latest.values()
        )
    )
    epoch = datetime.min.replace(tzinfo=UTC)
    return sorted(summaries, key=lambda s: s.last_activity or s.start_time or epoch, reverse=True)


async def _summary(
    client: Client,
    sessions: AgentSessionClient | None,
    execution: WorkflowExecution,
    query_timeout: float,
    created_at: datetime,
) -> SessionSummary:
    status = _status_of(execution.status)
    attributes = execution.typed_search_attributes
    # The session keeps its last activity as a search attribute: no history read for it.
    last = attributes.get(LAST_ACTIVITY_KEY) or await _last_activity(client, execution)
    state_value = attributes.get(STATE_KEY)
    snapshot: AgentSnapshot | None = None
    if sessions is not None and status is not SessionStatus.UNKNOWN:
        try:
            snapshot = await asyncio.wait_for(sessions.get_agent_snapshot(execution.id), query_timeout)
        except Exception:
            snapshot = None
    state = snapshot.state if snapshot is not None else None
    return SessionSummary(
        session_id=execution.id,
        run_id=execution.run_id,
        flow_type=execution.workflow_type,
        status=status,
        start_time=execution.start_time,
        close_time=execution.close_time,
        last_activity=last,
        turns=state.turn_count if state is not None else None,
        agent_status=state.status if state is not None else None,
        pending_approvals=len(snapshot.pending_interrupts) if snapshot is not None else None,
        stopped=status is SessionStatus.COMPLETED or (snapshot is not None and snapshot.stopped),
        user=attributes.get(USER_KEY),
        state=_session_state(state_value),
        created_at=created_at,
    )


def _session_state(value: str | None) -> SessionState | None:
    try:
        return SessionState(value) if value is not None else None
    except ValueError:
        return None


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


async def describe_session(client: Client, session_id: str) -> SessionSummary | None:
    """The latest run of `session_id`, whatever its flow type; None when there is no such session.

    Reads the server only (no Query): `turns`, `agent_status` and `pending_approvals` are None.
    """
    try:
        description: WorkflowExecutionDescription = await client.get_workflow_handle(session_id).describe()
    except RPCError as error:
        if error.status is RPCStatusCode.NOT_FOUND:
            return None
        raise
    status = _status_of(description.status)
    return SessionSummary(
        session_id=description.id,
        run_id=description.run_id,
        flow_type=description.workflow_type,
        status=status,
        start_time=description.start_time,
        close_time=description.close_time,
        stopped=status is SessionStatus.COMPLETED,
    )


async def reset_sticky_task_queue(client: Client, session_id: str) -> bool:
    """Send the session's next workflow tasks to its flow's task queue, not to one worker's own.

    A worker that died without shutting down leaves its sessions pinned to its private
    queue until a timeout; a new worker resuming one of them would wait for that. Returns
    False when the server refused (no such session, or it is closed).
    """
    try:
        await client.workflow_service.reset_sticky_task_queue(
            ResetStickyTaskQueueRequest(
                namespace=client.namespace, execution=WorkflowExecutionRef(workflow_id=session_id)
            )
        )
    except RPCError:
        return False
    return True


async def read_start_environment(client: Client, session_id: str) -> Mapping[str, str] | None:
    """The ``environment`` the latest run of `session_id` was started with, or None.

    That is the mapping given to `AgentSessionClient.start_session` (carried over by
    continue-as-new). None when the session does not exist, has no environment, or its
    start input cannot be read.
    """
    try:
        response = await client.workflow_service.get_workflow_execution_history(
            GetWorkflowExecutionHistoryRequest(
                namespace=client.namespace,
                execution=WorkflowExecutionRef(workflow_id=session_id),
                maximum_page_size=1,
                history_event_filter_type=HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT,
            )
        )
    except RPCError:
        return None
    events = response.history.events
    if not events or not events[0].HasField("workflow_execution_started_event_attributes"):
        return None
    payloads = events[0].workflow_execution_started_event_attributes.input.payloads
    if not payloads:
        return None
    codec = client.data_converter.payload_codec
    try:
        # An encrypted start input is decrypted first; a key the ring lacks reads as no environment.
        start = (await codec.decode([payloads[0]]))[0] if codec is not None else payloads[0]
        data: Any = json.loads(start.data)
    except (ValueError, RuntimeError):
        return None
    environment = cast(dict[str, Any], data).get("environment") if isinstance(data, dict) else None
    if not isinstance(environment, dict) or not environment:
        return None
    return {str(key): str(value) for key, value in cast(dict[Any, Any], environment).items()}
