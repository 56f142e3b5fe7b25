"""Steering: user messages that join the running turn at its next model step.

A message sent under double-texting `steer` while a turn runs waits in `steered`; the
turn's next model step takes every waiting message at once (`join_steered`) and its runner
puts them in the run after the tool results of the step before. The runner then returns
them in the turn's messages, where they sit. When the turn ends before another model
step, the waiting messages start the next turn instead (`requeue_steered`): the first one
is that turn's user message and the others join its first model step, so none is lost and
their order holds.
"""

from __future__ import annotations

from sessionflow.session.errors import SessionStateError
from sessionflow.session.events import AgentEventType
from sessionflow.session.messages import FrameworkMessage, MessageRole
from sessionflow.session.model_fields import SessionFields
from sessionflow.session.steered_message import SteeredMessage

__all__ = ["Steering"]


class Steering(SessionFields):
    """Keeps the messages that steer the running turn (`steered`, `turn_steered`)."""

    def join_steered(self, messages: list[FrameworkMessage], *, step: str) -> list[FrameworkMessage]:
        """The first ``len(messages)`` waiting messages join model step ``step``, built as ``messages``.

        Each gets a `user_message_steered` event naming the step; returns the messages.
        """
        if len(messages) > len(self.steered):
            raise SessionStateError("more steered messages joined than were waiting")
        for built in messages:
            if built.role is not MessageRole.USER:
                raise SessionStateError(f"a steered message must be a user message, not {built.role.value!r}")
        joined, self.steered = self.steered[: len(messages)], self.steered[len(messages) :]
        for waiting, built in zip(joined, messages, strict=True):
            self.turn_steered.append(SteeredMessage(message=built, step=step, message_id=waiting.message_id))
            data: dict[str, object] = {"step": step, "text": built.text}
            if waiting.message_id is not None:
                data["message_id"] = waiting.message_id
            self.emit(AgentEventType.USER_MESSAGE_STEERED, data, step=step)
        return messages

    def requeue_steered(self) -> None:
        """The turn ended: the messages no step took start the next turn, before any queued one.

        The first waiting message is queued first; the others wait on and join the first
        model step of that turn.
        """
        self.turn_steered = []
        if self.steered:
            self.queued.insert(0, self.steered.pop(0))
