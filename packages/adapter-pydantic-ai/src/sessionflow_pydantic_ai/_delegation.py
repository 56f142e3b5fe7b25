"""Agent delegation inside a tool step: every nested run's model calls and tool calls journaled.

A tool that awaits another agent (``await other_agent.run(..., usage=ctx.usage)``, Pydantic
AI's agent delegation, or a programmatic hand-off) runs that agent inside its own tool step:
the session cannot cut user code into steps from outside. So while a tool step runs the
parent's tool, every Pydantic AI agent run started in it (at any depth) gets one more
capability, `_Journaled`, outermost, that records each of its model responses and tool
results in the step's journal (`sessionflow.kit.current_step_journal`), keyed by the parent
call and their order in it:

- model call ``n`` (counted from 1, in request order, across the scope's runs) under
  ``<scope>.<n>``; its response is journaled as Pydantic AI's own JSON;
- tool call ``<scope>.<inner call ID>``, whose own nested runs form the scope
  ``<scope>.<inner call ID>`` (so depth 2 is ``call_a.call_b.1``).

A retried step (its worker died) runs the parent's tool again; each nested request whose
response the journal holds returns it without a request, and each nested tool call whose
result it holds returns that, so only the call that was running repeats. A nested tool's
effect decides the rest, as the session's own tool steps do: a read or an idempotent write
runs again; a call that needs a person's approval under the session's floor (unclassified,
or a non-idempotent write without a declared policy that waives approval) is refused, since
a person cannot be asked from inside a running step; a non-idempotent write whose policy
waives approval is journaled as started before it runs, and a retry that finds it started
but not finished tells the nested model its outcome is unknown, never runs it again.

Nested runs of any kind are journaled (`run`, `run_sync`, `run_stream`, `iter`): they all
go through `Agent.iter`, and a streamed request takes a recorded response from
`wrap_model_request` as a plain one does. Pydantic AI has no run-wide hook for agents it
does not know, so `install` wraps `Agent.iter` once per process; outside a delegation scope
it calls the original directly.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncGenerator, Callable, Generator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, cast

import pydantic_core
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.capabilities import (
    AbstractCapability,
    CapabilityOrdering,
    ValidatedToolArgs,
    WrapModelRequestHandler,
    WrapToolExecuteHandler,
)
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, ToolCallPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import RunUsage

from sessionflow import AgentEventType, ToolEffect, UserError
from sessionflow.kit import AgentEventWriter, StepJournal, current_step_journal, declared_policy
from sessionflow_pydantic_ai._effects import framework_effect, marked_tools

__all__ = ["DelegationRefused", "delegation_scope", "install", "usage_delta"]

OUTCOME_UNKNOWN = (
    "The outcome of this tool call is unknown: it may or may not have taken effect "
    "(the step running it stopped before it reported back). Check before calling it again."
)


class DelegationRefused(UserError):
    """A nested agent's call cannot run in a tool step: its tool needs a person's approval, which a
    running step cannot ask, or its request differs from the one an earlier attempt made."""


@dataclass
class _Scope:
    """The nested runs under one call: their journal keys' prefix and counters."""

    prefix: str
    journal: StepJournal | None
    events: AgentEventWriter | None
    model_calls: int = 0
    tool_keys: set[str] = field(default_factory=lambda: set[str]())

    def next_model_key(self) -> str:
        self.model_calls += 1
        return f"{self.prefix}.{self.model_calls}"

    def tool_key(self, call_id: str) -> str:
        """``<prefix>.<call ID>``; a call ID a nested run repeats gets ``#2``, ``#3`` in order."""
        key, n = f"{self.prefix}.{call_id}", 1
        while key in self.tool_keys:
            n += 1
            key = f"{self.prefix}.{call_id}#{n}"
        self.tool_keys.add(key)
        return key

    def child(self, key: str) -> _Scope:
        return _Scope(prefix=key, journal=self.journal, events=self.events)

    def publish(self, kind: str, data: dict[str, Any]) -> None:
        if self.events is not None:
            self.events.write_event(AgentEventType.CUSTOM_EVENT, {"kind": kind, **data})


_SCOPE: ContextVar[_Scope | None] = ContextVar("sessionflow_pydantic_ai_delegation", default=None)


