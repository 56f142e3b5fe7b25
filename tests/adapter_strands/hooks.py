"""Hook providers from Strands' docs ("Hooks"), each logging what it sees to a tool log.

`RecordingHooks` is the docs' logging hook over every event of an agent's run; `ToolGuard`
the docs' tool interception: it replaces a call's input, or cancels the call, before the
tool runs. Both log to the run's `InvocationLog` (kind ``hook``), so a test compares the
sequence a plain run fires with a session's.
"""

from __future__ import annotations

from typing import Any, cast

from strands import Agent
from strands.hooks import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    AfterToolsEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    BeforeToolsEvent,
    HookProvider,
    HookRegistry,
    MessageAddedEvent,
)
from strands.models import Model

from sessionflow.testing import InvocationLog
from tests.adapter_strands.agents import letter_counter_agent

__all__ = [
    "RecordingHooks",
    "ToolGuard",
    "guarded_letter_counter_agent",
    "hook_calls",
    "recorded_letter_counter_agent",
]


def _blocks(message: Any) -> str:
    """A message's role and the kinds of its blocks (``assistant:text+toolUse``)."""
    blocks = cast(list[dict[str, Any]], message.get("content") or [])
    kinds = [next(iter(block)) for block in blocks]
    return f"{message['role']}:{'+'.join(kinds)}"


class RecordingHooks(HookProvider):
    """Logs every event of the agent's run, with what identifies it."""

    def __init__(self, log: InvocationLog) -> None:
        self.log = log

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeInvocationEvent, self.before_invocation)
        registry.add_callback(AfterInvocationEvent, self.after_invocation)
        registry.add_callback(MessageAddedEvent, self.message_added)
        registry.add_callback(BeforeModelCallEvent, self.before_model)
        registry.add_callback(AfterModelCallEvent, self.after_model)
        registry.add_callback(BeforeToolsEvent, self.before_tools)
        registry.add_callback(AfterToolsEvent, self.after_tools)
        registry.add_callback(BeforeToolCallEvent, self.before_tool)
        registry.add_callback(AfterToolCallEvent, self.after_tool)

    def _record(self, event: str, **fields: Any) -> None:
        self.log.record("hook", event, **fields)

    def before_invocation(self, event: BeforeInvocationEvent) -> None:
        self._record("BeforeInvocation", messages=[_blocks(m) for m in event.messages or []])

    def after_invocation(self, event: AfterInvocationEvent) -> None:
        result = event.result
        self._record("AfterInvocation", text=str(result) if result is not None else None)

    def message_added(self, event: MessageAddedEvent) -> None:
        self._record("MessageAdded", message=_blocks(event.message), count=len(event.agent.messages))

    def before_model(self, event: BeforeModelCallEvent) -> None:
        self._record("BeforeModelCall", count=len(event.agent.messages))

    def after_model(self, event: AfterModelCallEvent) -> None:
        response = event.stop_response
        assert response is not None
        self._record("AfterModelCall", stop_reason=response.stop_reason, message=_blocks(response.message))

    def before_tools(self, event: BeforeToolsEvent) -> None:
        self._record("BeforeTools", message=_blocks(event.message))

    def after_tools(self, event: AfterToolsEvent) -> None:
        self._record("AfterTools", message=_blocks(event.message))

    def before_tool(self, event: BeforeToolCallEvent) -> None:
        self._record("BeforeToolCall", tool=event.tool_use["name"], input=event.tool_use["input"])

    def after_tool(self, event: AfterToolCallEvent) -> None:
        content = event.result.get("content") or []
        text = " ".join(str(c.get("text", "")) for c in content)
        self._record(
            "AfterToolCall", tool=event.tool_use["name"], status=event.result.get("status"), text=text
        )


class ToolGuard(HookProvider):
    """The docs' tool interception: a call counting the letter ``x`` is made to count ``r``
    (its input replaced), a call about the word ``secret`` is cancelled; both before the tool runs."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.guard)

    def guard(self, event: BeforeToolCallEvent) -> None:
        arguments = event.tool_use["input"]
        if arguments.get("word") == "secret":
            event.cancel_tool = "that word is off limits"
        elif arguments.get("letter") == "x":
            event.tool_use["input"] = {**arguments, "letter": "r"}


class CallGate(HookProvider):
    """Cancels before anything runs: the tools of a response that asks about the word
    ``secret`` (``BeforeToolsEvent``), and a model call that would follow tool results
    (``BeforeModelCallEvent``), each with its text."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolsEvent, self.tools)
        registry.add_callback(BeforeModelCallEvent, self.model)

    def tools(self, event: BeforeToolsEvent) -> None:
        blocks = cast(list[dict[str, Any]], event.message.get("content") or [])
        if any(b["toolUse"]["input"].get("word") == "secret" for b in blocks if "toolUse" in b):
            event.cancel = "no tools about secrets"

    def model(self, event: BeforeModelCallEvent) -> None:
        last = cast(dict[str, Any], event.agent.messages[-1])
        if any("toolResult" in b for b in last["content"]):
            event.cancel = "no second look"


def gated_letter_counter_agent(model: Model, log: InvocationLog) -> Agent:
    agent = letter_counter_agent(model, log)
    agent.hooks.add_hook(CallGate())
    agent.hooks.add_hook(RecordingHooks(log))
    return agent


def recorded_letter_counter_agent(model: Model, log: InvocationLog) -> Agent:
    agent = letter_counter_agent(model, log)
    agent.hooks.add_hook(RecordingHooks(log))
    return agent


def guarded_letter_counter_agent(model: Model, log: InvocationLog) -> Agent:
    agent = letter_counter_agent(model, log)
    agent.hooks.add_hook(ToolGuard())
    agent.hooks.add_hook(RecordingHooks(log))
    return agent


def hook_calls(log: InvocationLog) -> list[dict[str, Any]]:
    """The hooks' calls, in order, without the log's own fields."""
    skip = {"kind", "pid", "at", "worker"}
    return [{k: v for k, v in e.items() if k not in skip} for e in log.entries() if e.get("kind") == "hook"]
