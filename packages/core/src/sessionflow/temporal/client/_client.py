"""`AgentSessionClient`: start, talk to, and read sessions of one flow type."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.common import TypedSearchAttributes, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from sessionflow.kit._deltas import DeltaTransport, InProcessDeltaBus
from sessionflow.kit._flow import AgentSessionFlow, check_flow_name
from sessionflow.session.bodies import fits_inline
from sessionflow.session.double_texting import DoubleTexting, double_texting_of
from sessionflow.session.errors import UserError
from sessionflow.session.events import AgentEvent, AgentEventsPage, AgentEventType
from sessionflow.session.fork import ForkedFrom, UnknownSessionError, check_fork_turn, ended_turns
from sessionflow.session.messages import AgentMessage, FrameworkMessage, MessageRole
from sessionflow.session.model import SessionModel
from sessionflow.session.state import AgentMessagesPage, AgentSnapshot
from sessionflow.session.turn_records import TurnRecord
from sessionflow.session.turn_result import TurnResult
from sessionflow.temporal._payloads import (
    CANCEL_TURN,
    GET_AGENT_SNAPSHOT,
    LIST_AGENT_EVENTS,
    LIST_AGENT_MESSAGES,
    LIST_TURNS,
    RESOLVE_INTERRUPT,
    SEND_USER_MESSAGE,
    STOP_SESSION,
    ListAgentEventsRequest,
    ListAgentMessagesRequest,
    ResolveInterruptRequest,
    SendUserMessageRequest,
    SessionStartInput,
)
from sessionflow.temporal._search_attributes import search_attributes_registered, start_attributes
from sessionflow.temporal.client._answers import raise_invalid_answer
from sessionflow.temporal.client._fork import fork_messages
from sessionflow.temporal.client._live_order import interleave
from sessionflow.temporal.client._rejected import raise_rejected_message
from sessionflow.temporal.client._start_history import StartHistory, start_history
from sessionflow.temporal.client._turns import OnInterrupt, follow_turn
from sessionflow.temporal.storage._bodies import BodyStore, StoreScope, inline_limit
from sessionflow.temporal.storage._media import media_ref
from sessionflow.temporal.worker._run_config import run_config

__all__ = ["AgentSessionClient", "SessionExistsError", "validate_session_id"]

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,254}$")


class SessionExistsError(UserError):
    """A session with this ID already exists (running or stopped); IDs are never reused."""


def validate_session_id(session_id: str) -> str:
    if not _SESSION_ID.match(session_id):
        raise ValueError(
            f"session ID {session_id!r} must be 1-255 characters of letters, digits, '.', '_', ':', '@' or '-'"
        )
    return session_id


class AgentSessionClient:
    """The RPCs of a session. Mutations are Temporal Updates; reads are Queries.

    Give it the flow, or only its flow type: a process that just talks to sessions (a web
    backend) then needs neither the framework nor the agent. Without the flow, the worker
    builds each user message and says the session's configuration; with it, the client
    builds small user messages itself, sparing each turn that step.
    """

    def __init__(
        self,
        client: Client,
        flow: AgentSessionFlow | str,
        *,
        task_queue: str | None = None,
        delta_transport: DeltaTransport | None = None,
    ) -> None:
        """Args:
        client: a client to the flow's namespace (`connect`, or ``Client.connect`` with
            `SessionflowPlugin`).
        flow: the flow, or its flow type.
        task_queue: the flow's task queue; by default the flow's (its flow type).
        delta_transport: where the workers publish live deltas; by default the flow's, else
            the process-wide in-process bus.
        """
        self.client = client
        self.flow: AgentSessionFlow | None = None if isinstance(flow, str) else flow
        self.flow_type = check_flow_name("flow_type", flow) if isinstance(flow, str) else flow.flow_type
        default_queue = self.flow.task_queue if self.flow is not None else self.flow_type
        self.task_queue = check_flow_name("task_queue", task_queue or default_queue)
        self.delta_transport: DeltaTransport = delta_transport or (
            self.flow.delta_transport if self.flow is not None else InProcessDeltaBus.shared()
        )
        self._search_attributes: bool | None = None

    async def run_turn(
        self,
        session_id: str,
        text: str,
        *,
        on_interrupt: OnInterrupt | None = None,
        settings: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> TurnResult:
        """Send `text` and wait for the turn it starts to end; its `TurnResult`.

        A new `session_id` starts the session; an existing one gets the message (queued
        behind a running turn, as the session's double-texting policy says). `settings`
        apply to this turn. `on_interrupt(interrupt)` is called, sync or async, for each
        approval or question the turn raises, and returns ``True`` (approve), ``False``
        (reject), an answer (a question's text) or a `Rejection` with a reason. Without it,
        the call returns at the first interrupt with status ``waiting`` and the interrupts
        in `TurnResult.interrupts`; answer them with `resolve_interrupt`.

        It only reads the session (Queries), so it survives a worker's restart and waits for
        the next worker. Past `timeout` seconds it raises `TimeoutError`; the turn goes on.
        Raises `SessionStoppedError` for a stopped session and `MessageRejectedError` when a
        busy session's policy refuses the message.
        """
        result: TurnResult | None = None
        async for item in self.stream_turn(
            session_id, text, on_interrupt=on_interrupt, settings=settings, timeout=timeout
        ):
            if isinstance(item, TurnResult):
                result = item
        assert result is not None  # the stream always ends with the result
        return result

    def stream_turn(
        self,
        session_id: str,
        text: str,
        *,
        on_interrupt: OnInterrupt | None = None,
        settings: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[AgentEvent | TurnResult]:
        """`run_turn`, yielding the turn's events as they come (text deltas, tool calls,
        interrupts: `AgentEvent`s of this turn only) and, last, its `TurnResult`."""
        return follow_turn(
            self, session_id, text, on_interrupt=on_interrupt, settings=settings, timeout=timeout
        )

    async def start_session(
        self,
        session_id: str,
        initial_message: str | None = None,
        *,
        environment: dict[str, str] | None = None,
        settings: Mapping[str, Any] | None = None,
        history: Sequence[FrameworkMessage] = (),
        double_texting: DoubleTexting | str = DoubleTexting.ENQUEUE,
    ) -> None:
        """Start a session whose workflow ID is `session_id`. A blank message starts no turn.

        `double_texting` is what the session does with a message sent while it is busy
        (`DoubleTexting`: queue it, cancel the running turn for it, or refuse it); a message
        may override it (`send_user_message(double_texting=...)`).

        `history` is the conversation so far, in the flow's framework format (an adapter
        converts its framework's messages, e.g. ``sessionflow_pydantic_ai.history_messages``).
        The session stores it before its first turn, exactly as if earlier turns had produced
        it: every model step sees it, reads list it (turn ID `HISTORY_TURN_ID`), and
        `export_messages` returns it. Large bodies go to the payload store, as a turn's do.
        Raises `UserError` for a history that is not JSON `FrameworkMessage`s, or that a
        client without a payload store cannot start with (more than 1 MiB).
        """
        validate_session_id(session_id)
        policy = double_texting_of(double_texting)
        text = (
            initial_message if initial_message and SessionModel.is_acceptable_text(initial_message) else None
        )
        scope = StoreScope(namespace=self.client.namespace, session_id=session_id, flow_type=self.flow_type)
        start = await start_history(history, BodyStore.of(self.client), scope)
        await self._start(
            session_id,
            text,
            environment=environment,
            settings=settings,
            start=start,
            double_texting=policy,
            forked_from=None,
        )

    async def _start(
        self,
        session_id: str,
        text: str | None,
        *,
        environment: dict[str, str] | None,
        settings: Mapping[str, Any] | None,
        start: StartHistory,
        double_texting: DoubleTexting,
        forked_from: ForkedFrom | None,
    ) -> None:
        # Without the flow, the session asks its worker's flow for its configuration.
        config = run_config(self.flow) if self.flow is not None else None
        attributes: TypedSearchAttributes | None = None
        searchable = await self.uses_search_attributes()
        if searchable:
            # The session then keeps its state and last activity current (`search_attributes`).
            config = replace(config, search_attributes=True) if config is not None else None
            user = (environment or {}).get("user") or (environment or {}).get("user_name")
            attributes = start_attributes(self.flow_type, user)
        try:
            await self.client.start_workflow(
                self.flow_type,
                SessionStartInput(
                    timings=config,
                    initial_message=text,
                    initial_settings=dict(settings or {}),
                    environment=environment or {},
                    initial_user_message=self._user_message(text) if text is not None else None,
                    history=start.messages,
                    history_index_ref=start.index_ref,
                    # Recorded only when it says something, as inputs before it were.
                    double_texting=None if double_texting is DoubleTexting.ENQUEUE else double_texting,
                    forked_from=forked_from,
                    search_attributes=searchable and config is None,
                ),
                id=session_id,
                task_queue=self.task_queue,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                search_attributes=attributes,
            )
        except WorkflowAlreadyStartedError:
            raise SessionExistsError(f"session {session_id!r} already exists") from None

    async def fork_session(
        self,
        session_id: str,
        *,
        at_turn: int,
        new_session_id: str | None = None,
        environment: dict[str, str] | None = None,
    ) -> str:
        """Start a new session whose messages are `session_id`'s turns 1..`at_turn`; its ID.

        A turn is one user message and everything stored up to its end; a history the
        original started with comes too. The fork starts idle, with the original's
        environment and double-texting policy, and its snapshot's `forked_from` names the
        original and the turn (`environment` replaces the original's). The original is not changed; a turn it is running does not
        count. Bodies kept by reference are copied into the fork's own scope of the store.
        Raises `UnknownSessionError` for an unknown session, `TurnOutOfRangeError` for a
        turn that is not one of its ended turns, `SessionExistsError` for a taken new ID.
        """
        if new_session_id is None:
            new_session_id = f"{session_id[:200]}.fork-{uuid.uuid4().hex[:12]}"
        validate_session_id(new_session_id)
        try:
            original = await self.get_agent_snapshot(session_id)
        except RPCError as error:
            if error.status is RPCStatusCode.NOT_FOUND:
                raise UnknownSessionError(f"no session {session_id!r}") from None
            raise
        turn = check_fork_turn(session_id, at_turn, ended_turns(original.state))
        scope = StoreScope(
            namespace=self.client.namespace, session_id=new_session_id, flow_type=self.flow_type
        )
        bodies = BodyStore.of(self.client)

        async def read_page(after: int) -> AgentMessagesPage:
            return await self.list_agent_messages(session_id, after=after, limit=200, include_superseded=True)

        history = await fork_messages(session_id, turn, read_page, bodies, scope)
        await self._start(
            new_session_id,
            None,
            environment=dict(original.environment) if environment is None else environment,
            settings=None,
            start=await start_history(history, bodies, scope),
            double_texting=original.double_texting,
            forked_from=ForkedFrom(session_id=session_id, turn=turn),
        )
        return new_session_id

    async def uses_search_attributes(self) -> bool:
        """The namespace has sessionflow's search attributes, so sessions started here carry them.

        Asked of the server once per client (again after an answer it could not give).
        """
        if self._search_attributes is None:
            registered = await search_attributes_registered(self.client)
            if registered is None:
                return False
            self._search_attributes = registered
        return self._search_attributes

    async def send_user_message(
        self,
        session_id: str,
        text: str,
        *,
        images: Sequence[str] = (),
        settings: Mapping[str, Any] | None = None,
        message_id: str | None = None,
        double_texting: DoubleTexting | str | None = None,
    ) -> bool:
        """Queue a message. False for blank text or a stopped session.

        `settings` travel with the message and apply to the turn it starts. Give a
        `message_id` to make the send safe to retry: the session decides once per ID, and a
        retry gets the same answer. `double_texting` overrides the session's policy for this
        message when the session is busy: `interrupt` cancels the running turn (as
        `cancel_turn` does) and queues the message; `reject` raises `MessageRejectedError`
        and queues nothing. An idle session queues the message whatever the policy.
        """
        policy = None if double_texting is None else double_texting_of(double_texting)
        if not SessionModel.is_acceptable_text(text):
            return False
        request = SendUserMessageRequest(
            text=text,
            images=list(images),
            settings=dict(settings or {}),
            message_id=message_id,
            message=None if images else self._user_message(text),
            double_texting=policy,
        )
        return await self._update(session_id, SEND_USER_MESSAGE, request, update_id=message_id)

    def _user_message(self, text: str) -> FrameworkMessage | None:
        """`text` as the flow's runner builds it, when the session would keep it inline.

        Built here, it spares the turn its `BuildUserMessage` step (a local activity: a
        marker in the history and a round trip before the first model call). None leaves it
        to that step: a large message (the worker stores it by reference), a client with no
        payload store (it cannot tell the limit), or a runner that fails (its step reports it).
        """
        storage = self.client.data_converter.external_storage
        if storage is None or self.flow is None:
            return None
        try:
            message = self.flow.runner.build_user_message(text)
        except Exception:
            return None
        if (
            message.role is not MessageRole.USER
            or message.body is not None
            or not fits_inline(message.framework_item, message.text, inline_limit(storage))
        ):
            return None
        return message

    async def resolve_interrupt(
        self,
        session_id: str,
        interrupt_id: str,
        *,
        approved: bool,
        rejection_message: str | None = None,
        answer: str | None = None,
        digest: str | None = None,
        answered_by: str | None = None,
    ) -> bool:
        """Approve or reject a pending call. False when it is not pending or past its deadline.

        ``digest`` is the interrupt's `AgentInterrupt.digest` as the person saw it: when the
        call now shows other arguments (it was rewritten and asks again), the answer is
        refused with `StaleApprovalError` and the interrupt stays pending. ``answered_by``
        names who answered; the session records it, with the time and the digest, on the
        call (`AgentToolCall.approval`) and in the ``interrupt_resolved`` event.

        An answer naming a call of the running turn while a model step runs waits for that
        step: the step's result may raise it (a worker can show an approval, then die before
        its workflow task is recorded, and the retried task brings the result and the answer
        together). It is then applied, or refused if the step raised no such approval.
        `answer` goes with an approval to question tools (`AgentToolCall.answer`). A
        question (`AgentInterrupt.kind == "question"`) approved without an answer, or with
        one above `MAX_ANSWER_BYTES`, raises `InvalidAnswerError` and stays pending;
        `approved=False` declines it.
        """
        request = ResolveInterruptRequest(
            interrupt_id=interrupt_id,
            approved=approved,
            rejection_message=None if approved else rejection_message,
            answer=answer if approved else None,
            digest=digest,
            answered_by=answered_by,
        )
        return await self._update(session_id, RESOLVE_INTERRUPT, request)

    async def cancel_turn(self, session_id: str) -> bool:
        """Cancel the running turn. False when no turn runs."""
        return await self._update(session_id, CANCEL_TURN, None)

    async def stop_session(self, session_id: str) -> bool:
        """End the session for good; a running turn is cancelled. Reads keep working."""
        return await self._update(session_id, STOP_SESSION, None)

    async def get_agent_snapshot(self, session_id: str) -> AgentSnapshot:
        handle = self.client.get_workflow_handle(session_id)
        return await handle.query(GET_AGENT_SNAPSHOT, result_type=AgentSnapshot)

    async def list_agent_messages(
        self, session_id: str, *, after: int = 0, limit: int = 50, include_superseded: bool = False
    ) -> AgentMessagesPage:
        """Stored messages with a sequence above `after`, oldest first; limit clamped to 1..200.

        Messages the framework's own history no longer holds (a handoff filter dropped them,
        a summary replaced them) are left out, unless `include_superseded`: then the page
        holds them too and names them in `AgentMessagesPage.superseded`.
        """
        handle = self.client.get_workflow_handle(session_id)
        return await handle.query(
            LIST_AGENT_MESSAGES,
            ListAgentMessagesRequest(after=after, limit=limit, hide_superseded=not include_superseded),
            result_type=AgentMessagesPage,
        )

    async def get_message(self, session_id: str, sequence: int) -> AgentMessage:
        """One stored message whole: a body the session keeps by reference is read from the store.

        Snapshots and pages carry previews of long messages (`message.is_stored`); this is
        how a reader gets the rest. Raises `LookupError` for a sequence the session lacks.
        """
        page = await self.list_agent_messages(
            session_id, after=sequence - 1, limit=1, include_superseded=True
        )
        if not page.messages or page.messages[0].sequence != sequence:
            raise LookupError(f"session {session_id!r} has no message {sequence}")
        stored = page.messages[0]
        if stored.message.body is None:
            return stored
        bodies = BodyStore.of(self.client)
        if bodies is None:
            raise UserError(f"message {sequence} is kept in a payload store, and this client has none")
        return AgentMessage(
            sequence=stored.sequence,
            turn_id=stored.turn_id,
            message=await bodies.load_message(stored.message),
        )

    async def stored_messages(
        self, session_id: str, *, include_superseded: bool = False
    ) -> list[AgentMessage]:
        """The session's transcript, oldest first, read through bounded pages.

        A body kept in the payload store stays a reference (`AgentMessage.message.body`);
        `export_messages` reads them. `include_superseded` as in `list_agent_messages`.
        """
        messages: list[AgentMessage] = []
        after: int | None = 0
        while after is not None:
            page = await self.list_agent_messages(
                session_id, after=after, limit=200, include_superseded=include_superseded
            )
            messages += page.messages
            after = page.next_after
        return messages

    async def export_messages(
        self, session_id: str, *, include_superseded: bool = False
    ) -> list[AgentMessage]:
        """The session's transcript, oldest first and whole (bodies read from the store).

        Its history included: ``[m.message for m in ...]`` is a `history=` for a new session.
        It is what the framework's own history holds: messages it no longer holds are left
        out unless `include_superseded` (as in `list_agent_messages`).
        """
        messages = await self.stored_messages(session_id, include_superseded=include_superseded)
        if all(m.message.body is None for m in messages):
            return messages
        bodies = BodyStore.of(self.client)
        if bodies is None:
            raise UserError(
                f"session {session_id!r} keeps messages in a payload store, and this client has none"
            )
        return [replace(m, message=await bodies.load_message(m.message)) for m in messages]

    async def list_turns(self, session_id: str) -> list[TurnRecord]:
        """What each kept turn did, oldest first, the running turn last (`TurnRecord`).

        The running turn's record holds the text of every model step that ended and every
        tool call so far, so a client that connects late reads the turn whole. The session
        keeps the newest turns' records (`sessionflow.session.turn_records`); its stored
        messages keep every turn.
        """
        handle = self.client.get_workflow_handle(session_id)
        return await handle.query(LIST_TURNS, result_type=list[TurnRecord])

    async def tool_output(self, session_id: str, turn_id: str, tool_call_id: str) -> str:
        """The whole output of one recorded tool call (read from the payload store when kept there).

        Raises:
            LookupError: The session keeps no record of that turn or call, or the call has no output.
        """
        turns = await self.list_turns(session_id)
        turn = next((t for t in turns if t.turn_id == turn_id), None)
        call = next((c for c in turn.tool_calls if c.tool_call_id == tool_call_id), None) if turn else None
        if call is None:
            raise LookupError(f"session {session_id!r} keeps no tool call {tool_call_id!r} of {turn_id!r}")
        if call.output_ref is not None:
            bodies = BodyStore.of(self.client)
            if bodies is None:
                raise UserError("this output is kept in a payload store, and this client has none")
            return await bodies.load_text(call.output_ref)
        if call.output is None:
            raise LookupError(f"tool call {tool_call_id!r} of {turn_id!r} has no output")
        if call.output_cut:
            raise LookupError(
                f"tool call {tool_call_id!r} of {turn_id!r} kept only the first {len(call.output)} "
                "characters of its output (no payload store held the rest)"
            )
        return call.output

    async def upload_image(self, session_id: str, data: bytes, media_type: str) -> str:
        """Put an image in the payload store; pass the returned text in `images=` of a message.

        Every worker of the flow can then read the image, on this machine or another.
        """
        bodies = BodyStore.of(self.client)
        if bodies is None:
            raise UserError("images need a payload store, and this client has none")
        scope = StoreScope(namespace=self.client.namespace, session_id=session_id, flow_type=self.flow_type)
        return media_ref(await bodies.put(data, scope), media_type)

    async def list_agent_events(
        self, session_id: str, *, after: int = 0, limit: int = 500
    ) -> AgentEventsPage:
        """Durable events with an offset above `after` (a Query: it adds nothing to the history)."""
        handle = self.client.get_workflow_handle(session_id)
        return await handle.query(
            LIST_AGENT_EVENTS, ListAgentEventsRequest(after=after, limit=limit), result_type=AgentEventsPage
        )

    async def latest_event_offset(self, session_id: str) -> int:
        """The offset of the session's newest durable event (0 when it has none).

        Pass it as `events(after=...)` to follow only what happens from now on.
        """
        offset = 0
        while True:
            page = await self.list_agent_events(session_id, after=offset)
            if not page.events:
                return max(offset, page.next_offset)
            offset = page.next_offset

    async def events(
        self, session_id: str, *, after: int = 0, poll_interval: float = 0.1
    ) -> AsyncGenerator[AgentEvent]:
        """Follow a session: durable events from offset `after`, and live deltas as they come.

        Durable events carry an `offset`; pass the last one seen as `after` to resume after a
        disconnect. Live events (offset None: deltas, `custom_event`s, restarts) are best
        effort: after `turn_completed` the stored messages are the truth. With the in-process
        bus, every live event of a step comes before the durable events the step's end caused
        (`usage_recorded`, `tool_call_deferred`, `turn_completed`, ...; see `_live_order`).
        The iterator ends when a stopped session has no more events. A follow outlives a
        worker's restart: while no worker answers the session's queries, it waits (up to
        `_ABSENT_WORKER_WAIT` between tries) and asks again.
        """
        transport = self.delta_transport
        offset = after
        live_seen: set[tuple[str, int]] = set()
        async with transport.subscribe(session_id) as live:
            arrived: list[AgentEvent] = []
            wait = poll_interval
            while True:
                try:
                    page = await self.list_agent_events(session_id, after=offset)
                    wait = poll_interval
                except RPCError as error:
                    # Following a session that is about to start is allowed: wait for it. So
                    # is following one whose worker died: the next worker takes it up.
                    if error.status is not RPCStatusCode.NOT_FOUND and not _no_worker_answers(error):
                        raise
                    page = AgentEventsPage(events=[], next_offset=offset)
                    wait = min(wait * 2, _ABSENT_WORKER_WAIT)
                # Live events go out only with a page read after they arrived: that page holds
                # every durable event from before their step began. And a step's live events
                # were queued before the step returned, so before any page could show its end.
                for event in interleave([*arrived, *live.ready()], page.events):
                    if event.offset is None:
                        if _shown_live(event):
                            live_seen.add((event.step_execution_id, event.attempt))
                            yield event
                        continue
                    offset = event.offset
                    if event.type.is_live and (event.step_execution_id, event.attempt) in live_seen:
                        continue  # fallback batches repeat what the live transport already showed
                    yield event
                arrived = []
                if page.closed and not page.events:
                    return
                if not page.events:
                    arrived = await live.next(wait)

    async def _update(self, session_id: str, name: str, arg: Any, *, update_id: str | None = None) -> bool:
        handle = self.client.get_workflow_handle(session_id)
        try:
            result = await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
                name, args=[] if arg is None else [arg], result_type=bool, id=update_id
            )
            return bool(result)
        except WorkflowUpdateFailedError as error:
            # The validator refused: nothing was written to the session's history. Or the
            # handler refused a message or an answer, with a type that says why.
            raise_invalid_answer(error)
            raise_rejected_message(error)
            return False
        except RPCError as error:
            if error.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.FAILED_PRECONDITION):
                return False
            raise


_ABSENT_WORKER_WAIT = 2.0
"""Seconds between a follower's tries while no worker answers its session's queries."""


def _no_worker_answers(error: RPCError) -> bool:
    """The server refused a query because no worker polls the session's queue right now
    (all of them restarting), or none answered it in time."""
    return error.status in (RPCStatusCode.FAILED_PRECONDITION, RPCStatusCode.DEADLINE_EXCEEDED)


def _shown_live(event: AgentEvent) -> bool:
    """The live events a follower sees; the others repeat durable events (a retried start is news)."""
    return event.type.is_live or (event.type is AgentEventType.TOOL_CALL_STARTED and event.attempt > 1)
