"""The agent's hooks (`HookProvider`s, ``agent.hooks``) fired where, and as often as, plain Strands fires them.

A plain ``agent(prompt)`` fires, in order: ``BeforeInvocationEvent``, ``MessageAddedEvent``
(the prompt), then per model call ``BeforeModelCallEvent``, ``AfterModelCallEvent``,
``MessageAddedEvent`` (the reply); per tool response ``BeforeToolsEvent``, per call
``BeforeToolCallEvent`` and ``AfterToolCallEvent``, ``AfterToolsEvent`` and
``MessageAddedEvent`` (the results); ``AfterInvocationEvent`` last. Here each fires in the
step that does what it wraps:

* the invocation's start (``BeforeInvocationEvent`` and the prompt's ``MessageAddedEvent``)
  in the turn's first model step only, not in the later steps that carry the turn on;
* the model events and the reply's ``MessageAddedEvent`` in every model step, once per call;
* ``BeforeToolsEvent`` in the model step that asked for the tools, ``AfterToolsEvent`` and
  the results' ``MessageAddedEvent`` in the next model step, where the results join;
* ``BeforeToolCallEvent`` and ``AfterToolCallEvent`` in the tool step, by Strands' own tool
  executor around the real tool: a hook that cancels the call or replaces the tool or its
  input does so before the tool runs, and the model step that takes the result fires neither;
* ``AfterInvocationEvent`` in the step that ends the turn.

A step that runs again (a retried model step, a read tool's retry) fires its hooks again:
at least once, like the code they wrap.

Strands registers callbacks of its own on every agent: the conversation manager's, the
model retry strategy's, agent delegation's and the model plugin's. They do what the session
does in its own way (its retries, its stored messages), so they are left out (`user_hooks`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, cast

from strands.agent import Agent, AgentResult
from strands.agent.state import AgentState
from strands.hooks import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolsEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolsEvent,
    HookRegistry,
    MessageAddedEvent,
)
from strands.interrupt import Interrupt, _InterruptState  # pyright: ignore[reportPrivateUsage]
from strands.telemetry.metrics import EventLoopMetrics
from strands.tools.registry import ToolRegistry

from sessionflow import UnsupportedOptionError

__all__ = ["StepHooks", "borrowed_registry", "tool_agent", "user_hooks"]

Message = dict[str, Any]


def user_hooks(agent: Agent) -> HookRegistry:
    """The agent's hook registry without the callbacks Strands itself registers on every
    agent for the work the session does its own way (see the module's docstring)."""
    internal = {
        id(agent.conversation_manager),
        id(getattr(agent, "_retry_strategy", None)),
    }
    source = cast(dict[type, list[Any]], agent.hooks._registered_callbacks)  # pyright: ignore[reportPrivateUsage]
    registry = HookRegistry()
    kept = cast(dict[type, list[Any]], registry._registered_callbacks)  # pyright: ignore[reportPrivateUsage]
    for event_type, entries in source.items():
        for entry in entries:
            callback = getattr(entry, "callback", entry)
            owner = getattr(callback, "__self__", None)
            if owner is not None and id(owner) in internal:
                continue
            if type(owner).__module__ == "strands.agent._agent_delegation":
                continue
            if str(getattr(callback, "__qualname__", "")).startswith("_ModelPlugin."):
                continue
            kept.setdefault(event_type, []).append(entry)
    return registry


def borrowed_registry(registry: ToolRegistry) -> ToolRegistry:
    """A shallow copy of the agent's tool registry (the same tools) that owns none of its tool
    providers: a copy of the agent is cleaned up when collected (``Agent.__del__``), and a
    registry that owned the providers would stop the shared agent's `MCPClient`s then."""
    view = copy.copy(registry)
    view._tool_providers = []  # pyright: ignore[reportPrivateUsage]
    return view


def tool_agent(
    agent: Agent,
    messages: Sequence[Message],
    agent_state: dict[str, Any],
    answered: Mapping[str, Interrupt] | None = None,
) -> Agent:
    """A copy of the agent holding the session's messages and `agent.state`, with its users'
    hooks only: what hooks and tools see as the agent (``event.agent``, ``ToolContext.agent``).
    The one shared agent is never written.

    Its interrupt state is its own: empty, or (a call resumed with answers) holding the
    ``answered`` interrupts with their responses, as Strands' resume leaves it, so an
    ``interrupt(name)`` asked again returns its response."""
    view = copy.copy(agent)
    view.tool_registry = borrowed_registry(agent.tool_registry)
    view._interrupt_state = _InterruptState(  # pyright: ignore[reportPrivateUsage]
        interrupts=dict(answered or {}), activated=bool(answered)
    )
    view.state = AgentState(copy.deepcopy(agent_state))
    view.messages = cast(Any, copy.deepcopy(list(messages)))
    view.hooks = user_hooks(agent)
    return view


class StepHooks:
    """The hook events one model step fires, on a view of the agent (`tool_agent`) whose
    messages grow as plain Strands' ``agent.messages`` would at each event.

    A hook's write that a session cannot honour yet is refused with `UnsupportedOptionError`
    rather than dropped: the turn would otherwise go on differently from a plain run.
    """

    def __init__(self, agent: Agent, messages: Sequence[Message], agent_state: dict[str, Any]) -> None:
        self.agent = tool_agent(agent, messages, agent_state)
        self._hooks = self.agent.hooks

    async def start_invocation(self) -> Message | None:
        """``BeforeInvocationEvent`` and the prompt's ``MessageAddedEvent``, at a turn's first
        model step; the cancel message when a hook cancels the invocation."""
        messages = cast(list[Message], self.agent.messages)
        prompt = messages[-1:] if messages and messages[-1].get("role") == "user" else []
        self.agent.messages = cast(Any, messages[: len(messages) - len(prompt)])
        offered = copy.deepcopy(prompt)
        event, interrupts = await self._hooks.invoke_callbacks_async(
            BeforeInvocationEvent(agent=self.agent, invocation_state={}, messages=cast(Any, offered))
        )
        _refuse_interrupts(interrupts, "BeforeInvocationEvent")
        if event.cancel:
            text = event.cancel if isinstance(event.cancel, str) else "invocation denied by hook"
            cancelled: Message = {"role": "assistant", "content": [{"text": text}]}
            await self.message_added(cancelled)
            return cancelled
        if event.messages is not None and event.messages != prompt:
            raise UnsupportedOptionError(
                "BeforeInvocationEvent.messages",
                "a hook replaced the invocation's messages; the session has stored the user's "
                "message already, so change it before send_user_message instead",
            )
        for message in prompt:
            await self.message_added(message)
        return None

    async def message_added(self, message: Message) -> None:
        self.agent.messages.append(cast(Any, message))
        await self._hooks.invoke_callbacks_async(
            MessageAddedEvent(agent=self.agent, message=cast(Any, message))
        )

    async def before_model_call(self) -> str | None:
        """``BeforeModelCallEvent``; the cancel text when a hook cancels the call."""
        event, interrupts = await self._hooks.invoke_callbacks_async(
            BeforeModelCallEvent(agent=self.agent, invocation_state={})
        )
        _refuse_interrupts(interrupts, "BeforeModelCallEvent")
        if event.cancel:
            return event.cancel if isinstance(event.cancel, str) else "model call denied by hook"
        return None

    async def after_model_call(self, stop_reason: str, message: Message) -> None:
        event, _ = await self._hooks.invoke_callbacks_async(
            AfterModelCallEvent(
                agent=self.agent,
                invocation_state={},
                stop_response=AfterModelCallEvent.ModelStopResponse(
                    stop_reason=cast(Any, stop_reason), message=cast(Any, message)
                ),
            )
        )
        if event.retry:
            raise UnsupportedOptionError(
                "AfterModelCallEvent.retry",
                "a hook asked to call the model again after an answer; a session calls the model "
                "once per model step and retries failed steps with its own retry policy",
            )

    async def before_tools(self, message: Message) -> str | None:
        """``BeforeToolsEvent`` for the model's tool response; the cancel text when a hook
        cancels its calls."""
        event, interrupts = await self._hooks.invoke_callbacks_async(
            BeforeToolsEvent(agent=self.agent, message=cast(Any, message), invocation_state={})
        )
        _refuse_interrupts(interrupts, "BeforeToolsEvent")
        if event.cancel:
            return event.cancel if isinstance(event.cancel, str) else "Tool cancelled by hook"
        return None

    async def tools_ended(self, results: Message) -> None:
        """``AfterToolsEvent`` and the results' ``MessageAddedEvent``, where the results join."""
        event, _ = await self._hooks.invoke_callbacks_async(
            AfterToolsEvent(agent=self.agent, message=cast(Any, results), invocation_state={})
        )
        if event.end_turn:
            raise UnsupportedOptionError(
                "AfterToolsEvent.end_turn",
                "a hook ended the turn after its tools; sessions do not support it yet",
            )
        await self.message_added(results)

    async def end_invocation(self, last: Message) -> None:
        """``AfterInvocationEvent``, in the step that ends the turn."""
        result = AgentResult(
            stop_reason="end_turn", message=cast(Any, last), metrics=EventLoopMetrics(), state={}
        )
        event, _ = await self._hooks.invoke_callbacks_async(
            AfterInvocationEvent(agent=self.agent, invocation_state={}, result=result)
        )
        if event.resume is not None:
            raise UnsupportedOptionError(
                "AfterInvocationEvent.resume",
                "a hook asked the agent to go on with new input; send it as the session's next "
                "user message instead",
            )


def _refuse_interrupts(interrupts: Sequence[Any], where: str) -> None:
    if interrupts:
        raise UnsupportedOptionError(
            f"{where}.interrupt",
            f"an interrupt raised from {where} is not supported by sessionflow-strands-agents; raise it "
            "in a BeforeToolCallEvent hook or in the tool (tool_context.interrupt), where it becomes a question",
        )
