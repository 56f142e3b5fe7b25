"""Follow one turn: show its events as they come and answer its approvals and questions."""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import socket
from collections import deque
from collections.abc import Coroutine
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, TypeVar

from sessionflow import (
    AgentEvent,
    AgentEventType,
    AgentInterrupt,
    AgentSessionClient,
    AgentToolCall,
    LiveText,
    MessageRole,
)
from sessionflow_cli._ask_user import ASK_USER, DECLINED_MESSAGE, Question, parse_question
from sessionflow_cli.chat._pump import EventPump
from sessionflow_cli.chat._view import ChatView

_SHELL_TOOL = "run_shell_command"
"""`sessionflow_local_tools.SHELL_TOOL`, named here so the chat runs without that package."""

__all__ = ["Decision", "Responder", "TurnFollower", "TurnResult"]

T = AgentEventType
A = TypeVar("A")
_SETTLE = 0.2
"""Seconds without events after which durable events are shown."""


@dataclass
class _Order:
    """What arrived and what waits, for one followed turn."""

    turn_id: str | None = None
    live: LiveText = field(default_factory=LiveText)
    ready: deque[AgentEvent] = field(default_factory=lambda: deque[AgentEvent]())
    held: list[AgentEvent] = field(default_factory=lambda: list[AgentEvent]())
    unfinished: set[str] = field(default_factory=lambda: set[str]())
    deferring_step: str | None = None
    started: set[tuple[str, int]] = field(default_factory=lambda: set[tuple[str, int]]())
    calls: dict[str, AgentToolCall] = field(default_factory=lambda: dict[str, AgentToolCall]())
    rejections: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    """Rejection messages by tool call ID, from `interrupt_resolved` events."""
    interrupt_calls: dict[str, str] = field(default_factory=lambda: dict[str, str]())

    def holds(self, event: AgentEvent) -> bool:
        """A delta of a later model call while tool calls are not seen finishing yet."""
        return bool(self.unfinished) and event.step_execution_id != self.deferring_step

    def place(self, delta: AgentEvent) -> None:
        """Queue a delta before the waiting durable events of its own model call, else last."""
        for index, waiting in enumerate(self.ready):
            if waiting.step_execution_id == delta.step_execution_id and not waiting.type.is_delta:
                self.ready.insert(index, delta)
                return
        self.ready.append(delta)

    def arrived(self, event: AgentEvent) -> None:
        self.ready.append(event)
        tool_call_id = str(event.data.get("tool_call_id"))
        if event.type is T.TOOL_CALL_DEFERRED:
            self.unfinished.add(tool_call_id)
            self.deferring_step = event.step_execution_id
        elif event.type is T.INTERRUPT_RAISED:
            self.interrupt_calls[str(event.data.get("interrupt_id"))] = tool_call_id
        elif event.type is T.INTERRUPT_RESOLVED:
            call = self.interrupt_calls.get(str(event.data.get("interrupt_id")))
            message = event.data.get("rejection_message")
            if call is not None and isinstance(message, str) and message:
                self.rejections[call] = message
        elif event.type is T.TOOL_CALL_FINISHED:
            self.unfinished.discard(tool_call_id)
        if event.type in (T.TURN_COMPLETED, T.TURN_FAILED):
            self.unfinished.clear()
        if not self.unfinished and self.held:
            self.ready.extend(self.held)
            self.held.clear()


@dataclass(frozen=True, kw_only=True)
class Decision:
    """An answer to an approval. `approved` None means nobody decided (the turn is ending)."""

    approved: bool | None
    reason: str | None = None


class Responder(Protocol):
    """Who answers approvals and questions: the person at the terminal, or a one-shot rule."""

    async def decide(self, interrupt: AgentInterrupt) -> Decision: ...

    async def ask(self, interrupt: AgentInterrupt, question: Question) -> str | Literal[False] | None:
        """The answer, None to decline, or False when nobody decided (the turn is ending)."""
        ...


@dataclass(frozen=True, kw_only=True)
class TurnResult:
    turn_id: str
    outcome: Literal["completed", "failed", "cancelled"]
    error: str | None = None
    answer: str = ""


