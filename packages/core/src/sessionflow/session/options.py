"""Per-flow options: tool policies, timeouts and retry counts."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sessionflow.session.approval_preview import ApprovalPreview
from sessionflow.session.guardrails import DEFAULT_MAX_STUCK, Budget
from sessionflow.session.tools import DeferredToolCall, ToolEffect, ToolPolicy

__all__ = ["AgentSessionOptions", "CallPolicy", "MemoryOptions", "SessionBudget", "SessionTimings"]

PriceResolver = Callable[[str, str | None], tuple[float, float] | None]
"""(model, provider) -> (input price, output price) per million tokens, or None if unknown."""

CallPolicy = Callable[[DeferredToolCall, Mapping[str, Any]], ToolPolicy]
"""Decides the final policy of one call from the call and its turn's session settings."""

ApprovalPreviewer = Callable[[DeferredToolCall, Mapping[str, Any]], ApprovalPreview | None]
"""Makes the preview of one call that waits for a person, on the worker (see
`sessionflow.session.approval_preview`); None leaves the client to show the arguments."""


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
class SessionBudget:
    """Limits checked before every step. None means no limit.

    The session cost uses prices per million tokens: give them, or name `price_model`
    (and optionally `price_provider`) to look them up in the `genai-prices` table.
    """

    max_model_calls_per_turn: int | None = None
    max_tool_calls_per_turn: int | None = None
    max_turn_duration: timedelta | None = None
    max_session_cost: float | None = None
    price_model: str | None = None
    price_provider: str | None = None
    input_price_per_mtok: float | None = None
    output_price_per_mtok: float | None = None
    max_output_tokens: int = 4096
    max_stuck: int = DEFAULT_MAX_STUCK

    def resolve(self, prices: PriceResolver | None = None) -> Budget:
        """Plain numbers for the workflow; fails when a cost limit has no prices."""
        input_price, output_price = self.input_price_per_mtok, self.output_price_per_mtok
        if (input_price is None or output_price is None) and self.price_model and prices is not None:
            found = prices(self.price_model, self.price_provider)
            if found is not None:
                input_price = found[0] if input_price is None else input_price
                output_price = found[1] if output_price is None else output_price
        if self.max_session_cost is not None and (input_price is None or output_price is None):
            raise ValueError(
                "max_session_cost needs prices: set input_price_per_mtok and output_price_per_mtok, "
                f"or a price_model the price table knows (got {self.price_model!r})"
            )
        return Budget(
            max_model_calls_per_turn=self.max_model_calls_per_turn,
            max_tool_calls_per_turn=self.max_tool_calls_per_turn,
            max_turn_seconds=self.max_turn_duration.total_seconds() if self.max_turn_duration else None,
            max_session_cost=self.max_session_cost,
            input_price=(input_price or 0.0) / 1e6,
            output_price=(output_price or 0.0) / 1e6,
            max_output_tokens=self.max_output_tokens,
            max_stuck=self.max_stuck,
        )


@dataclass(frozen=True, kw_only=True)
class MemoryOptions:
    """Guarded memory (`remember`, `recall`, `forget`), kept in the session's own state."""

    max_notes: int = 50
    max_chars: int = 500
    ttl: timedelta | None = timedelta(days=30)


@dataclass(frozen=True, kw_only=True)
class AgentSessionOptions:
    """How one flow type treats its tools and how long it waits."""

    tool_policies: dict[str, ToolPolicy] = field(default_factory=lambda: {})
    default_tool_effect: ToolEffect = ToolEffect.UNCLASSIFIED
    timings: SessionTimings = field(default_factory=SessionTimings)
    event_stream_capacity: int = 256 * 1024
    """Bytes of durable events a session retains (carried across continue-as-new)."""
    budget: SessionBudget | None = None
    """Per-turn step, tool and time limits, and a per-session cost limit."""
    memory: MemoryOptions | None = None
    """Enables the guarded memory tools, run by the session itself."""
    max_tool_output_bytes: int = 1024 * 1024
    """Bytes of a tool's output the model sees (a policy's `max_output_bytes` overrides it).

    A longer output is stored whole; the model gets its head and a note of what was cut."""
    max_continues_per_turn: int = 8
    """Model steps of one turn that may ask for another model call (`ContinueRequested`).

    The next one stops the turn (`continue_limit`): a validator that never accepts, or a
    loop of reasoning-only responses, ends instead of running up the bill."""
    call_policy: CallPolicy | None = None
    """Optional per-call policy, applied to every deferred call after the runner returns.

    Use it when approval depends on the arguments (a shell command on an allow list) or on
    the turn's settings. It receives the policy the runner resolved on the call.
    """

    approval_preview: ApprovalPreviewer | None = None
    """Optional preview of a call that waits for approval, made on the worker in the model
    step: a file write's diff against the workspace, a shell command as a command. It is
    recorded with the call, so every client (the terminal, the console, a late reader)
    shows the same. A preview that raises is left out; the call still asks."""

    def __post_init__(self) -> None:
        if self.max_tool_output_bytes < 1:
            raise ValueError(f"max_tool_output_bytes must be at least 1, got {self.max_tool_output_bytes!r}")
        if self.max_continues_per_turn < 0:
            raise ValueError(
                f"max_continues_per_turn must be at least 0, got {self.max_continues_per_turn!r}"
            )

    def tool_output_cap(self, policy: ToolPolicy) -> int:
        """Bytes of output the model sees for a call made under `policy`."""
        return policy.max_output_bytes if policy.max_output_bytes is not None else self.max_tool_output_bytes

    @property
    def interrupt_deadline(self) -> timedelta | None:
        return self.timings.interrupt_deadline

    def resolve_tool_policy(self, name: str, framework_effect: ToolEffect | None = None) -> ToolPolicy:
        """Explicit policy first, then the framework's metadata, then the default effect."""
        explicit = self.tool_policies.get(name)
        if explicit is not None:
            return explicit
        return ToolPolicy(effect=framework_effect or self.default_tool_effect)
