"""Pydantic AI's own message history, where a history processor made it differ from the transcript.

In a plain multi-turn app, the history is what each run leaves in ``result.all_messages()``,
handed to the next ``agent.run(message_history=...)``. A history processor (`ProcessHistory`,
a ``before_model_request`` hook that rewrites ``ctx.messages``) replaces that history before
each request: it summarizes, trims or redacts, and the next request and the next run start
from what it left. A session stores each turn's messages as they were made (its transcript
is append-only), so once a processor has rewritten the history, the stored messages no
longer are the framework's history.

From that step on, the framework's history travels with the session: in the run state
between the steps of a turn and in the turn's carry between turns (by reference when
large), with the last stored message it accounts for (`CarriedHistory.through`). Each model
step hands Pydantic AI that history plus the messages stored since, so a processor sees,
step by step and turn by turn, what it sees in the plain run. An agent whose history no
processor rewrites carries nothing: its history is the stored messages (`extends`).

The system prompt is the one part of a plain history that stored messages never hold
(a user's message is stored as it arrives). A plain run puts it at the head of the
conversation's first request once, and each later run re-renders only its dynamic parts
(``@agent.system_prompt(dynamic=True)``). So the parts the session's first request made
travel too (`system_prompt_of`), and every later step puts them back at the head of the
history (`with_system_prompt`) instead of rendering the system prompt again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from pydantic_ai.capabilities import CapabilityOrdering, ReinjectSystemPrompt
from pydantic_ai.messages import ModelMessage, ModelRequest, SystemPromptPart, repair_messages

from sessionflow_pydantic_ai._messages import dump_messages, load_messages

__all__ = ["CarriedHistory", "SystemPromptFirst", "extends", "system_prompt_of", "with_system_prompt"]


@dataclass(frozen=True)
class CarriedHistory:
    """The framework's history after a turn, and the stored messages it accounts for."""

    messages: list[ModelMessage]
    through: int
    """The sequence of the last stored message this history includes (or stands for)."""

    def to_json(self) -> dict[str, Any]:
        return {"through": self.through, "messages": dump_messages(self.messages)}

    @staticmethod
    def from_json(raw: Any) -> CarriedHistory | None:
        if not isinstance(raw, dict):
            return None
        data = cast(dict[str, Any], raw)
        return CarriedHistory(load_messages(cast(list[Any], data["messages"])), int(data["through"]))


@dataclass
class SystemPromptFirst(ReinjectSystemPrompt[Any]):
    """`ReinjectSystemPrompt`, before every other ``before_model_request`` hook.

    Stored messages never carry the agent's system prompt; a plain run's history has it at
    its head from the first request on, so its history processors see it there. Outermost,
    the system prompt is back in the history before any processor runs.
    """

    def get_ordering(self) -> CapabilityOrdering | None:
        return CapabilityOrdering(position="outermost")

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None


def extends(
    before: Sequence[ModelMessage], after: Sequence[ModelMessage], *, prompt_apart: bool = False
) -> bool:
    """Whether the history a step ended with (``after``) is the one it started from
    (``before``, as handed to the run) with new messages after it: nothing rewrote it.

    Pydantic AI itself cleans a history it is handed (``repair_messages``: adjacent requests
    merge, dangling calls get results), adds the system prompt at the head of the first
    request (`SystemPromptFirst`), and sends a trailing request anew, with its instructions
    and run filled in: none of this is a rewrite, since a step rebuilds it from the same
    stored messages. Anything else (a message dropped, replaced, changed in place or
    inserted) is. ``prompt_apart``: the last message of ``before`` was given as the run's
    prompt, so it was not cleaned with the rest.
    """
    head = list(before[:-1]) if prompt_apart else list(before)
    expected = dump_messages(repair_messages(head, repair_last_response=False))
    if prompt_apart:
        expected += dump_messages(list(before[-1:]))
    if len(after) < len(expected):
        return False
    got = dump_messages(list(after[: len(expected)]))
    first_request = next((i for i, m in enumerate(expected) if m.get("kind") == "request"), None)
    for index, (want, have) in enumerate(zip(expected, got, strict=True)):
        if index == first_request:
            # The system prompt travels on its own (`system_prompt_of`), dynamic parts re-rendered.
            want, have = _without_system_prompt(want), _without_system_prompt(have)
        if index == len(expected) - 1 and want.get("kind") == "request":
            # The request a step resumes (or makes of the turn's prompt) is sent as a new one:
            # only what its parts say is the history's.
            if _said(want) != _said(have):
                return False
        elif want != have:
            return False
    return True


def _said(message: dict[str, Any]) -> list[Any]:
    return [{k: v for k, v in p.items() if k != "timestamp"} for p in _parts(_without_system_prompt(message))]


def _parts(message: dict[str, Any]) -> list[Any]:
    return cast(list[Any], message.get("parts") or [])


def _without_system_prompt(message: dict[str, Any]) -> dict[str, Any]:
    return {**message, "parts": [p for p in _parts(message) if p.get("part_kind") != "system-prompt"]}


def system_prompt_of(messages: Sequence[ModelMessage]) -> list[SystemPromptPart] | None:
    """The system prompt at the head of the history's first request; None when it has none."""
    first = next((m for m in messages if isinstance(m, ModelRequest)), None)
    if first is None:
        return None
    parts: list[SystemPromptPart] = []
    for part in first.parts:
        if not isinstance(part, SystemPromptPart):
            break
        parts.append(part)
    return parts or None


def with_system_prompt(messages: list[ModelMessage], parts: Sequence[SystemPromptPart]) -> list[ModelMessage]:
    """``messages`` with ``parts`` at the head of the first request, unless the history holds
    a system prompt already (one it started from, say), as `ReinjectSystemPrompt` decides."""
    if any(isinstance(p, SystemPromptPart) for m in messages if isinstance(m, ModelRequest) for p in m.parts):
        return messages
    for index, message in enumerate(messages):
        if isinstance(message, ModelRequest):
            return [
                *messages[:index],
                replace(message, parts=[*parts, *message.parts]),
                *messages[index + 1 :],
            ]
    return messages
