"""One function tool call, run in its session tool step as the SDK's tool executor runs it.

The SDK runs a call that needs no approval (`agents.run_internal.tool_execution`) in this
order: the tool's input guardrails; ``on_tool_start`` of the run's hooks and the agent's;
the tool (its failure function turning an error into a message, its timeout); the output
guardrails on what it returned; ``on_tool_end`` with the result the model sees. The tool
step does the same, so a guardrail runs before the tool's side effect, once per run of the
step, and the model step that resumes the run only returns the recorded result
(`_graph` gates the clone's tools without guardrails, `_hooks` keeps its hooks quiet).

What a guardrail decides reaches the model as in the plain SDK:

* ``reject_content`` from an input guardrail: the tool does not run and no tool hook fires;
  from an output guardrail: the tool ran, and its output is replaced. The model sees the
  guardrail's message in either case.
* ``raise_exception`` (a tripwire): the plain run raises `ToolInputGuardrailTripwireTriggered`
  or `ToolOutputGuardrailTripwireTriggered`. The step records the call as failed with the
  tripwire in its failure record (`FAILURE_FORMAT`), and the next model step raises the same
  exception before the run resumes, so the turn ends as plain's does (`TurnAborted`, never
  retried); a sub-agent's tripwire becomes the agent tool's answer, as the SDK's ``as_tool``
  makes it. A tripped output never reaches the model or the stored messages.

A call that ends in a message for the model without the tool's result (its failure
function's text, a timeout's, an input guardrail's rejection) is recorded as failed, and its
failure record keeps the exact text, which the next model step's stub returns: the model
sees what plain shows it, not the session's ``Tool call failed: ...`` wording.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from agents import (
    Agent,
    FunctionTool,
    RunHooks,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
    ToolInputGuardrailTripwireTriggered,
    ToolOutputGuardrail,
    ToolOutputGuardrailData,
    ToolOutputGuardrailTripwireTriggered,
)
from agents.tool_context import ToolContext

from sessionflow import AgentToolCall, AgentToolCallStatus
from sessionflow.kit import ToolExecutionError
from sessionflow_openai_agents._hooks import tool_ended, tool_started
from sessionflow_openai_agents._tools import invoke_function_tool, tool_output_text

__all__ = [
    "FAILURE_FORMAT",
    "RecordedFailures",
    "ToolRun",
    "encode_failure",
    "input_verdict",
    "recorded_failures",
    "run_tool_step",
]

FAILURE_FORMAT = "sessionflow-openai-agents/failure-1"
"""The state update of a call recorded as failed (`ToolExecutionError.state_update`):
``{"format", "output": <the text the model sees>, "context"?: <the run context's change>,
"tripwire"?: {"kind": "input" | "output", "guardrail": <name>, "output_info": <JSON>}}``."""


@dataclass(frozen=True)
class ToolRun:
    """What the tool step ended with."""

    output: str
    """The text the model sees."""
    returned: Any = None
    """What the tool returned (after the output guardrails), for `_tool_value`; None when it
    did not return (failed, rejected)."""
    failed: bool = False
    """The model sees a message instead of the tool's result: its failure function's, a
    timeout's, or an input guardrail's rejection."""
    tripwire: dict[str, Any] | None = None


async def run_tool_step(
    tool: FunctionTool,
    agent: Agent[Any],
    context: ToolContext[Any],
    arguments: str,
    hooks: RunHooks[Any] | None,
) -> ToolRun:
    """The call, as the SDK's executor runs a call that needs no approval (see the module)."""
    refused = await input_verdict(tool, agent, context)
    if refused is not None:
        return refused
    await tool_started(hooks, agent, tool, context)
    failed = False
    try:
        returned: Any = await invoke_function_tool(tool, context, arguments)
    except ToolExecutionError as error:
        # The failure function's (or a timeout's) message is the tool's result in the SDK:
        # its output guardrails and on_tool_end see it.
        returned, failed = error.message, True
    for guardrail in tool.tool_output_guardrails or []:
        verdict = await guardrail.run(ToolOutputGuardrailData(context=context, agent=agent, output=returned))
        behavior = verdict.behavior
        if behavior["type"] == "raise_exception":
            return ToolRun(
                output=f"tool output guardrail {guardrail.get_name()!r} tripped (the tool ran; its output is withheld)",
                failed=True,
                tripwire=_tripwire("output", guardrail, verdict),
            )
        if behavior["type"] == "reject_content":
            returned = behavior["message"]
            break
    await tool_ended(hooks, agent, tool, context, returned)
    return ToolRun(output=tool_output_text(returned), returned=None if failed else returned, failed=failed)


