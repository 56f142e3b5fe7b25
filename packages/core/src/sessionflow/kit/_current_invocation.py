"""The tool call running in this context: one variable for every adapter.

The tool activity sets it around `execute_deferred_tool_call`, so every framework's tools
(sync ones too: the frameworks run them in a thread with a copy of the context) read the
same `current_tool_invocation()`, and no adapter keeps a variable of its own.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar

from sessionflow.session.invocation import ToolInvocation

__all__ = ["current_tool_invocation", "tool_invocation_scope"]

_CURRENT: ContextVar[ToolInvocation | None] = ContextVar("sessionflow_tool_invocation", default=None)


def current_tool_invocation() -> ToolInvocation | None:
    """The invocation of the tool call sessionflow is running now, or None outside a tool step.

    `ToolInvocation.idempotency_key` is equal on every attempt of one call; a write tool
    passes it to the system it changes, so a retried write is applied once::

        invocation = current_tool_invocation()
        key = invocation.idempotency_key if invocation else None
    """
    return _CURRENT.get()


@contextmanager
def tool_invocation_scope(invocation: ToolInvocation) -> Generator[ToolInvocation]:
    """Make ``invocation`` the current one inside the ``with`` block.

    The tool activity uses it; so does code that drives a runner's
    `execute_deferred_tool_call` by hand (a test), with ``call.invocation``.
    """
    token = _CURRENT.set(invocation)
    try:
        yield invocation
    finally:
        _CURRENT.reset(token)
