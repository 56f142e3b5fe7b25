"""Bounded reads: what a snapshot or a page may carry, whatever the session's size.

A query result must stay well under the server's 2 MiB payload limit, so reads cut long
values to previews. Stored bodies are already previews; only values kept inline (older
sessions, long tool arguments) are cut here, and a cut always says so.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from sessionflow.session.bodies import INLINE_BODY_BYTES, preview_text
from sessionflow.session.messages import AgentMessage
from sessionflow.session.state import AgentInterrupt
from sessionflow.session.tools import AgentToolCall

__all__ = ["bounded_interrupt", "bounded_messages", "bounded_tool_call", "message_size"]

_FIELD_CHARS = INLINE_BODY_BYTES
"""Characters of one inline field (arguments, output, text) a read carries at most."""


def message_size(stored: AgentMessage) -> int:
    """Approximate bytes of one message in a query result."""
    message = stored.message
    item = message.framework_item
    item_size = 0 if item is None else len(json.dumps(item, default=str, ensure_ascii=False))
    return item_size + len(message.text or "") + 200


def _readable(stored: AgentMessage) -> AgentMessage:
    # A legacy inline message too large to read whole keeps its text preview; its framework
    # item stays with the session (a runner still gets it).
    message = stored.message
    if message.body is not None:
        return stored
    return replace(
        stored, message=replace(message, framework_item=None, text=preview_text(message.text or ""))
    )


def bounded_messages(messages: Sequence[AgentMessage], max_bytes: int, *, newest: bool) -> list[AgentMessage]:
    """As many messages as fit in `max_bytes` (at least one), newest or oldest first kept."""
    ordered = list(reversed(messages)) if newest else list(messages)
    kept: list[AgentMessage] = []
    used = 0
    for stored in ordered:
        size = message_size(stored)
        if used + size > max_bytes:
            if kept:
                # The next read carries it, whole if it fits there alone: a preview here
                # would hide a message that a page could still carry.
                break
            # Too large for any read: a legacy inline message; its preview takes its place.
            stored = _readable(stored)
            size = message_size(stored)
        kept.append(stored)
        used += size
    return list(reversed(kept)) if newest else kept


def _cut(text: str | None) -> str | None:
    return text if text is None or len(text) <= _FIELD_CHARS else preview_text(text, _FIELD_CHARS)


def bounded_tool_call(record: AgentToolCall) -> AgentToolCall:
    """A record with its long arguments, output and state update cut to previews."""
    arguments, output = _cut(record.arguments) or "", _cut(record.output)
    update = _cut(record.state_update)
    if arguments is record.arguments and output is record.output and update is record.state_update:
        return record
    return replace(record, arguments=arguments, output=output, state_update=update)


def bounded_interrupt(interrupt: AgentInterrupt) -> AgentInterrupt:
    """An interrupt with long arguments cut to a preview."""
    arguments = _cut(interrupt.arguments) or ""
    return interrupt if arguments is interrupt.arguments else replace(interrupt, arguments=arguments)
