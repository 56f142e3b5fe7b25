"""The API's routes as data: the app registers them and the OpenAPI document describes them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessionflow import AgentEvent, AgentMessage, AgentMessagesPage, AgentSnapshot
from sessionflow_server._types import (
    AcceptedResponse,
    CancelResponse,
    CreatedResponse,
    CreateSessionRequest,
    ForkRequest,
    ForkResponse,
    InterruptsResponse,
    LoginRequest,
    MeResponse,
    ResolvedResponse,
    ResolveInterruptRequest,
    SendMessageRequest,
    SessionsResponse,
    StopResponse,
    TokenResponse,
    TurnsResponse,
)

__all__ = ["API_PREFIX", "ROUTES", "ApiRoute", "QueryParameter"]

API_PREFIX = "/api/v1"


@dataclass(frozen=True, kw_only=True)
class QueryParameter:
    name: str
    description: str
    schema_type: str = "string"


@dataclass(frozen=True, kw_only=True)
class ApiRoute:
    name: str
    method: str
    path: str
    summary: str
    response: Any
    status: int = 200
    body: Any = None
    query: tuple[QueryParameter, ...] = ()
    authenticated: bool = True
    event_stream: bool = False
    media_type: str = "application/json"
    """What a 2xx answer is: JSON of `response`, or plain text (`response` is then `str`)."""
    errors: tuple[int, ...] = ()


_ID = f"{API_PREFIX}/sessions/{{session_id}}"

ROUTES: tuple[ApiRoute, ...] = (
    ApiRoute(
        name="login",
        method="POST",
        path=f"{API_PREFIX}/login",
        summary="Exchange a one-time login code for a bearer token",
        body=LoginRequest,
        response=TokenResponse,
        authenticated=False,
        errors=(400, 401, 413, 422, 429),
    ),
    ApiRoute(
        name="me", method="GET", path=f"{API_PREFIX}/me", summary="The token's user", response=MeResponse
    ),
    ApiRoute(
        name="list_sessions",
        method="GET",
        path=f"{API_PREFIX}/sessions",
        summary="The caller's sessions, most recent activity first, each with its title, state, usage and cost",
        response=SessionsResponse,
        query=(
            QueryParameter(name="flow_type", description="only this flow type"),
            QueryParameter(
                name="state",
                description="only sessions in this state: idle, working, waiting_for_you, failed or stopped",
            ),
            QueryParameter(name="q", description="the ID or the title holds this text (case-insensitive)"),
            QueryParameter(
                name="limit",
                description="the most rows to return, 1 to 500 (default 100)",
                schema_type="integer",
            ),
            QueryParameter(
                name="status",
                description="the SessionflowStatus search attribute: idle, running, waiting_for_approval or stopped",
            ),
            QueryParameter(
                name="user", description="only this user's sessions: a token sees only its own user's"
            ),
            QueryParameter(
                name="since", description="active since: an ISO 8601 time or an age (30m, 12h, 7d)"
            ),
        ),
        errors=(422, 503),
    ),
    ApiRoute(
        name="create_session",
        method="POST",
        path=f"{API_PREFIX}/sessions",
        summary="Start a session, with an optional first message and settings",
        body=CreateSessionRequest,
        response=CreatedResponse,
        status=201,
        errors=(400, 409, 413, 422),
    ),
    ApiRoute(
        name="get_session",
        method="GET",
        path=_ID,
        summary="The session's snapshot (bounded)",
        response=AgentSnapshot,
        errors=(404,),
    ),
    ApiRoute(
        name="list_messages",
        method="GET",
        path=f"{_ID}/messages",
        summary="A page of stored messages with a sequence above `after`",
        response=AgentMessagesPage,
        query=(
            QueryParameter(
                name="after", description="the last sequence seen (default 0)", schema_type="integer"
            ),
            QueryParameter(name="limit", description="1 to 200 (default 50)", schema_type="integer"),
            QueryParameter(
                name="include_superseded",
                description="`true` adds the messages the framework's history no longer holds (default `false`)",
                schema_type="boolean",
            ),
        ),
        errors=(404, 422),
    ),
    ApiRoute(
        name="get_message",
        method="GET",
        path=f"{_ID}/messages/{{sequence}}",
        summary="One stored message whole: a body kept by reference is read from the payload store, and the answer is streamed",
        response=AgentMessage,
        errors=(404, 422, 503),
    ),
    ApiRoute(
        name="send_message",
        method="POST",
        path=f"{_ID}/messages",
        summary="Send a message (double_texting: enqueue, interrupt, reject or steer while a turn runs); idempotent by message_id",
        body=SendMessageRequest,
        response=AcceptedResponse,
        status=202,
        errors=(400, 404, 409, 413, 422),
    ),
    ApiRoute(
        name="fork_session",
        method="POST",
        path=f"{_ID}/fork",
        summary="Start a new session with the messages of the first `turn` ended turns",
        body=ForkRequest,
        response=ForkResponse,
        status=201,
        errors=(400, 404, 409, 413, 422),
    ),
    ApiRoute(
        name="list_turns",
        method="GET",
        path=f"{_ID}/turns",
        summary="What each kept turn did (steps' text, tool calls, approvals, outcome), oldest first, the running turn last",
        response=TurnsResponse,
        errors=(404,),
    ),
    ApiRoute(
        name="tool_output",
        method="GET",
        path=f"{_ID}/turns/{{turn_id}}/tool-calls/{{tool_call_id}}/output",
        summary="One recorded tool call's whole output, as plain text, streamed",
        response=str,
        media_type="text/plain; charset=utf-8",
        errors=(404, 503),
    ),
    ApiRoute(
        name="cancel_turn",
        method="POST",
        path=f"{_ID}/cancel",
        summary="Cancel the running turn",
        response=CancelResponse,
        status=202,
        errors=(404,),
    ),
    ApiRoute(
        name="stop_session",
        method="POST",
        path=f"{_ID}/stop",
        summary="Stop the session for good (reads keep working)",
        response=StopResponse,
        status=202,
        errors=(404,),
    ),
    ApiRoute(
        name="events",
        method="GET",
        path=f"{_ID}/events",
        summary="Server-sent events of the session; `id` is the event offset, resume with Last-Event-ID",
        response=AgentEvent,
        query=(QueryParameter(name="after", description="resume after this offset", schema_type="integer"),),
        event_stream=True,
        errors=(404, 422),
    ),
    ApiRoute(
        name="list_interrupts",
        method="GET",
        path=f"{API_PREFIX}/interrupts",
        summary="Pending approvals and questions across the caller's sessions, oldest first, with each session's title",
        response=InterruptsResponse,
        errors=(503,),
    ),
    ApiRoute(
        name="resolve_interrupt",
        method="POST",
        path=f"{_ID}/interrupts/{{interrupt_id}}",
        summary="Approve, reject with a reason, or answer with a value",
        body=ResolveInterruptRequest,
        response=ResolvedResponse,
        errors=(400, 404, 409, 413, 422),
    ),
)
