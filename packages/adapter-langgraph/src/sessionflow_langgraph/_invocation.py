"""The tool invocation running now, for tools that need their idempotency key."""

from __future__ import annotations

import contextvars
from collections.abc import Generator
from contextlib import contextmanager

from sessionflow.plugins import ToolInvocation

__all__ = ["current_tool_invocation", "invocation_scope"]

_CURRENT: contextvars.ContextVar[ToolInvocation | None] = contextvars.ContextVar(
    "sessionflow_langgraph_tool_invocation", default=None
)


def current_tool_invocation() -> ToolInvocation | None:
    """The invocation of the tool call running now, or None outside a sessionflow tool step.

    `ToolInvocation.idempotency_key` is equal on every attempt of one call; pass it to the
    system a write tool changes so a retried write is applied once::

        @tool
        def upsert(doc: str) -> str:
            invocation = current_tool_invocation()
            key = invocation.idempotency_key if invocation else None
            ...

    Sync tools see it too: LangChain runs them in a thread with a copy of the context.
    """
    return _CURRENT.get()


@contextmanager
def invocation_scope(invocation: ToolInvocation) -> Generator[ToolInvocation]:
    """Make ``invocation`` the current one inside the ``with`` block."""
    token = _CURRENT.set(invocation)
    try:
        yield invocation
    finally:
        _CURRENT.reset(token)
