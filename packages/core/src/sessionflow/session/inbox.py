"""User messages sent to the session: queueing them, double-texting, safe retries.

A message waits in `queued` until the session starts its turn. Its client-chosen ID
makes a retried send harmless: an accepted ID is not queued again, a refused one is
refused again.
"""

from __future__ import annotations

from sessionflow.session.double_texting import (
    DoubleTexting,
    DoubleTextingAction,
    MessageRejectedError,
    decide_double_texting,
)
from sessionflow.session.errors import SessionStateError
from sessionflow.session.model_fields import SessionFields
from sessionflow.session.queued_message import QueuedUserMessage

__all__ = ["RECENT_MESSAGE_IDS", "Inbox"]

RECENT_MESSAGE_IDS = 256
"""Accepted (and refused) message IDs remembered at most, newest kept."""


class Inbox(SessionFields):
    """Queues user messages (`queued`, `recent_message_ids`, `rejected_message_ids`)."""

    @staticmethod
    def is_acceptable_text(text: str) -> bool:
        return bool(text.strip())

    def queue_user_message(self, message: QueuedUserMessage, *, steer: bool = False) -> bool:
        """Queue a message (``steer``: keep it for the running turn's next model step); False
        for blank text or a stopped session.

        A message whose `message_id` was accepted before is not queued again, and the
        answer is True: the earlier send already did what the retry asks.
        """
        if self.stopped or not self.is_acceptable_text(message.text):
            return False
        if message.message_id is not None:
            if message.message_id in self.recent_message_ids:
                return True
            self.recent_message_ids = [
                *self.recent_message_ids[-(RECENT_MESSAGE_IDS - 1) :],
                message.message_id,
            ]
        if steer:
            if not self.turn_active:
                raise SessionStateError("no turn is running to steer")
            self.steered.append(message)
        else:
            self.queued.append(message)
        return True

    def decide_user_message(
        self,
        message_id: str | None,
        policy: DoubleTexting | None,
        *,
        cancel_requested: bool,
        steering: bool = False,
    ) -> DoubleTextingAction:
        """What the session does with a message sent now (`decide_double_texting`).

        A message whose ID was decided before gets the same answer: queued (`QUEUE`,
        and `queue_user_message` then queues nothing, also for a message that steered)
        or refused (`REJECT`). ``steering``: the session's runner takes steered messages.
        """
        if message_id is not None:
            if message_id in self.recent_message_ids:
                return DoubleTextingAction.QUEUE
            if message_id in self.rejected_message_ids:
                return DoubleTextingAction.REJECT
        return decide_double_texting(
            self.double_texting,
            policy,
            turn_running=self.turn_active,
            cancel_requested=cancel_requested,
            queued=len(self.queued),
            steering=steering,
        )

    def reject_user_message(self, message_id: str | None) -> MessageRejectedError:
        """Remember a refused message's ID (so a retry is refused too); the error to report."""
        if message_id is not None and message_id not in self.rejected_message_ids:
            self.rejected_message_ids = [
                *self.rejected_message_ids[-(RECENT_MESSAGE_IDS - 1) :],
                message_id,
            ]
        return MessageRejectedError(
            "the session is busy (a turn runs or is about to start) and the message's "
            "double-texting policy is 'reject': nothing was queued"
        )

    def next_queued(self) -> QueuedUserMessage:
        if not self.queued:
            raise SessionStateError("no queued user message")
        return self.queued.pop(0)
