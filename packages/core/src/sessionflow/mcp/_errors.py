"""Errors of the MCP tool source."""

from __future__ import annotations

from typing import Any, cast

from sessionflow.session.errors import SessionRunError

__all__ = ["McpTransportError", "McpUnavailableError", "describe_error"]


class McpUnavailableError(SessionRunError):
    """An MCP server could not be reached or listed.

    Attributes:
        server: The server's configured name.
        reason: Why, in one line.
    """

    def __init__(self, server: str, reason: str) -> None:
        super().__init__(f"MCP server {server!r} is unavailable: {reason}")
        self.server = server
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.server, self.reason))


class McpTransportError(SessionRunError):
    """The connection failed while a ``tools/call`` was in flight: the call may have run.

    It is a plain exception on purpose: the session retries it for effects that are safe
    to repeat and records the outcome as unknown for the others.
    """

    def __init__(self, server: str, tool: str, reason: str) -> None:
        super().__init__(f"MCP server {server!r} failed during the call of tool {tool!r}: {reason}")
        self.server = server
        self.tool = tool
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.server, self.tool, self.reason))


def describe_error(error: BaseException) -> str:
    """One line for an error, looking inside exception groups (anyio task groups raise them)."""
    leaf = _leaf(error)
    text = str(leaf).strip()
    first = text.splitlines()[0] if text else ""
    if isinstance(leaf, TimeoutError) and not first:
        return "timed out"
    return f"{type(leaf).__name__}: {first}" if first else type(leaf).__name__


def _leaf(error: BaseException) -> BaseException:
    # Only exception groups have `exceptions`; reading it untyped keeps `error` un-narrowed.
    inner: object = getattr(error, "exceptions", None)
    first: object = cast("tuple[object, ...]", inner)[0] if isinstance(inner, tuple) and inner else None
    return _leaf(first) if isinstance(first, BaseException) else error
