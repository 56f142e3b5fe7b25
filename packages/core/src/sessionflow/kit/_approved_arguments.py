"""Holding a tool's run to the arguments a person approved.

A framework may rewrite a call's arguments on the way to the tool, inside the tool step
(a LangChain ``wrap_tool_call`` middleware, a Pydantic AI wrapper toolset). An adapter
calls `check_run_arguments` at the last point before the tool's own code runs, with the
arguments it is about to run. When the call was approved and those arguments are not the
approved ones, the tool does not run: the check raises `ArgumentsRewrittenError`, and the
tool step reports the rewrite (`rewritten_arguments`) whatever the framework made of the
error, so the session asks again and shows the change as a diff.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, ClassVar

from sessionflow.kit._current_invocation import current_tool_invocation
from sessionflow.session.approval_digest import approval_digest, canonical_arguments
from sessionflow.session.errors import SessionRunError
from sessionflow.session.tools import ToolEffect, ToolExecutionError

__all__ = ["ArgumentsRewrittenError", "check_run_arguments", "rewritten_arguments", "watch_rewrites"]

_REWRITES: ContextVar[list[str] | None] = ContextVar("sessionflow_rewrites", default=None)


class ArgumentsRewrittenError(SessionRunError):
    """The framework rewrote an approved call's arguments; the tool was not run."""

    retryable: ClassVar[bool] = False

    def __init__(self, arguments: str) -> None:
        super().__init__(
            "the arguments of this call changed after it was approved; it was not run and "
            "asks for approval again"
        )
        self.arguments = arguments


def check_run_arguments(arguments: str | Mapping[str, Any], *, tool_name: str | None = None) -> None:
    """Refuse to run arguments other than the approved ones (see the module docstring).

    Outside a tool step, or for a call that never waited for approval, it does nothing.

    Raises:
        ArgumentsRewrittenError: The call was approved for other arguments.
        ToolExecutionError: The framework swapped the approved tool for another one.
    """
    invocation = current_tool_invocation()
    if invocation is None or invocation.approved_digest is None:
        return
    if tool_name is not None and invocation.tool_name and tool_name != invocation.tool_name:
        raise ToolExecutionError(
            f"the approved call was to {invocation.tool_name!r}; the framework turned it into a "
            f"call to {tool_name!r}, which nobody approved, and it was not run"
        )
    effect = ToolEffect(invocation.effect)
    if approval_digest(invocation.tool_name, arguments, effect) == invocation.approved_digest:
        return
    canonical = canonical_arguments(arguments)
    seen = _REWRITES.get()
    if seen is not None:
        seen.append(canonical)
    raise ArgumentsRewrittenError(canonical)


@contextmanager
def watch_rewrites() -> Generator[list[str]]:
    """Collect the rewrites `check_run_arguments` refuses inside the block (the tool step's)."""
    seen: list[str] = []
    token = _REWRITES.set(seen)
    try:
        yield seen
    finally:
        _REWRITES.reset(token)


def rewritten_arguments(seen: list[str]) -> str | None:
    """The first rewrite refused in the step, or None."""
    return seen[0] if seen else None
