"""`-p --output-format json|stream-json`: one message, its turn as JSON for scripts.

`json` prints one object when the turn ends; `stream-json` prints one object per line as the
turn goes (the session's events, text deltas included), then the same result object. The
turn is followed with `AgentSessionClient.stream_turn`, so the result is sessionflow's
`TurnResult`: the whole answer, how the turn ended, its usage and its tool calls.

The result object (Claude Code's names where it has them):

    {"type": "result", "session_id": ..., "turn_id": ..., "status": "completed",
     "is_error": false, "result": "<the answer>", "error": null, "stop_reason": null,
     "usage": {"requests": 1, "input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
     "tool_calls": [{"tool_call_id": ..., "tool_name": ..., "effect": ..., "status": ...,
                     "error": ...}],
     "duration_ms": 1234, "continue_with": "sessionflow -r <id> ..."}

Before it, `stream-json` prints `{"type": "session", "session_id": ..., "flow_type": ...,
"resumed": ...}` and each event of the turn as `{"type": <event type>, "turn_id": ...,
"step": ..., "attempt": ..., "offset": ..., "data": {...}}` (`offset` is null for live
events: text and reasoning deltas, restarts). Notes (approvals refused or given) go to
standard error, as in the text format.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Collection
from dataclasses import asdict
from typing import Any, Literal

from sessionflow import AgentEvent, AgentInterrupt, Rejection, TurnResult, TurnStatus
from sessionflow_cli._ask_user import ASK_USER, DECLINED_MESSAGE
from sessionflow_cli._command_host import Runtime
from sessionflow_cli._errors import EXIT_FAILURE, EXIT_OK
from sessionflow_cli._sessions import check_resumable, new_session_id
from sessionflow_cli.chat._oneshot import ApproveRules, refuse_waiting
from sessionflow_cli.chat._view import ChatView

__all__ = ["StructuredFormat", "event_object", "result_object", "run_one_shot_structured"]

StructuredFormat = Literal["json", "stream-json"]


def event_object(event: AgentEvent) -> dict[str, Any]:
    """One line of `stream-json`: an event of the turn."""
    return {
        "type": event.type.value,
        "turn_id": event.turn_id,
        "step": event.step_execution_id,
        "attempt": event.attempt,
        "offset": event.offset,
        "data": event.data,
    }


def result_object(result: TurnResult, *, duration_ms: int, continue_with: str) -> dict[str, Any]:
    """The `json` output, and the last line of `stream-json`."""
    usage = result.usage
    return {
        "type": "result",
        "session_id": result.session_id,
        "turn_id": result.turn_id,
        "status": result.status.value,
        "is_error": result.status is not TurnStatus.COMPLETED,
        "result": result.text,
        "error": result.error,
        "stop_reason": result.stop_reason,
        "usage": {
            "requests": usage.requests,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "total_tokens": usage.total_tokens,
        },
        "tool_calls": [asdict(call) for call in result.tool_calls],
        "duration_ms": duration_ms,
        "continue_with": continue_with,
    }


class _Answers:
    """`--approve`'s rules as a `stream_turn` `on_interrupt` callback."""

    def __init__(self, approve: Collection[str], view: ChatView) -> None:
        self.rules = ApproveRules(approve, view)
        self.view = view

    async def __call__(self, interrupt: AgentInterrupt) -> bool | Rejection:
        if interrupt.kind == "question" or interrupt.tool_name == ASK_USER:
            self.view.line("question", interrupt.question or interrupt.tool_name, "magenta")
            self.view.note(f"declined: {DECLINED_MESSAGE}")
            return Rejection(message=DECLINED_MESSAGE)
        self.view.approval(interrupt.tool_name, interrupt.arguments, interrupt.previous_arguments)
        decision = await self.rules.decide(interrupt)
        if decision.approved:
            return True
        return Rejection(message=decision.reason or "")


async def run_one_shot_structured(
    runtime: Runtime,
    view: ChatView,
    text: str,
    output_format: StructuredFormat,
    *,
    approve: Collection[str],
    resume: str | None,
    resume_hint: Callable[[str], str],
) -> int:
    """Send `text`, print the turn as JSON; 1 unless the turn completed."""
    began = time.monotonic()
    sessions = runtime.sessions
    if resume is not None:
        await check_resumable(sessions, resume)
        await refuse_waiting(runtime, resume, resume_hint)
        session_id = resume
    else:
        session_id = new_session_id(runtime.spec.name)
        # Started here, with the command's environment (where and by whom), before its
        # first message: `stream_turn` then sends the message to it.
        await sessions.start_session(session_id, None, environment=runtime.environment.as_record())
    view.note(f"session {session_id}")
    link = runtime.engine.session_link(session_id)
    if link is not None:
        view.note(f"Temporal Web UI: {link}")
    stream = output_format == "stream-json"

    def emit(value: dict[str, Any]) -> None:
        view.out.file.write(json.dumps(value, ensure_ascii=False, default=str) + "\n")
        view.out.file.flush()

    if stream:
        emit(
            {
                "type": "session",
                "session_id": session_id,
                "flow_type": runtime.flow_type,
                "resumed": resume is not None,
            }
        )

    async def follow() -> TurnResult:
        final: TurnResult | None = None
        async for item in sessions.stream_turn(session_id, text, on_interrupt=_Answers(approve, view)):
            if isinstance(item, TurnResult):
                final = item
            elif stream:
                emit(event_object(item))
        assert final is not None  # the stream always ends with the result
        return final

    hint = resume_hint(session_id)
    try:
        result = await runtime.watch(follow())
    except asyncio.CancelledError:  # Ctrl-C: the turn goes on in the session
        view.note(f"The session goes on; continue it with: {hint}")
        raise
    emit(result_object(result, duration_ms=int((time.monotonic() - began) * 1000), continue_with=hint))
    if not result.ok:
        view.line(f"turn {result.status.value}", result.error or result.stop_reason or "", "red")
    view.note(f"Continue this session with: {hint}")
    return EXIT_OK if result.ok else EXIT_FAILURE
