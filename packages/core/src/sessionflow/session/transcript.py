"""The session's stored messages: appending them, their rolling digests, the stored index.

Messages are dense by sequence and only ever appended; the rolling digest over them lets
a worker check a cached prefix, and the stored index lets a model step read earlier
messages from the store instead of from the workflow.
"""

from __future__ import annotations

from sessionflow.session.bodies import BodyRef
from sessionflow.session.errors import SessionStateError
from sessionflow.session.guardrails import message_tokens
from sessionflow.session.messages import AgentMessage, FrameworkMessage, MessageRole, message_digest
from sessionflow.session.model_fields import SessionFields
from sessionflow.session.superseded import with_superseded

__all__ = ["HISTORY_TURN_ID", "Transcript"]

HISTORY_TURN_ID = "history"
"""The `turn_id` of messages a session started with (`load_history`): no turn produced them."""


class Transcript(SessionFields):
    """Appends and reads the session's messages (`messages`, `digest`, `index_*`)."""

    @property
    def next_sequence(self) -> int:
        return self.messages[-1].sequence + 1 if self.messages else 1

    def load_history(self, messages: list[FrameworkMessage]) -> None:
        """Store the messages the session starts with, before its first turn, as if earlier
        turns had produced them: every model step sees them, reads list them."""
        if self.messages or self.turn_active:
            raise SessionStateError("a history is loaded only into a session with no messages")
        for message in messages:
            stored = AgentMessage(sequence=self.next_sequence, turn_id=HISTORY_TURN_ID, message=message)
            self.messages.append(stored)
            self.digest = message_digest(self.digest, stored)
        # No model call has measured the conversation yet: the budget's estimate of the first
        # call counts only that turn's messages on top of this, so it starts at the history.
        self.last_input_tokens = sum(message_tokens(m) for m in messages)

    def append_message(self, message: FrameworkMessage) -> AgentMessage:
        stored = AgentMessage(sequence=self.next_sequence, turn_id=self._require_turn(), message=message)
        self.messages.append(stored)
        self.digest = message_digest(self.digest, stored)
        return stored

    def store_user_message(self, message: FrameworkMessage) -> AgentMessage:
        if message.role is not MessageRole.USER:
            raise SessionStateError(
                f"build_user_message returned role {message.role.value!r}, expected 'user'"
            )
        return self.append_message(message)

    def replace_turn_messages(self, replaced: list[AgentMessage]) -> None:
        """Replace messages the running turn stored (by sequence) with the framework's version.

        Only the running turn's own messages may change: earlier turns' are covered by the
        stored index and were read by other clients. The rolling digest is recomputed from
        the turn's start. Raises `SessionStateError` for any other sequence.
        """
        if not replaced:
            return
        turn_id = self._require_turn()
        for stored in replaced:
            index = stored.sequence - 1
            if (
                index < max(self.turn_prefix_count, self.index_count)
                or index >= len(self.messages)
                or self.messages[index].turn_id != turn_id
            ):
                raise SessionStateError(
                    f"a turn may replace only the messages it stored; message {stored.sequence} is not "
                    f"one of turn {turn_id!r}'s"
                )
        for stored in replaced:  # checked first, so a bad list replaces nothing
            self.messages[stored.sequence - 1] = AgentMessage(
                sequence=stored.sequence, turn_id=turn_id, message=stored.message
            )
        digest = self.turn_prefix_digest
        for stored in self.messages[self.turn_prefix_count :]:
            digest = message_digest(digest, stored)
        self.digest = digest

    def check_supersedable(self, sequences: list[int]) -> None:
        """Raise `SessionStateError` unless every sequence names a stored message."""
        for sequence in sequences:
            if not self.messages or not self.messages[0].sequence <= sequence <= self.messages[-1].sequence:
                raise SessionStateError(
                    f"a turn may supersede only stored messages; there is no message {sequence!r}"
                )

    def supersede_messages(self, sequences: list[int], turn: int) -> None:
        """Mark stored messages as no longer in the framework's history (see `superseded`).

        Raises `SessionStateError`, and marks nothing, for a sequence that names no stored
        message.
        """
        if not sequences:
            return
        self.check_supersedable(sequences)
        self.superseded = with_superseded(self.superseded, sequences, turn)

    def turn_messages(self) -> list[AgentMessage]:
        """Messages stored for the running turn (its user message, and any earlier note)."""
        turn_id = self._require_turn()
        tail: list[AgentMessage] = []
        for stored in reversed(self.messages):
            if stored.turn_id != turn_id:
                break
            tail.append(stored)
        tail.reverse()
        return tail

    # -- the stored message index --------------------------------------------------------

    def record_index(self, ref: BodyRef, count: int, digest: str) -> None:
        """The store now holds the index of messages 1..`count`; ignore one that is not newer."""
        if count <= self.index_count or count > len(self.messages):
            return
        if digest != self.messages_digest_at(count):
            raise SessionStateError(f"the stored index of {count} messages does not match the session")
        self.index_ref, self.index_count, self.index_digest = ref, count, digest

    def messages_digest_at(self, count: int) -> str:
        """Rolling digest of messages 1..`count`, from what the model keeps (no re-hash when it can)."""
        if count == len(self.messages):
            return self.digest
        if count == self.turn_prefix_count:
            return self.turn_prefix_digest
        if count == self.index_count:
            return self.index_digest
        digest = ""
        for stored in self.messages[:count]:
            digest = message_digest(digest, stored)
        return digest

    def messages_after_index(self) -> list[AgentMessage]:
        """Messages the stored index does not cover yet (a model step receives them inline)."""
        return self.messages[self.index_count :]
