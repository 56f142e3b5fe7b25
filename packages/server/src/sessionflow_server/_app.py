"""The ASGI app: routes, authentication, and the guards every request passes.

Each request passes, in order: the Host check (DNS rebinding; before routing, so no
redirect or 404 answers a foreign Host), the Origin check on state-changing methods (same
origin or a configured one; no Origin is a non-browser client), the bearer token (the
``Authorization`` header only: cookies are never read; a client address's failed
attempts are rate-limited), the user's rate limit, then the body limit and strict JSON
decoding. A session of another user, or of a flow this server does not serve, is a 404,
exactly like a missing one, reached by the same server calls.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

import anyio
import msgspec
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from sessionflow import (
    AgentEventType,
    AgentSessionClient,
    InvalidAnswerError,
    MessageRejectedError,
    SessionExistsError,
    StaleApprovalError,
    TurnOutOfRangeError,
    UnknownSessionError,
    UserError,
)
from sessionflow.session.model import SessionModel
from sessionflow.temporal import (
    SearchAttributesMissingError,
    SessionState,
    parse_age,
    validate_session_id,
)
from sessionflow_server._config import ServerConfig
from sessionflow_server._console import CONSOLE_FILES, console_response
from sessionflow_server._errors import ApiError
from sessionflow_server._limits import RateLimiter
from sessionflow_server._openapi import OPENAPI_PATH, openapi_document
from sessionflow_server._owners import Owners
from sessionflow_server._routes import ROUTES
from sessionflow_server._session_list import DEFAULT_LIMIT, LIST_STATES, MAX_LIMIT, ListState, SessionLister
from sessionflow_server._streams import until_shutdown
from sessionflow_server._tokens import LoginCodes, TokenStore
from sessionflow_server._types import (
    AcceptedResponse,
    CancelResponse,
    CreatedResponse,
    CreateSessionRequest,
    ForkedFromResponse,
    ForkRequest,
    ForkResponse,
    InterruptItem,
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
from sessionflow_server._webhooks import SessionWatcher, WebhookSender

__all__ = ["ApiServer"]

T = TypeVar("T")
_log = logging.getLogger("sessionflow_server")
_STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_DIGITS = re.compile(r"[0-9]{1,18}")
"""A whole number as the API reads it: ASCII digits only (not `²`), and short enough to convert."""
_MAX_EVENT_SCAN = 10
"""Pages of events read to tell why an interrupt answer was refused (the log keeps ~2000)."""
_CHUNK_BYTES = 64 * 1024
"""Bytes per write of a streamed answer (a whole message or tool output may be megabytes)."""

Handler = Callable[[Request, str], Awaitable[Response]]


def _complete(value: Any) -> bytes:
    """`value` as JSON with every field, defaults included.

    A dataclass decoded from a query result may hold only the fields its payload carried
    (the rest are class defaults), and msgspec encodes what an instance holds
    (msgspec's own decoding does the same), so the defaults are filled in first, and every
    response has every documented field.
    """
    _fill_defaults(value)
    return msgspec.json.encode(value)


def _fill_defaults(value: Any) -> None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        held = vars(value)
        for spec in dataclasses.fields(value):
            if spec.name not in held:
                if spec.default is not dataclasses.MISSING:
                    default: Any = spec.default
                elif spec.default_factory is not dataclasses.MISSING:
                    default = spec.default_factory()
                else:
                    continue
                object.__setattr__(value, spec.name, default)
            _fill_defaults(held[spec.name])
    elif isinstance(value, msgspec.Struct):
        for name in value.__struct_fields__:
            _fill_defaults(getattr(value, name))
    elif isinstance(value, list):
        for item in cast(list[Any], value):
            _fill_defaults(item)


def _json(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    body = msgspec.json.encode(value) if isinstance(value, dict) else _complete(value)
    # Model and tool text travels as JSON strings; nosniff keeps a browser from reading it as HTML.
    return Response(
        body,
        status_code=status,
        media_type="application/json",
        headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store", **(headers or {})},
    )


def _streamed(body: bytes, media_type: str) -> Response:
    """`body` sent in chunks (no Content-Length), so a large one goes out as it is written."""

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), _CHUNK_BYTES):
            yield body[start : start + _CHUNK_BYTES]

    return StreamingResponse(
        chunks(),
        media_type=media_type,
        headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"},
    )


def _error(error: ApiError) -> Response:
    body = {"error": error.error, "detail": error.detail}
    return _json(body, error.status, error.headers)


class ApiServer:
    """The API of some flows' sessions. `app` is the ASGI application."""

    def __init__(
        self,
        flows: Sequence[AgentSessionClient],
        tokens: TokenStore,
        *,
        codes: LoginCodes | None = None,
        config: ServerConfig | None = None,
        version: str | None = None,
    ) -> None:
        if not flows:
            raise ValueError("an API server needs at least one flow")
        self.flows = {flow.flow_type: flow for flow in flows}
        self.tokens = tokens
        self.codes = codes or LoginCodes()
        self.config = config or ServerConfig()
        self.version = version or _package_version()
        self.limiter = RateLimiter(per_second=self.config.rate_per_second, burst=self.config.rate_burst)
        self.failures = RateLimiter(
            per_second=self.config.failed_auth_per_second, burst=self.config.failed_auth_burst
        )
        self.owners = Owners(list(self.flows.values()))
        self.lister = SessionLister(list(self.flows.values()))
        self.shutdown = anyio.Event()
        self.watcher: SessionWatcher | None = None
        self._sender: WebhookSender | None = None
        if self.config.webhooks is not None:
            self._sender = WebhookSender(self.config.webhooks)
            self.watcher = SessionWatcher(list(self.flows.values()), self._sender, self._owner)
        self.app = self._build()

    async def _owner(self, session_id: str) -> str | None:
        found = await self.owners.lookup(session_id)
        return found[1] if found is not None else None

    # -- the app --------------------------------------------------------------------------

    def _build(self) -> Starlette:
        handlers: dict[str, Handler] = {
            "me": self._me,
            "list_sessions": self._list_sessions,
            "create_session": self._create_session,
            "get_session": self._get_session,
            "list_messages": self._list_messages,
            "get_message": self._get_message,
            "send_message": self._send_message,
            "fork_session": self._fork_session,
            "list_turns": self._list_turns,
            "tool_output": self._tool_output,
            "cancel_turn": self._cancel_turn,
            "stop_session": self._stop_session,
            "events": self._events,
            "list_interrupts": self._list_interrupts,
            "resolve_interrupt": self._resolve_interrupt,
        }
        routes: list[Route] = []
        for route in ROUTES:
            if route.name == "login":
                routes.append(
                    Route(route.path, self._guard(self._login, authenticated=False), methods=["POST"])
                )
            else:
                routes.append(Route(route.path, self._guard(handlers[route.name]), methods=[route.method]))
        routes.append(Route(OPENAPI_PATH, self._guard(self._openapi), methods=["GET"]))
        for path in CONSOLE_FILES:
            routes.append(Route(path, self._guard(self._console, authenticated=False), methods=["GET"]))
        app = Starlette(
            routes=routes,
            lifespan=self._lifespan,
            middleware=[Middleware(_HostCheck, allowed=self.config.allowed_hosts)],
        )
        # No redirect to the path with(out) a trailing slash: it would echo the Host header.
        app.router.redirect_slashes = False
        return app

    @asynccontextmanager
    async def _lifespan(self, _app: Starlette) -> AsyncGenerator[None]:
        stop = asyncio.Event()
        watching = asyncio.create_task(self.watcher.run(stop)) if self.watcher is not None else None
        try:
            yield
        finally:
            self.shutdown.set()
            stop.set()
            if watching is not None:
                await watching
            if self._sender is not None:
                await self._sender.aclose()

    def _guard(
        self, handler: Handler, *, authenticated: bool = True
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                self._check_origin(request)
                if not authenticated:
                    return await handler(request, "")
                user = self._authenticate(request)
                # Keyed on the user the token names, not on the header's spelling.
                wait = self.limiter.take(f"user:{user}")
                if wait > 0:
                    raise _rate_limited(wait, "too many requests for this user")
                return await handler(request, user)
            except ApiError as error:
                return _error(error)
            except RecursionError:
                return _error(ApiError(400, "malformed_json", "the body is nested too deeply"))
            except Exception as error:
                # No worker answers the session's queries, the server is unreachable, or a bug:
                # a JSON error the client can show, and the traceback in the log.
                _log.exception("%s %s failed", request.method, request.url.path)
                return _error(ApiError(500, "internal_error", f"{type(error).__name__}: see the server log"))

        return endpoint

    def _own_origin(self, request: Request) -> str:
        return f"{request.url.scheme}://{request.headers.get('host', '')}"

    def _check_origin(self, request: Request) -> None:
        if request.method not in _STATE_CHANGING:
            return
        origin = request.headers.get("origin")
        if origin is None:
            return  # not a browser, or a same-origin request of one that omits it
        if origin == self._own_origin(request) or origin in self.config.allowed_origins:
            return
        raise ApiError(403, "origin_refused", f"requests from origin {origin!r} are refused")

    def _authenticate(self, request: Request) -> str:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        user = self.tokens.user_of(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
        if user is None:
            wait = self.failures.take(f"client:{_client(request)}")
            if wait > 0:
                raise _rate_limited(wait, "too many requests without a valid token from this address")
            raise ApiError(
                401,
                "unauthorized",
                "a valid `Authorization: Bearer <token>` header is required",
                headers={"WWW-Authenticate": 'Bearer realm="sessionflow"'},
            )
        return user

    async def _body(self, request: Request, kind: type[T]) -> T:
        limit = self.config.max_body_bytes
        length = request.headers.get("content-length")
        if length is not None and not (length.isascii() and length.isdigit()):
            raise ApiError(400, "invalid_request", "Content-Length must be a whole number")
        if length is not None and (not _DIGITS.fullmatch(length) or int(length) > limit):
            raise ApiError(413, "body_too_large", f"the body is larger than {limit} bytes")
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            raise ApiError(415, "unsupported_media_type", "send the body as application/json")
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise ApiError(413, "body_too_large", f"the body is larger than {limit} bytes")
            chunks.append(chunk)
        data = b"".join(chunks)
        try:
            return msgspec.json.decode(data, type=kind)
        except RecursionError:
            raise ApiError(400, "malformed_json", "the body is nested too deeply") from None
        except msgspec.ValidationError as error:
            raise ApiError(422, "invalid_request", str(error)) from None
        except msgspec.DecodeError as error:
            raise ApiError(400, "malformed_json", f"the body is not JSON: {error}") from None

    async def _session(self, request: Request, user: str) -> tuple[str, AgentSessionClient]:
        session_id = str(request.path_params["session_id"])
        flow = await self.owners.flow_for(session_id, user)
        if flow is None:
            raise ApiError(404, "not_found", f"there is no session {session_id!r}")
        return session_id, flow

    # -- routes ---------------------------------------------------------------------------

    async def _console(self, request: Request, _user: str) -> Response:
        return console_response(request)

    async def _openapi(self, _request: Request, _user: str) -> Response:
        return _json(openapi_document(self.version))

    async def _login(self, request: Request, _user: str) -> Response:
        wait = self.limiter.take(f"login:{_client(request)}")
        if wait > 0:
            raise _rate_limited(wait, "too many logins")
        body = await self._body(request, LoginRequest)
        user = self.codes.redeem(body.code)
        if user is None:
            raise ApiError(401, "invalid_code", "the login code is unknown, used or expired")
        return _json(TokenResponse(token=self.tokens.issue(user), user=user))

    async def _me(self, _request: Request, user: str) -> Response:
        namespace = next(iter(self.flows.values())).client.namespace
        return _json(MeResponse(user=user, namespace=namespace, temporal_ui_url=self.config.temporal_ui_url))

    async def _list_sessions(self, request: Request, user: str) -> Response:
        params = request.query_params
        unknown = set(params) - {"flow_type", "status", "state", "q", "limit", "user", "since"}
        if unknown:
            raise ApiError(422, "invalid_request", f"unknown query parameters: {sorted(unknown)}")
        status = _status(params.get("status"))
        state = _list_state(params.get("state"))
        since = _since(params.get("since"))
        limit = _integer(request, "limit", DEFAULT_LIMIT, minimum=1, maximum=MAX_LIMIT)
        if params.get("user", user) != user:
            # A token sees only its own user's sessions: another user's filter matches none.
            return _json(SessionsResponse(sessions=[]))
        flow_type = params.get("flow_type")
        flow_types = [flow_type] if flow_type in self.flows else [] if flow_type else list(self.flows)
        try:
            summaries = await self.lister.summaries(user, flow_types=flow_types, status=status, since=since)
        except SearchAttributesMissingError as error:
            raise ApiError(503, "search_attributes_missing", error.message) from None
        items = await self.lister.items(summaries, state=state, q=params.get("q") or None, limit=limit)
        return _json(SessionsResponse(sessions=items))

    async def _create_session(self, request: Request, user: str) -> Response:
        body = await self._body(request, CreateSessionRequest)
        session_id = body.session_id or self.config.new_session_id()
        try:
            validate_session_id(session_id)
        except ValueError as error:
            raise ApiError(422, "invalid_session_id", str(error)) from None
        flow = next(iter(self.flows.values()))
        environment = {**self.config.environment, "user": user}
        try:
            await flow.start_session(
                session_id,
                body.message,
                environment=environment,
                settings=body.settings,
                double_texting=body.double_texting or "enqueue",
            )
        except SessionExistsError as error:
            raise ApiError(409, "session_exists", str(error)) from None
        self.owners.remember(session_id, flow, user)
        if self.watcher is not None:
            self.watcher.track(session_id, flow)
        return _json(CreatedResponse(session_id=session_id), 201)

    async def _get_session(self, request: Request, user: str) -> Response:
        session_id, flow = await self._session(request, user)
        return _json(await flow.get_agent_snapshot(session_id))

    async def _list_messages(self, request: Request, user: str) -> Response:
        session_id, flow = await self._session(request, user)
        after = _integer(request, "after", 0, minimum=0)
        limit = _integer(request, "limit", 50, minimum=1, maximum=200)
        superseded = _flag(request, "include_superseded")
        return _json(
            await flow.list_agent_messages(
                session_id, after=after, limit=limit, include_superseded=superseded
            )
        )

    async def _get_message(self, request: Request, user: str) -> Response:
        session_id, flow = await self._session(request, user)
        sequence = _path_integer(request, "sequence")
        try:
            message = await flow.get_message(session_id, sequence)
        except LookupError:
            raise ApiError(404, "not_found", f"session {session_id!r} has no message {sequence}") from None
        except UserError as error:
            # Kept in a payload store this server was not configured with.
            raise ApiError(503, "payload_store_unavailable", str(error)) from None
        return _streamed(_complete(message), "application/json")

    async def _send_message(self, request: Request, user: str) -> Response:
        session_id, flow = await self._session(request, user)
        body = await self._body(request, SendMessageRequest)
        if not body.message_id.strip():
            raise ApiError(422, "invalid_request", "message_id must not be blank")
        if not SessionModel.is_acceptable_text(body.text):
            raise ApiError(422, "blank_message", "the message text is blank")
        try:
            accepted = await flow.send_user_message(
                session_id,
                body.text,
                settings=body.settings,
                message_id=body.message_id,
                double_texting=body.double_texting,
            )
        except MessageRejectedError as error:
            raise ApiError(409, "turn_running", str(error)) from None
        if not accepted:
            raise ApiError(409, "session_stopped", f"session {session_id!r} is stopped and takes no messages")
        return _json(AcceptedResponse(message_id=body.message_id, accepted=True), 202)

    async def _fork_session(self, request: Request, user: str) -> Response:
        session_id, flow = await self._session(request, user)
        body = await self._body(request, ForkRequest)
        if body.session_id is not None:
            try:
                validate_session_id(body.session_id)
            except ValueError as error:
                raise ApiError(422, "invalid_session_id", str(error)) from None
        try:
            # The original's environment (its user included) comes along, so the fork is the caller's.
            new_id = await flow.fork_session(session_id, at_turn=body.turn, new_session_id=body.session_id)
        except UnknownSessionError:
            raise ApiError(404, "not_found", f"there is no session {session_id!r}") from None
        except TurnOutOfRangeError as error:
            raise ApiError(422, "turn_out_of_range", str(error)) from None
        except SessionExistsError as error:
            raise ApiError(409, "session_exists", str(error)) from None
        self.owners.remember(new_id, flow, user)
        if self.watcher is not None:
            self.watcher.track(new_id, flow)
        forked = ForkedFromResponse(session_id=session_id, turn=body.turn)
        return _json(ForkResponse(session_id=new_id, forked_from=forked), 201)

    async def _list_turns(self, request: Request, user: str) -> Response:
        session_id, flow = await self._session(request, user)
        return _json(TurnsResponse(turns=await flow.list_turns(session_id)))

    async def _tool_output(self, request: Request, user: str) -> Response:
        session_id, flow = await self._session(request, user)
        turn_id = str(request.path_params["turn_id"])
        tool_call_id = str(request.path_params["tool_call_id"])
        try:
            output = await flow.tool_output(session_id, turn_id, tool_call_id)
        except LookupError as error:
            raise ApiError(404, "not_found", str(error)) from None
        except UserError as error:
            raise ApiError(503, "payload_store_unavailable", str(error)) from None
        return _streamed(output.encode(), "text/plain; charset=utf-8")

    async def _cancel_turn(self, request: Request, user: str) -> Response:
        session_id, flow = await self._session(request, user)
        return _json(CancelResponse(cancelled=await flow.cancel_turn(session_id)), 202)

    async def _stop_session(self, request: Request, user: str) -> Response:
        session_id, flow = await self._session(request, user)
        return _json(StopResponse(stopped=await flow.stop_session(session_id)), 202)

    async def _events(self, request: Request, user: str) -> Response:
        session_id, flow = await self._session(request, user)
        header = request.headers.get("last-event-id")
        if header is not None:
            if not _DIGITS.fullmatch(header.strip()):
                raise ApiError(422, "invalid_request", "Last-Event-ID must be an event offset")
            after = int(header.strip())
        else:
            after = _integer(request, "after", 0, minimum=0)

        async def stream() -> AsyncIterator[ServerSentEvent]:
            async for event in until_shutdown(flow.events(session_id, after=after), self.shutdown):
                yield ServerSentEvent(
                    data=_complete(event).decode(),
                    event=event.type.value,
                    # Live events (deltas) have no offset: they carry no id, so a reconnect
                    # resumes after the last durable event the client saw.
                    id=str(event.offset) if event.offset is not None else None,
                )
            if not self.shutdown.is_set():
                # The session stopped and has no more events (a server stopping is no end:
                # the client reconnects with its Last-Event-ID).
                yield ServerSentEvent(data="{}", event="end")

        return EventSourceResponse(
            stream(),
            ping=self.config.stream_ping_seconds,
            shutdown_event=self.shutdown,
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def _list_interrupts(self, _request: Request, user: str) -> Response:
        try:
            summaries = await self.lister.summaries(user, flow_types=list(self.flows))
        except SearchAttributesMissingError as error:
            raise ApiError(503, "search_attributes_missing", error.message) from None
        now = datetime.now(UTC)
        items = [
            InterruptItem(
                session_id=w.session_id,
                flow_type=w.flow_type,
                session_title=w.session_title,
                waited_seconds=_seconds_since(w.interrupt.raised_at, now),
                interrupt=w.interrupt,
            )
            for w in await self.lister.waiting(summaries)
        ]
        return _json(InterruptsResponse(interrupts=items))

    async def _resolve_interrupt(self, request: Request, user: str) -> Response:
        session_id, flow = await self._session(request, user)
        interrupt_id = str(request.path_params["interrupt_id"])
        body = await self._body(request, ResolveInterruptRequest)
        answered = body.value is not msgspec.UNSET
        decided = body.approved is not msgspec.UNSET
        if answered == decided:
            raise ApiError(
                422, "invalid_request", 'give either "approved" (with an optional "reason") or "value"'
            )
        if body.reason is not msgspec.UNSET and body.approved is not False:
            raise ApiError(422, "invalid_request", '"reason" goes with "approved": false')
        digest = body.digest if isinstance(body.digest, str) else None
        try:
            if answered:
                value = body.value
                answer = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                resolved = await flow.resolve_interrupt(
                    session_id, interrupt_id, approved=True, answer=answer, digest=digest, answered_by=user
                )
            else:
                approved = bool(body.approved)
                reason = body.reason if isinstance(body.reason, str) else None
                resolved = await flow.resolve_interrupt(
                    session_id,
                    interrupt_id,
                    approved=approved,
                    rejection_message=reason,
                    digest=digest,
                    answered_by=user,
                )
        except InvalidAnswerError as error:
            raise ApiError(422, "invalid_answer", str(error)) from None
        except StaleApprovalError as error:
            raise ApiError(409, "stale_approval", str(error)) from None
        if resolved:
            return _json(ResolvedResponse())
        raise await self._refusal(flow, session_id, interrupt_id)

    async def _refusal(self, flow: AgentSessionClient, session_id: str, interrupt_id: str) -> ApiError:
        """Why an answer was refused: the interrupt expired, was answered, or never existed.

        Read only after a refusal, so an answer that is taken costs no extra query.
        """
        snapshot = await flow.get_agent_snapshot(session_id)
        pending = next((i for i in snapshot.pending_interrupts if i.interrupt_id == interrupt_id), None)
        if pending is not None and _past(pending.deadline):
            # Still pending, but the session has not expired it yet: the session refuses it all the same.
            return ApiError(
                409, "past_deadline", f"interrupt {interrupt_id!r} passed its deadline {pending.deadline}"
            )
        raised = False
        after = 0
        for _ in range(_MAX_EVENT_SCAN):
            page = await flow.list_agent_events(session_id, after=after)
            for event in page.events:
                if event.data.get("interrupt_id") != interrupt_id:
                    continue
                if event.type is AgentEventType.INTERRUPT_RAISED:
                    raised = True
                elif event.type is AgentEventType.INTERRUPT_RESOLVED:
                    if event.data.get("expired"):
                        return ApiError(
                            409, "past_deadline", f"interrupt {interrupt_id!r} passed its deadline"
                        )
                    return ApiError(
                        409, "already_resolved", f"interrupt {interrupt_id!r} was already resolved"
                    )
            if not page.events:
                break
            after = page.next_offset
        if raised:
            return ApiError(409, "already_resolved", f"interrupt {interrupt_id!r} is no longer pending")
        return ApiError(404, "not_found", f"session {session_id!r} has no interrupt {interrupt_id!r}")


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("sessionflow-server")
    except PackageNotFoundError:
        return "0+unknown"


def _client(request: Request) -> str:
    """The client's address: the peer's, or what a trusted proxy says (uvicorn rewrites it)."""
    return request.client.host if request.client is not None else "unknown"


class _HostCheck:
    """Answers 421 to a request whose Host is not allowed, before any route or redirect."""

    def __init__(self, app: ASGIApp, allowed: tuple[str, ...] | None) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.allowed is not None and scope["type"] == "http":
            host = Request(scope).headers.get("host", "")
            bare = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if host not in self.allowed and bare not in self.allowed:
                refused = ApiError(421, "host_refused", f"this server does not answer for host {host!r}")
                await _error(refused)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _rate_limited(wait: float, detail: str) -> ApiError:
    return ApiError(429, "rate_limited", detail, headers={"Retry-After": str(max(1, round(wait)))})


def _past(deadline: str | None) -> bool:
    if deadline is None:
        return False
    try:
        return datetime.now(UTC) >= datetime.fromisoformat(deadline)
    except ValueError:
        return False


def _integer(request: Request, name: str, default: int, *, minimum: int, maximum: int | None = None) -> int:
    text = request.query_params.get(name)
    if text is None:
        return default
    if not _DIGITS.fullmatch(text):
        raise ApiError(422, "invalid_request", f"{name} must be a whole number (at most 18 digits)")
    value = int(text)
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"{minimum}..{maximum}" if maximum is not None else f"at least {minimum}"
        raise ApiError(422, "invalid_request", f"{name} must be {bound}")
    return value


def _path_integer(request: Request, name: str) -> int:
    """A path segment that must be a whole number of at least 1 (a message sequence)."""
    text = str(request.path_params[name])
    if not _DIGITS.fullmatch(text) or int(text) < 1:
        raise ApiError(422, "invalid_request", f"{name} must be a whole number from 1 (at most 18 digits)")
    return int(text)


def _flag(request: Request, name: str) -> bool:
    """A yes-or-no query parameter: `true` or `false`, absent for false."""
    text = request.query_params.get(name)
    if text is None or text == "false":
        return False
    if text == "true":
        return True
    raise ApiError(422, "invalid_request", f"{name} must be true or false")


def _status(text: str | None) -> SessionState | None:
    """The `status` filter: the ``SessionflowStatus`` search attribute, as before `state` came."""
    if not text:
        return None
    try:
        return SessionState(text)
    except ValueError:
        choices = ", ".join(s.value for s in SessionState)
        raise ApiError(422, "invalid_request", f"status must be one of {choices}") from None


def _list_state(text: str | None) -> ListState | None:
    if not text:
        return None
    if text not in LIST_STATES:
        raise ApiError(422, "invalid_request", f"state must be one of {', '.join(LIST_STATES)}")
    return cast(ListState, text)


def _seconds_since(moment: str, now: datetime) -> float:
    """Seconds from an ISO 8601 time to `now`, to a tenth; 0 for a time that does not parse."""
    try:
        then = datetime.fromisoformat(moment)
    except ValueError:
        return 0.0
    then = then if then.tzinfo is not None else then.replace(tzinfo=UTC)
    return max(0.0, round((now - then).total_seconds(), 1))


def _since(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    except ValueError:
        pass
    try:
        return datetime.now(UTC) - parse_age(text)
    except (ValueError, OverflowError):
        raise ApiError(
            422, "invalid_request", "since is an ISO 8601 time or an age such as 30m, 12h or 7d"
        ) from None
