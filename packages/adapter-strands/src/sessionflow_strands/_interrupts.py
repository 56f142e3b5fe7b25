"""Strands' interrupts as the session's questions, answered the way Strands' own resume answers them.

In a plain run, ``event.interrupt(name, reason=...)`` in a ``BeforeToolCallEvent`` hook, or
``tool_context.interrupt(...)`` in a tool, stops the agent (``stop_reason == "interrupt"``);
the caller invokes it again with ``[{"interruptResponse": {"interruptId": ..., "response":
...}}]``, and Strands runs that tool call again (hooks and tool), where the same
``interrupt(name)`` now returns the response. The model is not called in between, and the
calls of the same response that finished keep their results.

Here a tool step whose run stops at an interrupt returns it as its update (`paused`); the
next model step calls no model: it defers one *interrupt call* per waiting call, a question
named after the real tool with the real call's arguments, so a person sees what the
interrupt gates, and the session's floor (the tool's own policy) applies to it. The
question's tool step runs the waiting call again through Strands' executor with the answer
as the interrupt's response (`responses`): the hook or the tool reads it as it reads
Strands' resume. A declined question resumes nothing: the call never runs, and its result
is the session's account of the refusal, as an error result. A run that stops at another
interrupt (a second hook, a tool that asks twice) asks again, with every earlier answer kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from strands.interrupt import Interrupt

from sessionflow.kit import DeferredToolCall, TurnAborted

__all__ = [
    "HeldInterrupt",
    "interrupt_call",
    "paused_interrupt",
    "paused_update",
    "question_text",
    "responses",
]

PAUSED_KEY = "interrupts"
"""The key of a tool step's update that stopped at interrupts: ``[{id, name, reason}]``."""


@dataclass(frozen=True)
class HeldInterrupt:
    """One interrupt call, as the run state keeps it."""

    tool_call_id: str
    """The interrupt call's own ID (a call no model proposed)."""
    waiting_call: str
    """The real call whose run stopped at the interrupt."""
    interrupt_id: str
    name: str
    reason: Any = None
    answered: dict[str, dict[str, Any]] = field(default_factory=lambda: cast(dict[str, dict[str, Any]], {}))
    """The waiting call's earlier interrupts and their responses, by interrupt ID: a resumed
    run asks them again, and each must get its answer back."""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.tool_call_id,
            "waiting": self.waiting_call,
            "interrupt": self.interrupt_id,
            "name": self.name,
            "reason": self.reason,
            "answered": self.answered,
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> HeldInterrupt:
        return cls(
            tool_call_id=str(raw["id"]),
            waiting_call=str(raw["waiting"]),
            interrupt_id=str(raw["interrupt"]),
            name=str(raw["name"]),
            reason=raw.get("reason"),
            answered=dict(raw.get("answered") or {}),
        )

    def with_answer(self, answer: str) -> dict[str, dict[str, Any]]:
        """Every answer so far, this interrupt's included."""
        return {
            **self.answered,
            self.interrupt_id: {"name": self.name, "reason": self.reason, "response": answer},
        }


def paused_interrupt(update: Mapping[str, Any] | None, tool_call_id: str) -> dict[str, Any] | None:
    """The one interrupt a tool step's update stopped at; None for a finished call.

    Raises:
        TurnAborted: The run stopped at more than one interrupt at once (two hooks of one
            call): the session resumes one interrupt per call at a time.
    """
    if update is None or PAUSED_KEY not in update:
        return None
    interrupts = cast(list[dict[str, Any]], update[PAUSED_KEY])
    if len(interrupts) != 1:
        names = ", ".join(repr(i.get("name")) for i in interrupts)
        raise TurnAborted(
            f"tool call {tool_call_id!r} stopped at {len(interrupts)} Strands interrupts at once ({names}); "
            "sessionflow asks one interrupt per tool call at a time"
        )
    return interrupts[0]


def question_text(name: str, reason: Any) -> str:
    """What the person is asked: the reason's text, else the interrupt's name and reason as JSON."""
    if isinstance(reason, str) and reason.strip():
        return reason
    if reason is None:
        return f"The agent asks: {name}"
    return f"{name}: {json.dumps(reason, ensure_ascii=False, default=str)}"


def interrupt_call(
    waiting: DeferredToolCall,
    interrupt: Mapping[str, Any],
    *,
    taken: Sequence[str],
    answered: Mapping[str, dict[str, Any]],
) -> tuple[HeldInterrupt, DeferredToolCall]:
    """The question for ``interrupt``, deferred as a call of the waiting call's tool, with its
    arguments and policy; its ID is the waiting call's, numbered past ``taken``."""
    number = 1
    while f"{waiting.tool_call_id}-interrupt-{number}" in taken:
        number += 1
    held = HeldInterrupt(
        tool_call_id=f"{waiting.tool_call_id}-interrupt-{number}",
        waiting_call=waiting.tool_call_id,
        interrupt_id=str(interrupt["id"]),
        name=str(interrupt["name"]),
        reason=interrupt.get("reason"),
        answered=dict(answered),
    )
    call = DeferredToolCall(
        tool_call_id=held.tool_call_id,
        tool_name=waiting.tool_name,
        arguments=waiting.arguments,
        policy=waiting.policy,
        question=question_text(held.name, held.reason),
    )
    return held, call


def responses(answered: Mapping[str, Mapping[str, Any]]) -> dict[str, Interrupt]:
    """Strands' interrupts with their responses, as ``_InterruptState.resume`` leaves them."""
    return {
        interrupt_id: Interrupt(
            id=interrupt_id, name=str(a["name"]), reason=a.get("reason"), response=a.get("response")
        )
        for interrupt_id, a in answered.items()
    }


def paused_update(interrupts: Sequence[Interrupt]) -> dict[str, Any]:
    """A tool step's update for a run stopped at ``interrupts``."""
    return {PAUSED_KEY: [{"id": i.id, "name": i.name, "reason": i.reason} for i in interrupts]}
