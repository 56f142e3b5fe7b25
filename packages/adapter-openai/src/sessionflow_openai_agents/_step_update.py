"""What a tool step hands the next model step (`ToolExecutionResult.state_update`).

Three things travel this way: the run context the tool changed (`sessionflow.session.value_change`), the
tool state that neutral tool specs set (`sessionflow.kit.ToolOutput.state_update`), and the
object the tool returned where the recorded text does not stand for it (`_tool_value`).
The next model step applies the updates of the calls before it in model order
(`AgentTurnContext.state_updates`), and the run context's change of a call recorded as
failed too (its failure record, `_tool_step.FAILURE_FORMAT`): in the SDK a tool that fails
keeps what it changed in the context before it raised.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from sessionflow import AgentToolCall, AgentToolCallStatus, SessionStateError
from sessionflow.kit import apply_value_change
from sessionflow_openai_agents._tool_step import FAILURE_FORMAT

__all__ = ["StepState", "encode_step_update", "step_updates"]

_FORMAT = "sessionflow-openai-agents/update-1"


def encode_step_update(
    context: dict[str, Any] | None,
    tool_state: Mapping[str, Any] | None,
    value: dict[str, Any] | None = None,
) -> str | None:
    """The update text, or None when there is nothing to hand on."""
    if context is None and not tool_state and value is None:
        return None
    update: dict[str, Any] = {"format": _FORMAT}
    if context is not None:
        update["context"] = context
    if tool_state:
        update["tool_state"] = dict(tool_state)
    if value is not None:
        update["value"] = value
    return json.dumps(update, separators=(",", ":"), ensure_ascii=False)


@dataclass
class StepState:
    """The run context (JSON values; None: none saved) and the tool state, as a step sees them."""

    context: Any
    tool_state: dict[str, Any] = field(default_factory=lambda: cast(dict[str, Any], {}))

    def apply(self, updates: list[tuple[str, str]]) -> StepState:
        """This state with the tool steps' updates applied one after another, in model order."""
        context, tool_state = self.context, dict(self.tool_state)
        for tool_call_id, text in updates:
            try:
                update = cast(dict[str, Any], json.loads(text))
            except ValueError:
                raise SessionStateError(
                    f"the state update of tool call {tool_call_id!r} is not JSON"
                ) from None
            if update.get("format") not in (_FORMAT, FAILURE_FORMAT):
                raise SessionStateError(f"unsupported state update format {update.get('format')!r}")
            if "context" in update and context is not None:
                context = apply_value_change(context, cast(dict[str, Any], update["context"]))
            # A shallow update per call: of two calls setting one key, the later one wins.
            tool_state.update(cast(dict[str, Any], update.get("tool_state") or {}))
        return StepState(context=context, tool_state=tool_state)


def step_updates(records: Mapping[str, AgentToolCall]) -> list[tuple[str, str]]:
    """The updates a model step applies: those of the calls that succeeded
    (`AgentTurnContext.state_updates`) and the failure records of those that failed, in
    model order. The core hands a step only the updates of the calls the step before it
    deferred."""
    ordered = sorted(records.values(), key=lambda r: r.deferral_order)
    return [
        (r.tool_call_id, r.state_update)
        for r in ordered
        if r.state_update is not None
        and r.status in (AgentToolCallStatus.SUCCEEDED, AgentToolCallStatus.FAILED)
    ]
