"""The history a session starts with, as the session keeps it (`start_session(history=...)`).

The history travels in the workflow's start input, which the server takes up to 2 MiB. So
large bodies go by reference, as a turn's own messages do; a long history of small
messages goes wholly by reference once its inline part passes `HISTORY_INLINE_BYTES`
(a start input still above the store's threshold then leaves the history as any large
payload does); and a client without a payload store refuses a history it could not start
with.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from sessionflow.session.bodies import BodyRef, utf8_size
from sessionflow.session.errors import UserError
from sessionflow.session.messages import AgentMessage, FrameworkMessage, MessageRole
from sessionflow.session.transcript import HISTORY_TURN_ID
from sessionflow.temporal._payloads import MessageIndexChunk
from sessionflow.temporal.storage._bodies import BodyStore, StoreScope

__all__ = ["HISTORY_BYTES_WITHOUT_STORE", "HISTORY_INLINE_BYTES", "StartHistory", "start_history"]

HISTORY_INLINE_BYTES = 512 * 1024
"""Bytes of history the start input holds inline at most; past it every message goes by
reference (a preview and a reference each), so the start input stays far from 2 MiB."""
HISTORY_BYTES_WITHOUT_STORE = 1024 * 1024
"""Bytes of history a client without a payload store may start with: the start input and
the first turn's model step inputs (which carry the history inline) must fit 2 MiB."""


@dataclass(frozen=True)
class StartHistory:
    messages: list[FrameworkMessage]
    index_ref: BodyRef | None = None


def _checked(number: int, message: object) -> FrameworkMessage:
    if not isinstance(message, FrameworkMessage):
        raise UserError(f"history item {number} is a {type(message).__name__}, expected a FrameworkMessage")
    if not isinstance(message.role, MessageRole):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise UserError(f"history message {number} has role {message.role!r}, expected a MessageRole")
    try:
        # The store and the history keep items as JSON: refuse now, not in the converter.
        json.dumps(message.framework_item)
    except (TypeError, ValueError) as error:
        raise UserError(f"history message {number}: framework_item is not JSON ({error})") from None
    return message


def _inline_bytes(messages: Sequence[FrameworkMessage]) -> int:
    return sum(utf8_size(json.dumps(asdict(m), default=str, ensure_ascii=False)) for m in messages)


async def start_history(
    history: Sequence[FrameworkMessage], bodies: BodyStore | None, scope: StoreScope
) -> StartHistory:
    """`history` checked and stored as the session keeps it, with the index chunk that covers it.

    Raises `UserError` for an item that is no JSON `FrameworkMessage`, and, without a
    payload store, for a history above `HISTORY_BYTES_WITHOUT_STORE` or holding a message
    stored by reference.
    """
    messages = [_checked(number, message) for number, message in enumerate(history, 1)]
    if not messages:
        return StartHistory([])
    if bodies is None:
        stored = next((n for n, m in enumerate(messages, 1) if m.body is not None), None)
        if stored is not None:
            raise UserError(f"history message {stored} is kept in a payload store, and this client has none")
        size = _inline_bytes(messages)
        if size > HISTORY_BYTES_WITHOUT_STORE:
            raise UserError(
                f"a history of {size:,} bytes is too large to start a session without a payload "
                f"store (at most {HISTORY_BYTES_WITHOUT_STORE:,}); connect with one (with_payload_store)"
            )
        return StartHistory(messages)
    kept = [await bodies.store_message(m, scope) for m in messages]
    if _inline_bytes(kept) > HISTORY_INLINE_BYTES:
        kept = [await bodies.store_message(m, scope, inline_limit=0) for m in kept]
    # The chunk a turn's model step would have written: the first turn reads the history
    # from the store instead of carrying it in every one of its model step inputs.
    entries = [AgentMessage(sequence=n, turn_id=HISTORY_TURN_ID, message=m) for n, m in enumerate(kept, 1)]
    return StartHistory(kept, await bodies.put(MessageIndexChunk(first=1, entries=entries), scope))
