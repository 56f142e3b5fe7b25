"""Sessions of this command's flow type: names, listing, and resuming (through `sessionflow.temporal`)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

from sessionflow import AgentSessionClient, AgentStatus
from sessionflow.temporal import (
    SearchAttributesMissingError,
    SessionState,
    SessionStatus,
    SessionSummary,
    describe_session,
    parse_age,
    read_start_environment,
    reset_sticky_task_queue,
)
from sessionflow.temporal import list_sessions as list_flow_sessions
from sessionflow_cli._errors import UsageError

__all__ = [
    "SessionFilters",
    "SessionRow",
    "check_resumable",
    "latest_open_session",
    "list_sessions",
    "new_session_id",
]


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
    open: bool = True
    """The session takes messages: its run is running and it was not stopped."""


@dataclass(frozen=True, kw_only=True)
class SessionFilters:
    """`sessionflow sessions --state/--user/--since`: answered by the server's visibility."""

    state: SessionState | None = None
    user: str | None = None
    since: datetime | None = None

    @staticmethod
    def from_arguments(state: str | None, user: str | None, since: str | None) -> SessionFilters:
        try:
            cutoff = datetime.now(UTC) - parse_age(since) if since else None
        except ValueError as error:
            raise UsageError(f"--since: {error}") from None
        return SessionFilters(state=SessionState(state) if state else None, user=user, since=cutoff)


async def list_sessions(
    sessions: AgentSessionClient, filters: SessionFilters | None = None
) -> list[SessionRow]:
    """This flow type's sessions, most recent activity first.

    The status and turns come from each session's snapshot; the worker of this process
    answers the query. `filters` narrow the listing on the server (search attributes).
    """
    filters = filters or SessionFilters()
    try:
        summaries = await list_flow_sessions(
            sessions, limit=None, state=filters.state, user=filters.user, since=filters.since
        )
    except SearchAttributesMissingError as error:
        raise UsageError(error.message) from None
    return [
        SessionRow(
            session_id=summary.session_id,
            status=_status(summary),
            last_activity=summary.last_activity,
            turns=summary.turns,
            open=summary.status.is_open and not summary.stopped,
        )
        for summary in summaries
    ]


async def latest_open_session(sessions: AgentSessionClient) -> str | None:
    """`--continue`: the open session of this flow type with the latest activity, if any.

    The flow type is namespaced by framework, configuration file, user and workspace (the
    folder), so this is the latest session this command ran here. It reads the server's
    visibility only: no session is queried for its snapshot (a query of an ended session
    replays its history), so an open session is one whose run is running.
    """
    summaries = await list_flow_sessions(sessions.client, sessions.flow_type, limit=None)
    return next((s.session_id for s in summaries if s.status.is_open and not s.stopped), None)


def _status(summary: SessionSummary) -> str:
    if summary.stopped:
        return "stopped"
    if summary.status is not SessionStatus.RUNNING:
        return summary.status.value.replace("_", " ")
    if summary.agent_status is None:
        return "open"
    if summary.pending_approvals:
        return "waiting for approval"
    if summary.agent_status is AgentStatus.WAITING_FOR_USER_MESSAGE:
        return "idle"
    return summary.agent_status.value.replace("_", " ")


async def check_resumable(sessions: AgentSessionClient, session_id: str) -> None:
    """Refuse (exit 2) a session that does not exist, is stopped, or has another flow type."""
    summary = await describe_session(sessions.client, session_id)
    if summary is None:
        raise UsageError(f"there is no session {session_id!r} on this server")
    flow_type = sessions.flow_type
    if summary.flow_type != flow_type:
        started = await _start_environment(sessions, session_id)
        where = f" It was started {started}." if started else ""
        raise UsageError(
            f"session {session_id!r} belongs to flow type {summary.flow_type!r}, not {flow_type!r}: "
            "it was started with another framework, user, configuration file or workspace, and only a "
            f"command with the same ones may continue it.{where}"
        )
    if summary.status is SessionStatus.COMPLETED:
        raise UsageError(f"session {session_id!r} is stopped and cannot continue")
    if not summary.status.is_open:
        status = summary.status.value.replace("_", " ")
        raise UsageError(f"session {session_id!r} has ended ({status}) and cannot continue")
    # A command killed without a chance to clean up leaves the session pinned to its
    # worker's own queue until a timeout; the resuming command would wait for it.
    await reset_sticky_task_queue(sessions.client, session_id)


async def _start_environment(sessions: AgentSessionClient, session_id: str) -> str | None:
    """Where a session was started, from the environment of its start input."""
    try:
        env = await read_start_environment(sessions.client, session_id)
    except Exception:
        return None
    if not env:
        return None
    return (
        f"on host {env.get('host_name')!s} by user {env.get('user_name') or env.get('user_id')!s} "
        f"with configuration {env.get('config_identity')!s} in workspace {env.get('workspace')!s}"
    )
