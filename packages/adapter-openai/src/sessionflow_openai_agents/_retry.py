"""An output validator's retry: the refused answer and its prompt start a new run in a step of its own.

The SDK has no retry of a finished run, so a refused answer ends the model step with
`ContinueRequested` and a *restart* run state: the finished run's input list (the turn's
input, what the run produced, the refused answer) plus the prompt as a user item, and the
agent the run ended on, with the run context and the tool state as they were then (the
run state's, `_state`). The next model step starts a fresh `Runner.run_streamed` there, so
the model sees the refused answer and the prompt, as in the builtin runner.

The turn's stored messages come from the final run; whatever its input holds beyond the
turn's input (the earlier runs' items and the prompts) is stored before them, a prompt with
role ``system`` (the runner wrote it, not the person) and the wire item the model saw.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from agents import RunResultStreaming, TResponseInputItem

from sessionflow import MessageRole, SessionStateError
from sessionflow.kit import FrameworkMessage, OutputValidator
from sessionflow_openai_agents._items import history_message

__all__ = ["Restart", "input_item_message", "read_restart", "restart_state", "retry_prompt"]

RESTART_FORMAT = "sessionflow-openai-agents/restart-1"


@dataclass(frozen=True)
class Restart:
    """A new run of ``agent`` (by name) on ``input``."""

    agent: str
    input: list[TResponseInputItem]
    context: Any = None
    """The run context as JSON values (`ContextCodec.dump`)."""
    tool_state: dict[str, Any] = field(default_factory=lambda: cast(dict[str, Any], {}))
    steered: tuple[str, ...] = ()
    """The digests of the steered messages in ``input`` (`_steered`): the user's, not prompts."""


def retry_prompt(validator: OutputValidator | None, final_output: Any) -> str | None:
    """The validator's prompt for this answer, or None when it accepts it (or there is none)."""
    if validator is None:
        return None
    text = final_output if isinstance(final_output, str) else json.dumps(final_output, default=str)
    return validator(text)


def restart_state(
    result: RunResultStreaming,
    prompt: str,
    context: Any,
    tool_state: Mapping[str, Any],
    steered: Sequence[str] = (),
) -> str:
    items = [*result.to_input_list(), cast(TResponseInputItem, {"role": "user", "content": prompt})]
    envelope = {
        "format": RESTART_FORMAT,
        "agent": result.last_agent.name,
        "input": items,
        "context": context,
        "tool_state": dict(tool_state),
    }
    if steered:
        envelope["steered"] = list(steered)
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False, default=str)


def read_restart(text: str) -> Restart | None:
    """The restart a run state asks for, or None for an SDK run state."""
    if '"' + RESTART_FORMAT + '"' not in text[:200]:
        return None
    try:
        envelope = cast(dict[str, Any], json.loads(text))
    except ValueError:
        raise SessionStateError("the framework run state is not JSON") from None
    return Restart(
        agent=str(envelope["agent"]),
        input=cast(list[TResponseInputItem], envelope["input"]),
        context=envelope.get("context"),
        tool_state=cast(dict[str, Any], envelope.get("tool_state") or {}),
        steered=tuple(cast(list[str], envelope.get("steered") or [])),
    )


def input_item_message(item: dict[str, Any]) -> FrameworkMessage:
    """A stored message for an item of a run's input that no stored message holds: an earlier
    run's item (a user item there is a retry prompt, stored with role ``system``), or what a
    handoff input filter put in the history (`_history`)."""
    return history_message(item, user_role=MessageRole.SYSTEM)
