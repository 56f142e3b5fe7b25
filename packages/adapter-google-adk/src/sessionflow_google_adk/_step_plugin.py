"""The ADK plugin that cuts one durable step out of ADK's own loop.

A plugin's callbacks run before the agent's and short-circuit them, which is ADK's own
extension point for this (Temporal's ADK integration replaces the model instead):

- a model step lets exactly one model call through and defers every tool call: the
  tool does not run, and the invocation ends (``end_invocation``) before a second call;
  after tool steps, it first replays the model response that asked for them and answers
  each call with its recorded response and actions, so ADK builds the responses event and
  acts on it (a loop's exit on ``escalate``, a transfer) as a plain run does;
- a tool step replays the recorded model response (a ``before_model_callback`` that
  returns a response replaces the call, as ADK defines it), lets the one call of the
  step run through the agent's own tool callbacks, and defers the others;
- in an agent tree, the next model call (a transferred-to agent's, a workflow agent's next
  sub-agent's) is the next step's: the plugin holds it and `run_step` cuts the run there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.adk.tools.tool_context import ToolContext
from google.adk.tools.transfer_to_agent_tool import TransferToAgentTool
from google.genai import types

__all__ = ["CARRIED_STATE_KEY", "DEFERRED_RESPONSE", "DeferredCall", "RecordedCall", "StepPlugin"]

# What ADK records for a call this step did not run; such responses never leave the step.
DEFERRED_RESPONSE: dict[str, Any] = {"sessionflow": "deferred to a tool step"}

CARRIED_STATE_KEY = "temp:sessionflow_carried"
"""The invocation state key that holds a carry hook's carry (`GoogleAdkRunner(carry=...)`)
in every step of a turn: ``temp:``, so ADK never stores it in an event; an instruction
reads it as ``{temp:sessionflow_carried?}`` or through its `ReadonlyContext`."""


@dataclass(frozen=True)
class RecordedCall:
    """A call a tool step ran: the response ADK built for it, and its actions (dumped)."""

    response: dict[str, Any]
    actions: dict[str, Any]


@dataclass(frozen=True)
class DeferredCall:
    """A call the model asked for, with the tool ADK resolved for it."""

    call_id: str
    tool: BaseTool
    arguments: dict[str, Any]
    needs_confirmation: bool


class StepPlugin(BasePlugin):
    def __init__(
        self,
        *,
        run_call_id: str | None = None,
        replay: LlmResponse | None = None,
        temp_state: Mapping[str, Any] | None = None,
        recorded: Mapping[str, RecordedCall] | None = None,
    ) -> None:
        super().__init__(name="sessionflow_step")
        self._run_call_id = run_call_id
        self._replay = replay
        self._recorded = dict(recorded or {})
        # A tool step makes no model call (the replay answers the one it gets); a model step
        # makes one, after the replay of the response whose calls it answers, if any.
        self._calls_allowed = 1 + (1 if replay is not None and run_call_id is None else 0)
        self._temp_state = dict(temp_state or {})
        self.model_calls = 0
        self.deferred: list[DeferredCall] = []
        self.cut = asyncio.Event()
        """Set when ADK asks for a model call this step does not make: the step ends there."""
        self._agent_contexts: list[InvocationContext] = []
        self._held: set[str] = set()  # the calls answered with the placeholder

    async def before_run_callback(self, *, invocation_context: InvocationContext) -> types.Content | None:
        # Invocation-scoped state, as ADK applies a ``temp:`` delta (in memory, never stored).
        invocation_context.session.state.update(self._temp_state)
        return None

    async def before_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        # Each agent of the tree runs on a copy of its parent's context: a cut ends them all.
        self._agent_contexts.append(callback_context._invocation_context)  # pyright: ignore[reportPrivateUsage]
        return None

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        self.model_calls += 1
        if self.model_calls > self._calls_allowed:
            # The next model call of the tree (the same agent's, a transferred-to agent's,
            # a workflow agent's next sub-agent's) is the next step's: the step is cut here
            # (`run_step` cancels the run), the invocation ended first so no agent's
            # after_agent_callback runs on the cancellation.
            for context in [*self._agent_contexts, callback_context._invocation_context]:  # pyright: ignore[reportPrivateUsage]
                context.end_invocation = True
            self.cut.set()
            await asyncio.Event().wait()
        return self._replay if self.model_calls == 1 else None

    def step_done(self, event: Event) -> bool:
        """Whether ``event`` ends the step: the response to the call a tool step runs, or
        the (placeholder) responses to every call a model step deferred. Nothing after it
        belongs to this step (a transfer, a workflow agent's next sub-agent)."""
        answered = {response.id for response in event.get_function_responses()}
        if self._run_call_id is not None:
            return self._run_call_id in answered
        return bool(self.deferred) and {call.call_id for call in self.deferred} <= answered

    async def after_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext, result: dict[str, Any]
    ) -> dict[str, Any] | None:
        # A plugin's result here stands for the agent's after_tool_callbacks: a recorded
        # call's ran in its tool step, so they do not run a second time.
        call_id = tool_context.function_call_id or ""
        if call_id in self._held:
            # A call that did not run here has no after_tool_callbacks here (its tool step
            # runs them around the real run).
            return dict(DEFERRED_RESPONSE)
        recorded = self._recorded.get(call_id)
        return dict(recorded.response) if recorded is not None else None

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        call_id = tool_context.function_call_id or ""
        if (recorded := self._recorded.get(call_id)) is not None:
            # Answered by its tool step: its response, and its actions as the tool set them.
            actions = EventActions.model_validate(recorded.actions)
            for name in actions.model_fields_set:
                setattr(tool_context.actions, name, getattr(actions, name))
            return dict(recorded.response)
        if self._run_call_id is None and isinstance(tool, TransferToAgentTool):
            # ADK's transfer runs in the model step that asked for it: it only sets the
            # invocation's action, and ADK's own handling of it (the agent that transfers
            # ends, its `end_of_agent` recorded; the target starts) belongs to it. The
            # target's first model call is the next step's.
            return None
        # No further model call in this step, whatever the tools do.
        tool_context._invocation_context.end_invocation = True  # pyright: ignore[reportPrivateUsage]
        if call_id == self._run_call_id:
            # The session approved this call (its floor or the framework's ask), so ADK's
            # own confirmation is given: the tool does not ask a second time.
            tool_context.tool_confirmation = ToolConfirmation(confirmed=True)
            return None
        if self._run_call_id is None:
            needs = await tool.check_require_confirmation(tool_args, tool_context)
            self.deferred.append(DeferredCall(call_id, tool, dict(tool_args), needs))
        self._held.add(call_id)
        return dict(DEFERRED_RESPONSE)
