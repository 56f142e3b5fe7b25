"""Existing Pydantic AI histories in and out of a session.

In: `history_messages` turns Pydantic AI messages (``result.all_messages()``, or their JSON)
into the stored messages ``start_session(history=...)`` takes, one per Pydantic AI message,
as the session stores a turn's own. Out: `export_history` turns a session's stored
messages back into Pydantic AI messages, for ``agent.run(message_history=...)`` or a file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

from sessionflow import AgentMessage, AgentSnapshot
from sessionflow.kit import FrameworkMessage
from sessionflow_pydantic_ai._messages import framework_messages, load_messages

__all__ = ["conversation_of", "export_history", "export_history_json", "history_messages"]

StoredMessages = AgentSnapshot | Iterable[AgentMessage | FrameworkMessage]
"""A snapshot, `AgentSessionClient.export_messages(...)`, or stored messages of any source."""


def history_messages(messages: Sequence[ModelMessage] | bytes | str) -> list[FrameworkMessage]:
    """Pydantic AI messages (or their JSON, as ``result.all_messages_json()`` writes it) as a
    session's stored messages: pass them as ``start_session(..., history=...)``."""
    if isinstance(messages, bytes | str):
        messages = ModelMessagesTypeAdapter.validate_json(messages)
    return framework_messages(messages, final_text=None)


def export_history(messages: StoredMessages) -> list[ModelMessage]:
    """A session's stored messages as Pydantic AI messages, oldest first.

    Give it ``await sessions.export_messages(session_id)``: every message, whole. A snapshot
    serves only while it holds the whole conversation: one that holds only the newest
    messages, or a message kept by reference (its preview), raises ValueError.
    """
    return load_messages(_items(messages))


def export_history_json(messages: StoredMessages) -> bytes:
    """`export_history` as Pydantic AI's JSON (``ModelMessagesTypeAdapter``)."""
    return ModelMessagesTypeAdapter.dump_json(export_history(messages))


def conversation_of(history: Sequence[ModelMessage], session_id: str) -> str:
    """The conversation a step continues: the history's latest, as ``agent.run`` falls back to.

    A session's own responses name the session, so only a history the session started
    from (`history_messages`) brings another: its conversation goes on, as in plain runs.
    """
    return next((m.conversation_id for m in reversed(history) if m.conversation_id), session_id)


def _items(messages: StoredMessages) -> list[Any]:
    if isinstance(messages, AgentSnapshot):
        if len(messages.messages) != messages.message_count:
            raise ValueError(
                f"the snapshot holds {len(messages.messages)} of the session's {messages.message_count} "
                "messages; export AgentSessionClient.export_messages(session_id) instead"
            )
        messages = messages.messages
    items: list[Any] = []
    for entry in messages:
        message = entry.message if isinstance(entry, AgentMessage) else entry
        if message.framework_item is None:
            raise ValueError(
                "a message is kept by reference (only its preview is here); export "
                "AgentSessionClient.export_messages(session_id), which reads it whole"
            )
        items.append(message.framework_item)
    return items
