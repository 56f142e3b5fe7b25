"""The session's reads: its snapshot and pages of its messages, each bounded in size.

Reads change nothing. They answer queries, whose results travel in one payload, so each
is cut to a byte budget: the newest messages that fit for a snapshot, the oldest after
the reader's position for a page.
"""

from __future__ import annotations

from sessionflow.session.bounds import bounded_interrupt, bounded_messages, bounded_tool_call
from sessionflow.session.carry import carry_preview
from sessionflow.session.messages import AgentMessage
from sessionflow.session.model_fields import SessionFields
from sessionflow.session.state import AgentMessagesPage, AgentSnapshot
from sessionflow.session.superseded import superseded_range

__all__ = ["MAX_PAGE_SIZE", "PAGE_BYTES", "SNAPSHOT_MESSAGE_BYTES", "SNAPSHOT_MESSAGE_LIMIT", "Reads"]

SNAPSHOT_MESSAGE_LIMIT = 200
SNAPSHOT_MESSAGE_BYTES = 512 * 1024
"""Bytes of messages a snapshot carries at most: the newest that fit."""
PAGE_BYTES = 512 * 1024
"""Bytes of messages one `list_agent_messages` page carries at most."""
MAX_PAGE_SIZE = 200


class Reads(SessionFields):
    """Builds the snapshot and message pages queries answer with."""

    def snapshot(self, session_id: str, *, started: bool = True) -> AgentSnapshot:
        return AgentSnapshot(
            session_id=session_id,
            state=self.state if started else None,
            messages=bounded_messages(self._newest_live(), SNAPSHOT_MESSAGE_BYTES, newest=True),
            message_count=len(self.messages),
            pending_interrupts=[bounded_interrupt(i) for i in self.pending_interrupts],
            tool_calls=[
                bounded_tool_call(r) for r in sorted(self.tool_calls.values(), key=lambda r: r.deferral_order)
            ],
            usage=self.usage,
            queued_message_count=len(self.queued),
            stopped=self.stopped,
            carried_state_preview=carry_preview(self.carried_state),
            carried_state_by_reference=self.carried_state_ref is not None,
            framework_state=self.framework_state,
            framework_state_omitted=list(self.framework_state_omitted),
            double_texting=self.double_texting,
            forked_from=self.forked_from,
            steered_message_count=len(self.steered),
        )

    def page(self, *, after: int = 0, limit: int = 50, hide_superseded: bool = False) -> AgentMessagesPage:
        """Messages with a sequence above `after`, oldest first.

        The limit is clamped to 1..200, and a page holds at most `PAGE_BYTES` (always at
        least one message); a stored body appears as its preview. With `hide_superseded`,
        messages the framework's history no longer holds are left out; otherwise the page
        names the superseded ranges that overlap it.
        """
        limit = max(1, min(MAX_PAGE_SIZE, limit))
        start = self._index_after(after)
        if hide_superseded:
            picked = self._live_from(start, limit)
            chunk = bounded_messages(picked, PAGE_BYTES, newest=False)
            last = chunk[-1].sequence if chunk else None
            more = last is not None and last < self.messages[-1].sequence
            return AgentMessagesPage(messages=chunk, next_after=last if more else None)
        chunk = bounded_messages(self.messages[start : start + limit], PAGE_BYTES, newest=False)
        more = start + len(chunk) < len(self.messages)
        overlapping = (
            [r for r in self.superseded if r.first <= chunk[-1].sequence and r.last >= chunk[0].sequence]
            if chunk
            else []
        )
        return AgentMessagesPage(
            messages=chunk,
            next_after=chunk[-1].sequence if chunk and more else None,
            superseded=overlapping,
        )

    def _live_from(self, start: int, limit: int) -> list[AgentMessage]:
        """Up to `limit` messages from index `start` on that no turn superseded."""
        picked: list[AgentMessage] = []
        for stored in self.messages[start:]:
            if len(picked) == limit:
                break
            if superseded_range(self.superseded, stored.sequence) is None:
                picked.append(stored)
        return picked

    def _newest_live(self) -> list[AgentMessage]:
        """The newest `SNAPSHOT_MESSAGE_LIMIT` messages that no turn superseded, oldest first."""
        if not self.superseded:
            return self.messages[-SNAPSHOT_MESSAGE_LIMIT:]
        picked: list[AgentMessage] = []
        for stored in reversed(self.messages):
            if len(picked) == SNAPSHOT_MESSAGE_LIMIT:
                break
            if superseded_range(self.superseded, stored.sequence) is None:
                picked.append(stored)
        picked.reverse()
        return picked

    def _index_after(self, after: int) -> int:
        # Sequences are dense from the first stored one, so the index is arithmetic.
        if not self.messages:
            return 0
        first = self.messages[0].sequence
        return max(0, min(len(self.messages), after - first + 1))