async def input_verdict(tool: FunctionTool, agent: Agent[Any], context: ToolContext[Any]) -> ToolRun | None:
    """The tool's input guardrails, in order: a rejection or tripwire ends the call before
    the tool runs; None lets it run."""
    for guardrail in tool.tool_input_guardrails or []:
        verdict = await guardrail.run(ToolInputGuardrailData(context=context, agent=agent))
        behavior = verdict.behavior
        if behavior["type"] == "raise_exception":
            return ToolRun(
                output=f"tool input guardrail {guardrail.get_name()!r} tripped (the tool did not run)",
                failed=True,
                tripwire=_tripwire("input", guardrail, verdict),
            )
        if behavior["type"] == "reject_content":
            return ToolRun(output=behavior["message"], failed=True)
    return None


def _tripwire(
    kind: str,
    guardrail: ToolInputGuardrail[Any] | ToolOutputGuardrail[Any],
    verdict: ToolGuardrailFunctionOutput,
) -> dict[str, Any]:
    info = json.loads(json.dumps(verdict.output_info, default=str))
    return {"kind": kind, "guardrail": guardrail.get_name(), "output_info": info}


def encode_failure(output: str, context: dict[str, Any] | None, tripwire: dict[str, Any] | None) -> str:
    """The failure record of a call recorded as failed (`FAILURE_FORMAT`)."""
    record: dict[str, Any] = {"format": FAILURE_FORMAT, "output": output}
    if context is not None:
        record["context"] = context
    if tripwire is not None:
        record["tripwire"] = tripwire
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class RecordedFailures:
    """The failure records of the calls the previous model step deferred, by call ID."""

    outputs: dict[str, str]
    """The text the model sees for each, as the plain SDK words it."""
    tripwires: dict[str, dict[str, Any]]

    def raise_tripwire(self, graph_tools: Mapping[str, FunctionTool], prefix: str = "") -> None:
        """Raise the SDK's tripwire for a call directly under ``prefix`` (``""``: the top-level
        run; an agent tool's call ID and separator: its sub-run), as the plain run raises it."""
        for call_id, trip in sorted(self.tripwires.items()):
            rest = call_id[len(prefix) :]
            if not call_id.startswith(prefix) or "." in rest:
                continue
            raise tripwire_error(trip, graph_tools.get(str(trip.get("tool", ""))))


def tripwire_error(trip: Mapping[str, Any], tool: FunctionTool | None) -> Exception:
    """The SDK's exception for a recorded tripwire, with the tool's guardrail where it still has it."""
    name = str(trip["guardrail"])
    verdict = ToolGuardrailFunctionOutput.raise_exception(output_info=trip.get("output_info"))
    if trip["kind"] == "input":
        found = (
            next((g for g in (tool.tool_input_guardrails or []) if g.get_name() == name), None)
            if tool
            else None
        )
        guardrail = found or ToolInputGuardrail[Any](guardrail_function=_gone, name=name)
        return ToolInputGuardrailTripwireTriggered(guardrail=guardrail, output=verdict)
    found_out = (
        next((g for g in (tool.tool_output_guardrails or []) if g.get_name() == name), None) if tool else None
    )
    guardrail_out = found_out or ToolOutputGuardrail[Any](guardrail_function=_gone, name=name)
    return ToolOutputGuardrailTripwireTriggered(guardrail=guardrail_out, output=verdict)


def _gone(data: Any) -> ToolGuardrailFunctionOutput:
    # A stand-in for a guardrail a deploy removed since it tripped: only its name is read.
    return ToolGuardrailFunctionOutput.raise_exception()


def recorded_failures(records: Mapping[str, AgentToolCall]) -> RecordedFailures:
    """The failure records among ``records`` (the core keeps only the previous step's updates)."""
    outputs: dict[str, str] = {}
    tripwires: dict[str, dict[str, Any]] = {}
    for call_id, record in records.items():
        if record.status is not AgentToolCallStatus.FAILED or record.state_update is None:
            continue
        try:
            parsed: Any = json.loads(record.state_update)
        except ValueError:
            continue
        if not isinstance(parsed, dict) or cast(dict[str, Any], parsed).get("format") != FAILURE_FORMAT:
            continue
        failure = cast(dict[str, Any], parsed)
        outputs[call_id] = str(failure.get("output", ""))
        trip = failure.get("tripwire")
        if isinstance(trip, dict):
            tripwires[call_id] = {**cast(dict[str, Any], trip), "tool": record.tool_name}
    return RecordedFailures(outputs=outputs, tripwires=tripwires)
