"""Per-flow options: tool policies, timeouts and retry counts."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sessionflow.session.tools import DeferredToolCall, ToolEffect, ToolPolicy

__all__ = ["AgentSessionOptions", "CallPolicy", "SessionTimings"]

CallPolicy = Callable[[DeferredToolCall, Mapping[str, Any]], ToolPolicy]
"""Decides the final policy of one call from the call and its turn's session settings."""


@dataclass(frozen=True, kw_only=True)
class SessionTimings:
    """Timeouts and attempt counts the durable session applies.

    The defaults follow the reference runtime. Tests shorten them so a crash is noticed in
    seconds. They travel in the session's start input, so a running session keeps the
    values it started with.
    """

    model_start_to_close: timedelta = timedelta(minutes=15)
    model_heartbeat_timeout: timedelta = timedelta(minutes=2)
    model_schedule_to_close: timedelta = timedelta(minutes=30)
    model_max_attempts: int = 3
    tool_start_to_close: timedelta = timedelta(minutes=15)
    tool_heartbeat_timeout: timedelta = timedelta(minutes=2)
    tool_schedule_to_close: timedelta = timedelta(minutes=30)
    tool_max_attempts: int = 3
    retry_initial_interval: timedelta = timedelta(seconds=1)
    heartbeat_interval: timedelta = timedelta(seconds=20)
    interrupt_deadline: timedelta | None = None

    def __post_init__(self) -> None:
        if self.model_max_attempts < 1 or self.tool_max_attempts < 1:
            raise ValueError("attempt counts must be at least 1")
        if self.interrupt_deadline is not None and self.interrupt_deadline <= timedelta(0):
            raise ValueError("interrupt_deadline must be positive")


@dataclass(frozen=True, kw_only=True)
class AgentSessionOptions:
    """How one flow type treats its tools and how long it waits."""

    tool_policies: dict[str, ToolPolicy] = field(default_factory=lambda: {})
    default_tool_effect: ToolEffect = ToolEffect.UNCLASSIFIED
    timings: SessionTimings = field(default_factory=SessionTimings)
    event_stream_capacity: int = 256 * 1024
    """Bytes of durable events a session retains (carried across continue-as-new)."""
    call_policy: CallPolicy | None = None
    """Optional per-call policy, applied to every deferred call after the runner returns.

    Use it when approval depends on the arguments (a shell command on an allow list) or on
    the turn's settings. It receives the policy the runner resolved on the call.
    """

    @property
    def interrupt_deadline(self) -> timedelta | None:
        return self.timings.interrupt_deadline

    def resolve_tool_policy(self, name: str, framework_effect: ToolEffect | None = None) -> ToolPolicy:
        """Explicit policy first, then the framework's metadata, then the default effect."""
        explicit = self.tool_policies.get(name)
        if explicit is not None:
            return explicit
        return ToolPolicy(effect=framework_effect or self.default_tool_effect)
