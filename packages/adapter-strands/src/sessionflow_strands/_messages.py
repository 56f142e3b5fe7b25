"""Strands messages as the session stores them, and the run state of one turn.

A Strands message (``{"role": "user" | "assistant", "content": [blocks]}``) is plain JSON.
The session stores it as its JSON text, ``{"role": ..., "strands": "<the message as JSON>"}``
(`FrameworkMessage.framework_item`): Temporal's JSON converter sorts the keys of every
object it carries, and Strands sends a tool's JSON result and a call's input to the model
as ``json.dumps`` of them, so a message stored as an object would come back with its keys
in another order and the next turn's request would differ from a plain run's. A user
message made of ``toolResult`` blocks is stored with role ``tool``: Strands sends tool
results as a user message, the session shows who produced it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from sessionflow import MessageRole
from sessionflow.kit import FrameworkMessage

__all__ = [
    "RUN_STATE_VERSION",
    "WRITTEN_BY_KEY",
    "RunState",
    "framework_message",
    "history_messages",
    "load_message",
    "message_text",
    "user_message",
]

WRITTEN_BY_KEY = "sessionflow_role"
"""A message the runner wrote (an output validator's retry prompt) names its stored role here."""

STORED_KEY = "strands"
"""The key of a stored message's JSON text in its `framework_item`."""

RUN_STATE_VERSION = 1
"""The version of `RunState`'s JSON; a run state of another version is refused."""

Message = dict[str, Any]


def user_message(text: str) -> FrameworkMessage:
    """The user message Strands makes of a string prompt (``agent("...")``)."""
    return framework_message({"role": "user", "content": [{"text": text}]})


def framework_message(message: Message) -> FrameworkMessage:
    """One Strands message as the session stores it, with its text for people."""
    content = cast(list[dict[str, Any]], message.get("content") or [])
    if message.get(WRITTEN_BY_KEY) == "system":
        role = MessageRole.SYSTEM
    elif message.get("role") == "assistant":
        role = MessageRole.ASSISTANT
    elif content and all("toolResult" in block for block in content):
        role = MessageRole.TOOL
    else:
        role = MessageRole.USER
    item = {"role": message.get("role"), STORED_KEY: json.dumps(message, ensure_ascii=False)}
    return FrameworkMessage(role=role, framework_item=item, text=message_text(message))


def history_messages(messages: Sequence[Mapping[str, Any]]) -> list[FrameworkMessage]:
    """Strands messages (``agent.messages``) as a history for ``start_session(history=...)``."""
    return [framework_message({"role": m["role"], "content": m["content"]}) for m in messages]


def load_message(item: Any) -> Message:
    """The Strands message a stored item holds: its JSON text, or (a history given to
    ``start_session``) a Strands message object as is."""
    data = cast(dict[str, Any], item)
    stored = data.get(STORED_KEY)
    if isinstance(stored, str):
        return cast(Message, json.loads(stored))
    return data


def message_text(message: Message) -> str:
    """The text of a message: its text blocks, its tool calls and results by name and content."""
    parts: list[str] = []
    for block in cast(list[dict[str, Any]], message.get("content") or []):
        if "text" in block:
            parts.append(str(block["text"]))
        elif "toolUse" in block:
            use = cast(dict[str, Any], block["toolUse"])
            parts.append(f"[tool call {use.get('name')}({json.dumps(use.get('input'), ensure_ascii=False)})]")
        elif "toolResult" in block:
            result = cast(dict[str, Any], block["toolResult"])
            content = cast(list[dict[str, Any]], result.get("content") or [])
            texts = [str(c.get("text", c.get("json", ""))) for c in content]
            parts.append(f"[tool result {result.get('status')}: {' '.join(texts)}]")
    return "\n".join(parts)


@dataclass
class RunState:
    """What one model step hands the next, and its tool steps: the turn's new messages so
    far, the calls it deferred (in the model's order), and `agent.state` at the deferral.

    While calls wait on Strands interrupts (`sessionflow_strands._interrupts`): the updates
    of the calls that finished (``done``, by call ID, their `agent.state` changes already in
    ``agent_state``), and the interrupt calls deferred for the waiting ones (``interrupts``,
    `HeldInterrupt` as JSON). Both are absent from a run state without interrupts.
    """

    messages: list[Message] = field(default_factory=lambda: cast(list[Message], []))
    pending: list[str] = field(default_factory=lambda: cast(list[str], []))
    agent_state: dict[str, Any] = field(default_factory=lambda: cast(dict[str, Any], {}))
    done: dict[str, dict[str, Any]] = field(default_factory=lambda: cast(dict[str, dict[str, Any]], {}))
    interrupts: list[dict[str, Any]] = field(default_factory=lambda: cast(list[dict[str, Any]], []))
    forced: bool = False
    """Structured output was forced (`sessionflow_strands._structured_output`): every later
    model call of the turn is sent the forced tool choice, as Strands' context keeps it."""

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "v": RUN_STATE_VERSION,
            "messages": self.messages,
            "pending": self.pending,
            # The builtin runner's key: `sessionflow.builtin.tool_state(invocation)`
            # reads it, so a spec's handler reads `agent.state` as it reads tool state.
            "state": self.agent_state,
        }
        if self.forced:
            data["forced"] = True
        if self.interrupts:
            data["done"] = self.done
            data["interrupts"] = self.interrupts
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> RunState:
        data = cast(dict[str, Any], json.loads(text))
        if data.get("v") != RUN_STATE_VERSION:
            raise ValueError(f"unsupported Strands run state version {data.get('v')!r}")
        return cls(
            messages=list(data.get("messages") or []),
            pending=list(data.get("pending") or []),
            agent_state=dict(data.get("state") or {}),
            done=dict(data.get("done") or {}),
            interrupts=list(data.get("interrupts") or []),
            forced=bool(data.get("forced", False)),
        )
