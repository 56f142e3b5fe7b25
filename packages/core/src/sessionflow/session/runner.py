"""The contract every framework adapter implements."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol, runtime_checkable

from sessionflow.session.approval_digest import approved_digest_of
from sessionflow.session.errors import SessionStateError
from sessionflow.session.events import AgentEventWriter
from sessionflow.session.invocation import ToolInvocation
from sessionflow.session.messages import AgentMessage, FrameworkMessage
from sessionflow.session.outcomes import AgentTurnOutcome
from sessionflow.session.tool_state import state_updates_in_model_order
from sessionflow.session.tools import AgentToolCall, ToolEffect, ToolExecutionResult, ToolPolicy
from sessionflow.session.verify import VerifyResult

__all__ = [
    "AgentFrameworkRunner",
    "AgentTurnContext",
    "DeferredToolExecution",
    "ImageInput",
    "idempotency_key",
    "is_runner",
]


def idempotency_key(session_id: str, turn_id: str, tool_call_id: str) -> str:
    """The key a write tool can use to make a repeat harmless; equal on every attempt."""
    return f"{session_id}/{turn_id}/{tool_call_id}"


class _SessionIdAlias:
    """`session_id` for a record whose field keeps its old name, `flow_id`, as an alias.

    The field keeps its name so that callers that construct the records with ``flow_id=``
    keep working; new code reads `session_id`.
    """

    flow_id: str

    @property
    def session_id(self) -> str:
        """The session (workflow) ID; the name to use in new code."""
        return self.flow_id


@dataclass(frozen=True, kw_only=True)
class AgentTurnContext(_SessionIdAlias):
    """Committed session state handed to `run_model_step`.

    Read the session ID as `session_id`; `flow_id` is its alias.
    """

    flow_id: str
    turn_id: str
    attempt: int
    messages: Sequence[AgentMessage]
    framework_run_state: str | None
    tool_calls: Mapping[str, AgentToolCall]
    policy_resolver: Callable[[str, ToolEffect | None], ToolPolicy]
    events: AgentEventWriter
    heartbeat: Callable[..., None]
    session_settings: Mapping[str, Any] = field(default_factory=lambda: {})
    """Settings sent with the message that started this turn."""
    tool_policies: Mapping[str, ToolPolicy] = field(default_factory=lambda: {})
    """The session's explicit policies by tool name (`AgentSessionOptions.tool_policies`):
    they win over a policy the tool declares (`resolve_tool_policy`'s ``declared_policy``)."""
    carried_state: str | None = None
    """What the last completed turn carried (`TurnCompleted.carry`), whole; None when none.

    Every model step of the turn gets it, the same value each time: a runner reads it where
    its framework starts a run, and passes it on in `TurnCompleted.carry` to keep it."""
    steered_messages: Sequence[FrameworkMessage] = ()
    """User messages that joined the running turn just before this model step (double-texting
    `steer`), oldest first, each built by this runner's `build_user_message`. Only a runner
    whose `accepts_steering` says so gets any. It puts them in its run's history after the
    tool results of the step before (at a first step: after the turn's messages), as its
    framework puts a user message mid-run, calls the model, and keeps them in the run state
    it returns; the turn's `TurnCompleted.new_messages` hold them where they sit, as user
    messages. A retried attempt gets the same ones. They are not in `messages`."""

    @property
    def is_resuming(self) -> bool:
        return self.framework_run_state is not None

    def recorded_tool_call(self, tool_call_id: str) -> AgentToolCall:
        try:
            return self.tool_calls[tool_call_id]
        except KeyError:
            raise KeyError(f"no tool call {tool_call_id!r} in {self.turn_id!r}") from None

    def resolve_tool_policy(
        self,
        name: str,
        framework_effect: ToolEffect | None = None,
        *,
        declared_policy: ToolPolicy | None = None,
    ) -> ToolPolicy:
        """The policy of a call of tool ``name``.

        The session's explicit policy (`tool_policies`) first, then the whole policy the
        tool declares (``declared_policy``: `sessionflow.effect(tool, ..., policy=...)`),
        then a policy of ``framework_effect`` (what the tool's mark, metadata or MCP hints
        say), then the session's default effect.
        """
        if declared_policy is not None and name not in self.tool_policies:
            return declared_policy
        return self.policy_resolver(name, framework_effect)

    def state_updates(self) -> list[tuple[str, str]]:
        """The state updates this step applies: ``(tool_call_id, update)``, in model order.

        These are the updates of the calls the previous model step deferred (calls of
        earlier steps were applied by the step after them). The runner applies them to
        its run state with the framework's own merge rule (LangGraph: the reducers); a
        framework without one applies them one after another in this order, the order
        the model asked for the calls, not the order they finished in. A call that
        failed, was rejected or has an unknown outcome carries no update.
        """
        return state_updates_in_model_order(self.tool_calls.values())


@dataclass(frozen=True, kw_only=True)
class DeferredToolExecution(_SessionIdAlias):
    """One approved tool call for `execute_deferred_tool_call`.

    Read the session ID as `session_id`; `flow_id` is its alias. A handler gets
    `invocation`, this call's handler-facing view (see `ToolInvocation` for why there are
    two classes).
    """

    flow_id: str
    turn_id: str
    tool_call: AgentToolCall
    attempt: int
    events: AgentEventWriter
    heartbeat: Callable[..., None]
    session_settings: Mapping[str, Any] = field(default_factory=lambda: {})
    """Settings of the turn that made this call, as the session recorded them."""
    run_state: str | None = None
    """The run state of the model step that deferred this call (framework-encoded), so a
    tool can see the framework's state; None when the session has none for it."""

    @property
    def idempotency_key(self) -> str:
        return idempotency_key(self.session_id, self.turn_id, self.tool_call.tool_call_id)

    @cached_property
    def invocation(self) -> ToolInvocation:
        """What the tool's handler is told about this run; the one place it is built.

        The tool activity makes it `sessionflow.kit.current_tool_invocation()` while the runner
        runs this call, and runners hand it to handlers that take it as an argument.
        """
        return ToolInvocation(
            tool_call_id=self.tool_call.tool_call_id,
            idempotency_key=self.idempotency_key,
            attempt=self.attempt,
            session_id=self.session_id,
            turn_id=self.turn_id,
            tool_name=self.tool_call.tool_name,
            session_settings=self.session_settings,
            answer=self.tool_call.answer,
            run_state=self.run_state,
            approved_digest=approved_digest_of(self.tool_call),
            effect=self.tool_call.policy.effect.value,
        )


@dataclass(frozen=True, kw_only=True)
class ImageInput:
    """An image attached to a user message; `path` is in a store every worker reaches."""

    path: str
    media_type: str


@runtime_checkable
class AgentFrameworkRunner(Protocol):
    """Translates one framework to the session. Stateless between calls; every call may repeat.

    Subclass it: the first three methods are required, and the optional abilities
    (`tool_catalog`, `build_user_message_with_images`) have defaults that say "not
    offered". The session calls every method on every runner and probes for none, so a
    runner that wraps another (the CLI's per-turn runner) forwards them all and keeps
    every ability of the runner it wraps.

    Tool state: a tool step gets the run state of the model step that deferred it
    (`DeferredToolExecution.run_state`) and may return `ToolExecutionResult.state_update`.
    The next model step applies `AgentTurnContext.state_updates()` with the framework's own
    merge rule; a framework without one applies them one after another in model order
    (the order of the calls in the model's response, whichever finished first).
    """

    def build_user_message(self, text: str) -> FrameworkMessage: ...

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome: ...

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult: ...

    def tool_catalog(self, session_settings: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]] | None:
        """The tools a turn offers, with their JSON schemas; None (the default) when unknown.

        With a catalog the session checks every proposal before any tool step is
        scheduled: a tool not in the catalog is refused as `not_allowed`, and arguments
        that fail the schema as `invalid_arguments`; the model sees the reason as the
        call's result. Without one, every proposal goes on to its tool step.
        """
        return None

    def build_user_message_with_images(self, text: str, images: Sequence[ImageInput]) -> FrameworkMessage:
        """A user message with images for the model; by default the runner takes none.

        Raises:
            SessionStateError: This runner does not send images to its model (the default).
        """
        raise SessionStateError("this runner does not accept images")

    def accepts_steering(self) -> bool:
        """Whether a model step takes `AgentTurnContext.steered_messages`; False by default.

        A session whose runner says False queues a message sent under double-texting
        `steer` for the next turn instead. The session asks once, when it starts.
        """
        return False

    def worker_scope(self) -> AbstractAsyncContextManager[None]:
        """What the runner holds while a worker serves it (clients, connections); by default nothing.

        `serve_agent_flows` (and `run_agent_worker`) enter it before the worker polls and
        leave it after the worker has shut down, so what it opens is closed once no step runs.
        """
        return nullcontext()

    async def verify_tool_call(self, call: DeferredToolExecution) -> VerifyResult | None:
        """Whether a write whose step died took effect; None (the default): no verify.

        The session asks only for a call the runner deferred with
        `DeferredToolCall.verifiable`, in a read step of its own (retried like a read)
        with the write's idempotency key (`call.idempotency_key`); `call.attempt` is the
        verify step's attempt. Answer `TookEffect(output)`, `NoEffect(message)` or
        `EffectUnknown(reason)` (see `sessionflow.session.verify`). Raising retries the
        step; when every attempt fails the call stays ``outcome_unknown``.
        """
        return None


def is_runner(value: object) -> bool:
    """Whether ``value`` implements `AgentFrameworkRunner`: what flows and plugins check at build.

    Takes `object` so the runtime check survives the static type of the call site.
    """
    return isinstance(value, AgentFrameworkRunner)
