"""Pydantic AI's `UsageLimits` for a whole turn, enforced across the turn's model steps.

One plain run (`agent.run(..., usage_limits=...)`) is one session turn. Pydantic AI checks
the run's `RunUsage`: before each request (`request_limit`, the token totals so far, the
cost), after each response (the token limits, the cost, one request's input tokens), and
before running a response's function tool calls (`tool_calls_limit`). A session runs each
request in a model step of its own, a fresh `Agent.iter` that counts from zero, so the
turn's usage is rebuilt here from what the turn already holds: its responses (the run
state's messages, each with its `usage`) and its tool call records. The checks are Pydantic
AI's own `UsageLimits` methods, so the limits mean the same and the texts are its own; a
spent limit fails the turn (`TurnAborted`), as the plain run raises `UsageLimitExceeded`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Iterable
from contextlib import asynccontextmanager
from copy import copy
from typing import Any, NoReturn, TypeAlias

from pydantic_ai import RunContext
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import KnownModelName, Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RunUsage, UsageLimits

from sessionflow import AgentToolCall, AgentToolCallStatus
from sessionflow.kit import AgentTurnContext, TurnAborted

__all__ = [
    "UsageLimitsOption",
    "check_after_response",
    "refusal_before_request",
    "refusing_model",
    "turn_usage",
    "usage_limits_for",
]

UsageLimitsOption: TypeAlias = "UsageLimits | Callable[[AgentTurnContext], UsageLimits | None]"
"""Limits for every turn, or a function choosing them per turn (None: no limits)."""


def usage_limits_for(option: UsageLimitsOption | None, turn: AgentTurnContext) -> UsageLimits | None:
    """The limits of `turn`. Called on every model step; a function must give every step of a
    turn the same limits (read `turn.session_settings`, which are the turn's)."""
    return option(turn) if callable(option) else option


def turn_usage(messages: Iterable[ModelMessage], tool_calls: Iterable[AgentToolCall]) -> RunUsage:
    """What the plain run's `RunUsage` would say at this point of the turn.

    `messages` are the turn's messages so far (the run state's), `tool_calls` the turn's
    records. As in Pydantic AI, every response counts one request and its tokens and cost,
    plus those of the attempts that failed before it (a `FallbackModel`'s), and every tool
    call that succeeded counts one tool call.
    """
    usage = RunUsage()
    for message in messages:
        if not isinstance(message, ModelResponse):
            continue
        usage.requests += 1
        usage.incr(message.usage)
        for attempt in message.failed_attempts or ():
            if attempt.usage is not None:
                usage.incr(attempt.usage)
    usage.tool_calls = sum(1 for call in tool_calls if call.status is AgentToolCallStatus.SUCCEEDED)
    return usage


def refusal_before_request(limits: UsageLimits | None, used: RunUsage) -> str | None:
    """Pydantic AI's text when the turn may make no further request, else None."""
    if limits is None:
        return None
    try:
        limits.check_before_request(used)
    except UsageLimitExceeded as error:
        return str(error)
    return None


def check_after_response(
    limits: UsageLimits | None,
    used: RunUsage,
    step_usage: RunUsage,
    responses: Iterable[ModelMessage],
    deferred_calls: int,
) -> None:
    """Check a model step's response as the plain run checks it, in the same order.

    `used` is the turn's usage before the step, `step_usage` the step's, `responses` the
    step's new messages, and `deferred_calls` the function tool calls it asks the session
    to run.

    Raises:
        TurnAborted: A limit is spent: Pydantic AI's `UsageLimitExceeded` text.
    """
    if limits is None:
        return
    total = used + step_usage
    try:
        limits.check_tokens(total)
        limits.check_cost(total, warn_if_cost_unavailable=False)
        for response in responses:
            if isinstance(response, ModelResponse):
                limits.check_per_request_input_tokens(response.usage.input_tokens)
        if deferred_calls and limits.tool_calls_limit is not None:
            projected = copy(total)
            projected.tool_calls += deferred_calls
            limits.check_before_tool_call(projected)
    except UsageLimitExceeded as error:
        raise TurnAborted(str(error)) from error


def refusing_model(agent: AbstractAgent[Any, Any], model: Model | str | None, reason: str) -> Model:
    """The step's model (`model`, else the agent's) for a turn that may make no further request.

    Pydantic AI decides whether a step sends a request at all: a step that resumes a
    response whose output tool call ends the run sends none, and must still complete. So
    the step runs as usual, with the turn's model (its profile, settings and native tools
    as ever), and the turn fails only if Pydantic AI asks this model to send a request.
    """
    chosen = model if model is not None else agent.model
    if chosen is None:  # the runner refuses a step without a model before it gets here
        raise ValueError("the step has no model to refuse requests for")
    return _RefusingModel(chosen, reason)


class _RefusingModel(WrapperModel):
    """The wrapped model, except that a request fails the turn before anything is sent."""

    def __init__(self, wrapped: Model | KnownModelName | str, reason: str) -> None:
        super().__init__(wrapped)
        self.reason = reason

    def _refuse(self) -> NoReturn:
        raise TurnAborted(self.reason)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        self._refuse()

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        self._refuse()
        yield  # pragma: no cover  (makes this a generator; never reached)