@contextmanager
def delegation_scope(call_id: str, events: AgentEventWriter | None) -> Generator[None]:
    """Journal every agent run started inside the block under ``call_id`` (the tool step's call)."""
    token = _SCOPE.set(_Scope(prefix=call_id, journal=current_step_journal(), events=events))
    try:
        yield
    finally:
        _SCOPE.reset(token)


def usage_delta(before: RunUsage, after: RunUsage) -> RunUsage | None:
    """What nested runs added to a run's usage (``usage=ctx.usage``), or None when nothing.

    ``before`` is taken as the parent's tool starts and ``after`` once it returned: Pydantic
    AI has counted the parent's own call by then (its innermost execution counts a call that
    returns), which the session counts from the call's record, so it is not part of the delta.
    """
    delta = RunUsage(
        requests=after.requests - before.requests,
        tool_calls=max(0, after.tool_calls - before.tool_calls - 1),
        input_tokens=after.input_tokens - before.input_tokens,
        output_tokens=after.output_tokens - before.output_tokens,
        cache_write_tokens=after.cache_write_tokens - before.cache_write_tokens,
        cache_read_tokens=after.cache_read_tokens - before.cache_read_tokens,
    )
    return delta if delta.requests or delta.tool_calls or delta.input_tokens or delta.output_tokens else None


_installed = False


def install() -> None:
    """Wrap `Agent.iter` once, so runs started inside a delegation scope are journaled."""
    global _installed
    if _installed:
        return
    original = cast(Callable[..., Any], Agent.iter)

    @asynccontextmanager
    async def iter(self: Agent[Any, Any], *args: Any, **kwargs: Any) -> AsyncGenerator[Any]:
        scope = _SCOPE.get()
        if scope is None:
            async with original(self, *args, **kwargs) as run:
                yield run
            return
        # The nested run's own tools run in scopes of their own (`_Journaled.wrap_tool_execute`).
        capabilities = [*(kwargs.pop("capabilities", None) or ()), _Journaled(scope=scope, agent=self)]
        async with original(self, *args, capabilities=capabilities, **kwargs) as run:
            yield run

    iter.__doc__ = Agent.iter.__doc__
    Agent.iter = iter
    _installed = True


