"""A turn you can await: send a message, follow the session until that turn ends, answer its interrupts.

It reads the session's events (`AgentSessionClient.events`), which are Queries: awaiting a
turn adds nothing to the session's history, and it outlives a worker's restart (the follow
waits for the next worker). The turn is the one the message starts: the message goes with
a fresh ID, and the turn's `turn_started` event names it.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from temporalio.service import RPCError, RPCStatusCode

from sessionflow.session.errors import SessionStoppedError, UserError
from sessionflow.session.events import AgentEvent
from sessionflow.session.messages import MessageRole
from sessionflow.session.state import AgentInterrupt
from sessionflow.session.turn_result import Rejection, TurnResult, TurnTracker

if TYPE_CHECKING:
    from sessionflow.temporal.client._client import AgentSessionClient

__all__ = ["InterruptReply", "OnInterrupt", "follow_turn"]

InterruptReply: TypeAlias = bool | str | Rejection
"""``True`` approves, ``False`` rejects; a string answers a question; a `Rejection` rejects
(or declines a question) with a reason the model sees."""

OnInterrupt: TypeAlias = Callable[[AgentInterrupt], InterruptReply | Awaitable[InterruptReply]]


async def follow_turn(
    sessions: AgentSessionClient,
    session_id: str,
    text: str,
    *,
    on_interrupt: OnInterrupt | None,
    settings: Mapping[str, Any] | None,
    timeout: float | None,
) -> AsyncIterator[AgentEvent | TurnResult]:
    """The turn's events as they come, then its `TurnResult` (see `AgentSessionClient.stream_turn`)."""
    if not text.strip():
        raise UserError("a turn needs a message: the text is blank")
    deadline = None if timeout is None else asyncio.get_running_loop().time() + timeout
    tracker, after = await _send(sessions, session_id, text, settings)
    answered: set[str] = set()
    events = sessions.events(session_id, after=after)
    try:
        while True:
            event = await _next(events, deadline, session_id, timeout)
            if event is None:  # the session stopped before the turn ended
                raise SessionStoppedError(f"session {session_id!r} stopped before its turn ended")
            if not tracker.mine(event):
                continue
            yield event
            if tracker.ended is not None:
                yield tracker.result(session_id, text=await _answer_text(sessions, session_id, tracker))
                return
            waiting = [i for i in tracker.raised if i not in answered]
            if not waiting:
                continue
            pending = await _pending(sessions, session_id, waiting)
            if on_interrupt is None:
                yield tracker.result(session_id, text="", interrupts=pending)
                return
            for interrupt in pending:
                answered.add(interrupt.interrupt_id)
                await _resolve(sessions, session_id, interrupt, await _reply(on_interrupt, interrupt))
    finally:
        await events.aclose()


async def _send(
    sessions: AgentSessionClient, session_id: str, text: str, settings: Mapping[str, Any] | None
) -> tuple[TurnTracker, int]:
    """Start the session with `text`, or send it to the existing one; where to follow from."""
    from sessionflow.temporal.client._client import SessionExistsError

    after = await _latest_offset(sessions, session_id)
    if after is None:
        try:
            await sessions.start_session(session_id, text, settings=settings)
            # A new session's first turn is the start message's.
            return TurnTracker(message_id=None), 0
        except SessionExistsError:
            after = await _latest_offset(sessions, session_id) or 0
    message_id = f"turn-{uuid.uuid4().hex}"
    if not await sessions.send_user_message(session_id, text, settings=settings, message_id=message_id):
        raise SessionStoppedError(f"session {session_id!r} is stopped: it takes no more messages")
    return TurnTracker(message_id=message_id), after


async def _latest_offset(sessions: AgentSessionClient, session_id: str) -> int | None:
    """The session's newest event offset; None when there is no such session."""
    try:
        return await sessions.latest_event_offset(session_id)
    except RPCError as error:
        if error.status is RPCStatusCode.NOT_FOUND:
            return None
        raise


async def _next(
    events: AsyncGenerator[AgentEvent], deadline: float | None, session_id: str, timeout: float | None
) -> AgentEvent | None:
    try:
        if deadline is None:
            return await anext(events)
        remaining = max(0.0, deadline - asyncio.get_running_loop().time())
        return await asyncio.wait_for(anext(events), remaining)
    except StopAsyncIteration:
        return None
    except TimeoutError:
        raise TimeoutError(
            f"the turn of session {session_id!r} did not end within {timeout} s; it goes on in the session"
        ) from None


async def _pending(sessions: AgentSessionClient, session_id: str, ids: list[str]) -> list[AgentInterrupt]:
    snapshot = await sessions.get_agent_snapshot(session_id)
    return [i for i in snapshot.pending_interrupts if i.interrupt_id in ids]


async def _reply(on_interrupt: OnInterrupt, interrupt: AgentInterrupt) -> InterruptReply:
    reply = on_interrupt(interrupt)
    if inspect.isawaitable(reply):
        reply = await reply
    return reply


_ANSWERED_BY = "on_interrupt (run_turn)"
"""Who `run_turn`'s callback answers as, in the approval record."""


async def _resolve(
    sessions: AgentSessionClient, session_id: str, interrupt: AgentInterrupt, reply: InterruptReply
) -> None:
    # False from the session: someone else answered it first, or its deadline passed; the
    # events say what happened next.
    if isinstance(reply, Rejection):
        await sessions.resolve_interrupt(
            session_id,
            interrupt.interrupt_id,
            approved=False,
            rejection_message=reply.message or None,
            digest=interrupt.digest,
            answered_by=_ANSWERED_BY,
        )
    elif isinstance(reply, bool):
        # The digest of what on_interrupt was shown: a rewrite since then is refused.
        await sessions.resolve_interrupt(
            session_id,
            interrupt.interrupt_id,
            approved=reply,
            digest=interrupt.digest,
            answered_by=_ANSWERED_BY,
        )
    elif isinstance(reply, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        if interrupt.kind != "question":
            raise UserError(
                f"on_interrupt answered {interrupt.tool_name!r} with text, but it asks for an approval: "
                "return True, False or Rejection(message=...)"
            )
        await sessions.resolve_interrupt(
            session_id,
            interrupt.interrupt_id,
            approved=True,
            answer=reply,
            digest=interrupt.digest,
            answered_by=_ANSWERED_BY,
        )
    else:
        raise UserError(
            f"on_interrupt returned {type(reply).__name__}: return True, False, an answer (str) or a Rejection"
        )


async def _answer_text(sessions: AgentSessionClient, session_id: str, tracker: TurnTracker) -> str:
    """The text of the turn's last assistant message, whole: a body kept in the store is read."""
    assert tracker.turn_id is not None
    after = max(0, (tracker.first_sequence or 1) - 1)
    last = None
    next_after: int | None = after
    while next_after is not None:
        page = await sessions.list_agent_messages(session_id, after=next_after, limit=200)
        for stored in page.messages:
            if stored.turn_id == tracker.turn_id and stored.message.role is MessageRole.ASSISTANT:
                last = stored
        next_after = page.next_after
    if last is None:
        return ""
    if last.message.body is not None:
        last = await sessions.get_message(session_id, last.sequence)
    return last.message.text or ""
