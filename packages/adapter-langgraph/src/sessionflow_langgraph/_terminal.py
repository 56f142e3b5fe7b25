"""The framework's own terminal outcomes: errors that end a run by design, never retried.

A plain ``invoke`` that hits LangChain's model or tool call limit (``exit_behavior="error"``),
a ``PIIMiddleware`` with ``strategy="block"``, or a refusal under ``ModelRefusalMiddleware``
(``ModelRefusalError``: the provider declined, and a retry is not meant to change that)
raises, and the run is over. Run again
from the same state, the same middleware raises again: a retry of the step would only
repeat it. The model step ends the turn with the framework's own error instead
(`TurnAborted`, which the session never retries), named as plain reports it.
"""

from __future__ import annotations

__all__ = ["TERMINAL_ERRORS", "terminal_error"]


def _terminal_errors() -> tuple[type[BaseException], ...]:
    try:  # langchain is the optional extra `langchain`
        from langchain.agents.middleware import PIIDetectionError
        from langchain.agents.middleware.model_call_limit import ModelCallLimitExceededError
        from langchain.agents.middleware.tool_call_limit import ToolCallLimitExceededError
        from langchain_core.exceptions import ModelRefusalError
    except ImportError:
        return ()
    return (ModelCallLimitExceededError, ToolCallLimitExceededError, PIIDetectionError, ModelRefusalError)


TERMINAL_ERRORS = _terminal_errors()


def terminal_error(error: BaseException) -> str | None:
    """How plain LangGraph reports ``error`` when it ends the run by design; None otherwise."""
    if isinstance(error, TERMINAL_ERRORS):
        return f"{type(error).__name__}: {error}"
    return None
