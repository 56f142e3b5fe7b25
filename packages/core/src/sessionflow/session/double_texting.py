"""Double-texting: what a session does with a user message that arrives while a turn runs.

The policy is the session's (chosen at start) and a message may override it. The decision
is pure, so the workflow makes it inside the update that accepts the message, where no
other message or turn end can slip in between the check and the queueing.
"""

from __future__ import annotations

from enum import Enum, StrEnum

from sessionflow.session.errors import SessionStateError

__all__ = [
    "DoubleTexting",
    "DoubleTextingAction",
    "MessageRejectedError",
    "decide_double_texting",
    "double_texting_of",
]


class DoubleTexting(StrEnum):
    """The policy for a message sent while the session is busy (a turn runs or waits to run)."""

    ENQUEUE = "enqueue"
    """Queue it: it starts the next turn once the earlier ones end (the default)."""
    INTERRUPT = "interrupt"
    """Cancel the running turn (as `cancel_turn` does), then run the message."""
    REJECT = "reject"
    """Refuse it: the client raises `MessageRejectedError`, and nothing is queued."""
    STEER = "steer"
    """Let it join the running turn: the turn's next model step sees it as a user message
    after the tool results of the step that just ended. When the turn takes no further model
    step, or its runner does not take steered messages, it starts the next turn instead."""


class DoubleTextingAction(Enum):
    """What the session does with one message."""

    QUEUE = "queue"
    CANCEL_AND_QUEUE = "cancel_and_queue"
    REJECT = "reject"
    STEER = "steer"


class MessageRejectedError(SessionStateError):
    """The session refused a message: it was busy and the message's policy is `reject`.

    Nothing was queued. A retry with the same `message_id` is refused again (a send is
    idempotent by its ID); a new message may be sent once the turn has ended.
    """


def double_texting_of(value: DoubleTexting | str) -> DoubleTexting:
    """`value` as a policy; `ValueError` naming the policies for anything else."""
    try:
        return DoubleTexting(value)
    except ValueError:
        names = ", ".join(repr(p.value) for p in DoubleTexting)
        raise ValueError(f"double_texting must be one of {names}, got {value!r}") from None


def decide_double_texting(
    session_policy: DoubleTexting,
    message_policy: DoubleTexting | None,
    *,
    turn_running: bool,
    cancel_requested: bool,
    queued: int,
    steering: bool = True,
) -> DoubleTextingAction:
    """What to do with a message: the message's policy wins over the session's.

    An idle session (no turn running, none queued) queues the message whatever the
    policy. `reject` refuses a message while a turn runs or another message waits to start
    one. `interrupt` cancels a running turn unless its cancel is already under way; earlier
    queued messages keep their places, so no message is dropped. `steer` joins a running
    turn that is not being cancelled, when the session's runner takes steered messages
    (``steering``); otherwise the message is queued.
    """
    policy = message_policy if message_policy is not None else session_policy
    if policy is DoubleTexting.STEER:
        steers = steering and turn_running and not cancel_requested
        return DoubleTextingAction.STEER if steers else DoubleTextingAction.QUEUE
    busy = turn_running or queued > 0
    if not busy or policy is DoubleTexting.ENQUEUE:
        return DoubleTextingAction.QUEUE
    if policy is DoubleTexting.REJECT:
        return DoubleTextingAction.REJECT
    if turn_running and not cancel_requested:
        return DoubleTextingAction.CANCEL_AND_QUEUE
    return DoubleTextingAction.QUEUE
