"""The history of a fork: the original's messages of turns 1..N, read through bounded pages.

Pages carry previews of bodies kept by reference; each such body is read from the store
and stored again in the new session's scope, one at a time, so the fork owns its bodies
(it outlives the original's) and holds no more than one whole body in memory.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sessionflow.session.errors import UserError
from sessionflow.session.fork import in_fork, turn_number
from sessionflow.session.messages import AgentMessage, FrameworkMessage
from sessionflow.session.state import AgentMessagesPage
from sessionflow.session.superseded import live_at_turn
from sessionflow.temporal.storage._bodies import BodyStore, StoreScope

__all__ = ["ReadPage", "fork_messages"]

ReadPage = Callable[[int], Awaitable[AgentMessagesPage]]
"""Reads the page of messages after a sequence, superseded ones included and named
(`list_agent_messages(include_superseded=True)`)."""

_CUT_MARKER = "\n[... cut: "


async def fork_messages(
    session_id: str, at_turn: int, read_page: ReadPage, bodies: BodyStore | None, scope: StoreScope
) -> list[FrameworkMessage]:
    """The original's messages up to the end of turn `at_turn`, as the fork (`scope`) keeps them.

    Raises `UserError` for a body kept in a payload store when this client has none, and
    for a message too large for any read (a legacy inline message above a page's size).
    """
    kept: list[FrameworkMessage] = []
    after: int | None = 0
    while after is not None:
        page = await read_page(after)
        for stored in page.messages:
            if turn_number(stored.turn_id) > at_turn:
                # Messages are in turn order: the rest belong to later turns.
                return kept
            # A message a later turn superseded was still in the framework's history at
            # `at_turn`; one that turn or an earlier one superseded was not.
            if in_fork(stored, at_turn) and live_at_turn(page.superseded, stored.sequence, at_turn):
                kept.append(await _copied(session_id, stored, bodies, scope))
        after = page.next_after
    return kept


async def _copied(
    session_id: str, stored: AgentMessage, bodies: BodyStore | None, scope: StoreScope
) -> FrameworkMessage:
    message = stored.message
    if message.body is None:
        if message.framework_item is None and _CUT_MARKER in (message.text or ""):
            raise UserError(
                f"message {stored.sequence} of session {session_id!r} is too large to read whole, "
                "so the session cannot be forked there"
            )
        return message
    if bodies is None:
        raise UserError(
            f"message {stored.sequence} of session {session_id!r} is kept in a payload store, "
            "and this client has none"
        )
    return await bodies.store_message(await bodies.load_message(message), scope)