@dataclass
class TurnFollower:
    """Reads the session's events from `pump` until the turn it follows ends."""

    sessions: AgentSessionClient
    session_id: str
    pump: EventPump
    view: ChatView
    responder: Responder
    handled: set[str] = field(default_factory=lambda: set[str]())
    shell_note: str | None = None
    """Shown under a shell command's approval: whether the command runs sandboxed."""
    shell_tools: frozenset[str] = frozenset({_SHELL_TOOL})
    """The tools whose approval shows `shell_note`: `run_shell_command` and the framework's
    twins of it (Claude Code's `Bash`), which run in the same sandbox."""

    async def follow(self, turn_id: str | None = None) -> TurnResult:
        """Follow `turn_id`, or the next turn that starts when it is None.

        Live deltas travel beside the durable events, so either may overtake the other.
        Durable events wait until the stream is quiet for a moment; a delta that arrives
        meanwhile goes before the waiting events of its own model call, so text written
        before an approval shows before it. A delta of a model call that follows tool calls
        not yet seen finishing waits for them.
        """
        later: list[AgentEvent] = []
        try:
            return await self._follow(turn_id, later)
        finally:
            # Events of a later turn read while this one settled (a message typed during it
            # may start one at once) are left for the follower of that turn.
            self.pump.put_back(later)

    async def _follow(self, turn_id: str | None, later: list[AgentEvent]) -> TurnResult:
        order = _Order()
        # The quiet moment only lets streamed text go before the durable events of its model
        # call; a view that does not stream (`-p`) shows the events as they come.
        settle = _SETTLE if self.view.stream else 0.0
        if turn_id is not None:
            await self.answer_pending(turn_id)
        self.view.thinking()
        while True:
            event = await self._next(settle if order.ready else None)
            if event is None:
                while order.ready:
                    result = await self._handle(order.ready.popleft(), order)
                    if result is not None:
                        return result
                continue
            if turn_id is None:
                if event.type is T.TURN_STARTED:
                    turn_id = event.turn_id
                    order.turn_id = turn_id
                continue
            if event.turn_id != turn_id:
                if _turn_number(event.turn_id) > _turn_number(turn_id):
                    later.append(event)
                continue
            if event.type.is_delta or event.type is T.ATTEMPT_RESTARTED:
                if order.holds(event):
                    order.held.append(event)
                elif not order.ready:
                    self._delta(event, order)
                else:
                    order.place(event)
            else:
                await self._remember(event, order)
                order.arrived(event)

    async def _next(self, timeout: float | None) -> AgentEvent | None:
        if timeout is None:
            return await self.pump.get()
        try:
            return await asyncio.wait_for(self.pump.get(), timeout)
        except TimeoutError:
            return None

    async def _remember(self, event: AgentEvent, order: _Order) -> None:
        """Read what a durable event refers to now: the snapshot forgets a turn's calls when it ends."""
        tool_call_id = str(event.data.get("tool_call_id"))
        if event.type is T.TOOL_CALL_DEFERRED:
            await self._call(order.calls, tool_call_id)
        elif event.type is T.TOOL_CALL_FINISHED and event.data.get("status") != "succeeded":
            snapshot = await self.sessions.get_agent_snapshot(self.session_id)
            record = next((r for r in snapshot.tool_calls if r.tool_call_id == tool_call_id), None)
            if record is not None:
                order.calls[tool_call_id] = record

    def _delta(self, event: AgentEvent, order: _Order) -> None:
        order.live.apply(event)
        self.view.show_text(event.turn_id, order.live.text(event.turn_id))

    async def _handle(self, event: AgentEvent, order: _Order) -> TurnResult | None:
        turn_id = event.turn_id
        if event.type.is_delta or event.type in (T.ATTEMPT_RESTARTED, T.MODEL_STEP_COMPLETED):
            # A step's recorded text shows a turn whose deltas never reach this process.
            self._delta(event, order)
        elif event.type is T.TOOL_CALL_STARTED:
            key = (str(event.data.get("tool_call_id")), event.attempt)
            if key in order.started:
                return None
            order.started.add(key)
            record = await self._call(order.calls, key[0])
            name = str(event.data.get("tool_name", "?"))
            if event.attempt > 1:
                self.view.line("tool", f"{name} again (attempt {event.attempt})", "yellow")
            else:
                self.view.tool_started(name, record.arguments if record is not None else "")
            self.view.thinking()
        elif event.type is T.TOOL_CALL_FINISHED:
            self._finished(event.data, order)
            self.view.thinking()
        elif event.type is T.INTERRUPT_RAISED:
            await self.answer_pending(turn_id)
            self.view.thinking()
        elif event.type is T.TURN_COMPLETED:
            self.view.quiet()
            answer = await self._final_text(turn_id)
            if (
                self.view.stream
                and answer
                and not self.view.streamed(turn_id).rstrip().endswith(answer.strip())
            ):
                self.view.answer(answer)
            self.view.end_line()
            return TurnResult(turn_id=turn_id, outcome="completed", answer=answer)
        elif event.type is T.TURN_FAILED:
            self.view.quiet()
            self.view.end_line()
            error = str(event.data.get("error", "unknown error"))
            if event.data.get("reason") == "cancelled":
                self.view.line("cancelled", "the turn was cancelled", "yellow")
                return TurnResult(turn_id=turn_id, outcome="cancelled", error=error)
            self.view.line("turn failed", error, "red")
            return TurnResult(turn_id=turn_id, outcome="failed", error=error)
        return None

    async def answer_pending(self, turn_id: str) -> None:
        """Answer every approval of the turn that waits and was not answered here yet."""
        snapshot = await self.sessions.get_agent_snapshot(self.session_id)
        for interrupt in snapshot.pending_interrupts:
            if interrupt.turn_id != turn_id or interrupt.interrupt_id in self.handled:
                continue
            self.handled.add(interrupt.interrupt_id)
            self.view.quiet()
            if interrupt.kind == "question" or interrupt.tool_name == ASK_USER:
                await self._question(interrupt)
            else:
                await self._approval(interrupt)

    async def _approval(self, interrupt: AgentInterrupt) -> None:
        self.view.approval(interrupt.tool_name, interrupt.arguments, interrupt.previous_arguments)
        if self.shell_note is not None and interrupt.tool_name in self.shell_tools:
            self.view.note(self.shell_note)
        decision = await self._unless_answered_elsewhere(interrupt, self.responder.decide(interrupt))
        if decision is False or decision.approved is None:
            return
        resolved = await self.sessions.resolve_interrupt(
            self.session_id,
            interrupt.interrupt_id,
            approved=decision.approved,
            rejection_message=decision.reason,
            digest=interrupt.digest,
            answered_by=answered_by(),
        )
        if not resolved:
            self.view.note("(the approval is no longer pending)")

    async def _question(self, interrupt: AgentInterrupt) -> None:
        question = parse_question(interrupt.arguments)
        if interrupt.question:
            # The session's question text: what the framework asked, whatever its arguments.
            question = replace(question, text=interrupt.question)
        self.view.question(question.text, list(question.choices))
        reply = await self._unless_answered_elsewhere(interrupt, self.responder.ask(interrupt, question))
        if reply is False:
            return
        if reply is None:
            resolved = await self.sessions.resolve_interrupt(
                self.session_id,
                interrupt.interrupt_id,
                approved=False,
                rejection_message=DECLINED_MESSAGE,
                digest=interrupt.digest,
                answered_by=answered_by(),
            )
        else:
            resolved = await self.sessions.resolve_interrupt(
                self.session_id,
                interrupt.interrupt_id,
                approved=True,
                answer=question.answer_for(reply),
                digest=interrupt.digest,
                answered_by=answered_by(),
            )
        if not resolved:
            self.view.note("(the question is no longer pending)")

    async def _unless_answered_elsewhere(
        self, interrupt: AgentInterrupt, answering: Coroutine[Any, Any, A]
    ) -> A | Literal[False]:
        """The answer given here, or False when someone answered elsewhere first.

        An approval can be given in the web console, another terminal or the API while this
        terminal still asks. The prompt then stops asking and says what was decided, and the
        turn goes on here as it does there.
        """
        here = asyncio.ensure_future(answering)
        elsewhere = self.pump.interrupt_resolved(interrupt.interrupt_id)
        try:
            await asyncio.wait({here, elsewhere}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not here.done():
                here.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await here
            elsewhere.cancel()
        if here.done() and not here.cancelled():
            return here.result()
        event = elsewhere.result()
        self.view.end_line()
        self.view.note(f"(answered elsewhere: {_decided(event.data)})", style="yellow")
        return False

    async def _call(self, calls: dict[str, AgentToolCall], tool_call_id: str) -> AgentToolCall | None:
        if tool_call_id not in calls:
            snapshot = await self.sessions.get_agent_snapshot(self.session_id)
            calls.update({record.tool_call_id: record for record in snapshot.tool_calls})
        return calls.get(tool_call_id)

    def _finished(self, data: dict[str, object], order: _Order) -> None:
        name = str(data.get("tool_name", "?"))
        status = str(data.get("status", "?"))
        detail: str | None = None
        if status != "succeeded":
            tool_call_id = str(data.get("tool_call_id"))
            record = order.calls.get(tool_call_id)
            detail = order.rejections.get(tool_call_id)
            if detail is None and record is not None:
                detail = record.rejection_message or record.error
        self.view.tool_finished(name, status, detail)

    async def _final_text(self, turn_id: str) -> str:
        """The text of the turn's last assistant message, as the session stored it."""
        snapshot = await self.sessions.get_agent_snapshot(self.session_id)
        for stored in reversed(snapshot.messages):
            if stored.turn_id != turn_id:
                continue
            if stored.message.role is MessageRole.ASSISTANT and stored.message.text:
                return stored.message.text
        return ""


def _decided(data: dict[str, object]) -> str:
    """How an `interrupt_resolved` event's answer reads at the terminal."""
    if data.get("expired"):
        return "the deadline passed"
    if data.get("approved"):
        return "approved"
    reason = data.get("rejection_message")
    return f"rejected: {reason}" if isinstance(reason, str) and reason else "rejected"


def answered_by() -> str:
    """Who answers from this terminal, for the session's approval record."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no login name: a container without a passwd entry
        user = "unknown"
    return f"{user}@{socket.gethostname()} (cli)"


def _turn_number(turn_id: str) -> int:
    """The number of ``turn-<n>``; 0 for anything else."""
    number = turn_id.removeprefix("turn-")
    return int(number) if number.isdigit() else 0