@dataclass
class _Journaled(AbstractCapability[Any]):
    """One nested run's model responses and tool results, in and out of the step's journal."""

    scope: _Scope
    agent: Agent[Any, Any]
    _marked: dict[str, object] | None = None

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    def get_ordering(self) -> CapabilityOrdering | None:
        # Outermost: what is journaled is what the run got, after every other hook.
        return CapabilityOrdering(position="outermost")

    async def wrap_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        handler: WrapModelRequestHandler,
    ) -> ModelResponse:
        key = self.scope.next_model_key()
        digest = _request_digest(request_context)
        journal = self.scope.journal
        recorded = await journal.read(key) if journal is not None else None
        if recorded is not None:
            entry = json.loads(recorded)
            if entry.get("request") != digest:
                raise DelegationRefused(
                    f"the nested run's model call {key!r} differs from the one an earlier attempt made: "
                    "a delegated run must send the same requests when its step runs again"
                )
            response = ModelMessagesTypeAdapter.validate_python([entry["response"]])[0]
            assert isinstance(response, ModelResponse)
            # The run names the model that served a response when it commits it; with no request
            # made, the model it would have asked.
            response.model_id = (
                response.model_id or request_context.model_id or request_context.model.model_id
            )
            self.scope.publish("subagent_model_call", _model_event(key, self.agent, response, replayed=True))
            return response
        response = await handler(request_context)
        if journal is not None:
            dumped = ModelMessagesTypeAdapter.dump_python([response], mode="json")[0]
            await journal.write(
                key, json.dumps({"request": digest, "response": dumped}, separators=(",", ":"))
            )
        self.scope.publish("subagent_model_call", _model_event(key, self.agent, response, replayed=False))
        return response

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        handler: WrapToolExecuteHandler,
    ) -> Any:
        key = self.scope.tool_key(call.tool_call_id)
        journal = self.scope.journal
        effect = self._effect(call.tool_name, tool_def)
        base = {"call_id": key, "tool_name": call.tool_name, "agent": self.agent.name, "effect": effect.value}
        recorded = await journal.read(key) if journal is not None else None
        if recorded is not None:
            entry = json.loads(recorded)
            state = entry.get("state")
            if state == "done":
                # Counted as the call counted when it ran: Pydantic AI counts a call that returns.
                ctx.usage.tool_calls += 1
                self.scope.publish("subagent_tool_call", {**base, "replayed": True, "outcome": "succeeded"})
                return entry["result"]
            if state == "retry":
                self.scope.publish("subagent_tool_call", {**base, "replayed": True, "outcome": "retry"})
                raise ModelRetry(str(entry["message"]))
            # Started and never finished: the write may have happened. As the session does for
            # outcome_unknown, the model is told so; the call does not run again.
            self.scope.publish("subagent_tool_call", {**base, "replayed": True, "outcome": "outcome_unknown"})
            return OUTCOME_UNKNOWN
        if not effect.is_retryable:
            self._check_approval(call.tool_name, key, effect)
            if journal is not None:
                await journal.write(key, json.dumps({"state": "started"}))
        self.scope.publish("subagent_tool_call_started", base)
        token = _SCOPE.set(self.scope.child(key))
        try:
            result = await handler(args)
        except ModelRetry as retry:
            if journal is not None and not effect.is_retryable:
                await journal.write(key, json.dumps({"state": "retry", "message": retry.message}))
            self.scope.publish("subagent_tool_call", {**base, "replayed": False, "outcome": "retry"})
            raise
        finally:
            _SCOPE.reset(token)
        if journal is not None:
            value = pydantic_core.to_jsonable_python(result)
            await journal.write(key, json.dumps({"state": "done", "result": value}, separators=(",", ":")))
        self.scope.publish("subagent_tool_call", {**base, "replayed": False, "outcome": "succeeded"})
        return result

    def _effect(self, name: str, tool_def: ToolDefinition) -> ToolEffect:
        if self._marked is None:
            self._marked = marked_tools(self.agent.toolsets)
        mark = self._marked.get(name)
        policy = declared_policy(mark) if mark is not None else None
        if policy is not None:
            return policy.effect
        return framework_effect(tool_def, mark) or ToolEffect.UNCLASSIFIED

    def _check_approval(self, name: str, key: str, effect: ToolEffect) -> None:
        """Refuse a call the session's floor would hold for a person: none can be asked from here."""
        mark = (self._marked or {}).get(name)
        policy = declared_policy(mark) if mark is not None else None
        if policy is not None and policy.requires_approval is False:
            return
        raise DelegationRefused(
            f"tool {name!r} of the delegated agent {self.agent.name or '(unnamed)'} (call {key!r}) is "
            f"{effect.value!r}, which the session's floor holds for a person's approval, and a delegated "
            "run inside a tool step cannot ask for one: declare its effect (sessionflow.effect(tool, "
            "'read' or 'idempotent_write')) or a policy that waives approval "
            "(sessionflow.effect(tool, policy=ToolPolicy(effect=..., requires_approval=False)))"
        )


_VOLATILE = frozenset({"timestamp", "run_id", "conversation_id"})
"""Message fields that differ between two attempts of the same run: not part of what was asked."""


def _request_digest(request_context: ModelRequestContext) -> str:
    """What the nested run sent: its messages as Pydantic AI's JSON, without the volatile fields, hashed."""
    body = json.dumps(
        _without_volatile(ModelMessagesTypeAdapter.dump_python(request_context.messages, mode="json")),
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(body.encode()).hexdigest()[:32]


def _without_volatile(value: Any) -> Any:
    if isinstance(value, dict):
        items = cast(dict[str, Any], value).items()
        return {key: _without_volatile(item) for key, item in items if key not in _VOLATILE}
    if isinstance(value, list):
        return [_without_volatile(item) for item in cast(list[Any], value)]
    return value


def _model_event(
    key: str, agent: Agent[Any, Any], response: ModelResponse, *, replayed: bool
) -> dict[str, Any]:
    return {
        "call_id": key,
        "agent": agent.name,
        "replayed": replayed,
        "tool_calls": [part.tool_call_id for part in response.parts if isinstance(part, ToolCallPart)],
        "input_tokens": response.usage.input_tokens,
        "output_tokens": response.usage.output_tokens,
    }
