"""How a failed step is described in the turn's error and the tool call's record."""

from __future__ import annotations

from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError

# No list of non-retryable error types here: an error's class says whether a step may run
# again (`SessionError.retryable`), and the activity reports it as non-retryable.


def describe_failure(error: BaseException) -> str:
    """A one-line reason for a failed step, from the innermost useful cause."""
    cause: BaseException = error
    while isinstance(cause, ActivityError) and cause.cause is not None:
        cause = cause.cause
    if isinstance(cause, TimeoutError):
        return f"timed out ({cause.type.name.lower() if cause.type else 'unknown'})"
    if isinstance(cause, ApplicationError):
        return f"{cause.type}: {cause.message}" if cause.type else cause.message
    return str(cause) or repr(cause)
