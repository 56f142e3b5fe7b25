"""The client's side of a refused answer: a question the workflow would not take, as the error it was."""

from __future__ import annotations

from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from sessionflow.session.approvals import InvalidAnswerError, StaleApprovalError

__all__ = ["raise_invalid_answer"]


def raise_invalid_answer(error: WorkflowUpdateFailedError) -> None:
    """Raise `InvalidAnswerError` when the update failed because a question's answer was refused.

    Any other refusal returns, and the caller answers False as before (not pending, past
    its deadline). A refused answer is a mistake of the caller, not a lost race, so it is
    an error with the workflow's reason rather than a quiet False.
    """
    cause = error.cause
    if isinstance(cause, ApplicationError) and cause.type == InvalidAnswerError.__name__:
        raise InvalidAnswerError(cause.message) from None
    if isinstance(cause, ApplicationError) and cause.type == StaleApprovalError.__name__:
        raise StaleApprovalError(cause.message) from None
