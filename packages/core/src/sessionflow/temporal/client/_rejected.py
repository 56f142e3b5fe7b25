"""The client's side of a refused message: the double-texting `reject` as the error it was."""

from __future__ import annotations

from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from sessionflow.session.double_texting import MessageRejectedError

__all__ = ["raise_rejected_message"]


def raise_rejected_message(error: WorkflowUpdateFailedError) -> None:
    """Raise `MessageRejectedError` when the session refused a message; return otherwise."""
    cause = error.cause
    if isinstance(cause, ApplicationError) and cause.type == MessageRejectedError.__name__:
        raise MessageRejectedError(cause.message) from None
