"""The ADK plugin that cuts one durable step out of ADK's own loop.

A plugin's callbacks run before the agent's and short-circuit them, which is ADK's own
extension point for this (Temporal's ADK integration replaces the model instead):

- a model step lets exactly one model call through and defers every tool call: the
  tool does not run, and the invocation ends (``end_invocation``) before a second call;
- a tool step replays the recorded model response (a ``before_model_callback`` that
  returns a response replaces the call, as ADK defines it), lets the one call of the
  step run through the agent's own tool callbacks, and defers the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.adk.tools.tool_context import ToolContext
from google.genai import types

__all__ = ["CARRIED_STATE_KEY", "DEFERRED_RESPONSE", "DeferredCall", "StepPlugin"]

# What ADK records for a call this step did not run; such responses never leave the step.
DEFERRED_RESPONSE: dict[str, Any] = {"sessionflow": "deferred to a tool step"}

CARRIED_STATE_KEY = "temp:sessionflow_carried"
"""The invocation state key that holds a carry hook's carry (`GoogleAdkRunner(carry=...)`)
in every step of a turn: ``temp:``, so ADK never stores it in an event; an instruction
reads it as ``{temp:sessionflow_carried?}`` or through its `ReadonlyContext`."""


@dataclass(frozen=True)
class DeferredCall:
    """A call the model asked for, with the tool ADK resolved for it."""

    call_id: str
    tool: BaseTool
    arguments: dict[str, Any]
    needs_confirmation: bool


class SecondModelCallError(RuntimeError):
    """ADK asked for a second model call inside one model step (a bug of this adapter)."""


class StepPlugin(BasePlugin):
    def __init__(
        self,
        *,
        run_call_id: str | None = None,
        replay: LlmResponse | None = None,
        temp_state: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(name="sessionflow_step")
        self._run_call_id = run_call_id
        self._replay = replay
        self._temp_state = dict(temp_state or {})
        self.model_calls = 0
        self.deferred: list[DeferredCall] = []

    async def before_run_callback(self, *, invocation_context: InvocationContext) -> types.Content | None:
        # Invocation-scoped state, as ADK applies a ``temp:`` delta (in memory, never stored).
        invocation_context.session.state.update(self._temp_state)
        return None

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        self.model_calls += 1
        if self.model_calls > 1:
            raise SecondModelCallError("a second model call in one sessionflow step")
        return self._replay

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        # No further model call in this step, whatever the tools do.
        tool_context._invocation_context.end_invocation = True  # pyright: ignore[reportPrivateUsage]
        call_id = tool_context.function_call_id or ""
        if call_id == self._run_call_id:
            # The session approved this call (its floor or the framework's ask), so ADK's
            # own confirmation is given: the tool does not ask a second time.
            tool_context.tool_confirmation = ToolConfirmation(confirmed=True)
            return None
        if self._run_call_id is None:
            needs = await tool.check_require_confirmation(tool_args, tool_context)
            self.deferred.append(DeferredCall(call_id, tool, dict(tool_args), needs))
        return dict(DEFERRED_RESPONSE)
