"""One model or tool step attempt, observed: its span (`_telemetry`) and its metrics (`_metrics`).

GenAI semantic-convention attributes: ``gen_ai.operation.name`` (``chat`` or
``execute_tool``), ``gen_ai.request.model``, ``gen_ai.usage.input_tokens``,
``gen_ai.usage.output_tokens``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``; and
sessionflow's ``sessionflow.builtin.tool.effect``, ``sessionflow.step.outcome``,
``sessionflow.step.attempt``, ``sessionflow.session.id``, ``sessionflow.turn.id``.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from datetime import timedelta

from temporalio import activity

from sessionflow.session.tools import AgentToolCall
from sessionflow.session.usage import AgentUsage
from sessionflow.temporal._metrics import record_step
from sessionflow.temporal._payloads import RunModelResult, ToolCallOutput
from sessionflow.temporal._telemetry import StepSpan, step_span

__all__ = ["StepObservation", "model_outcome", "observe_model_step", "observe_tool_step", "tool_outcome"]

OUTCOME = "sessionflow.step.outcome"


class StepObservation:
    """How the attempt ended; "error" until the step says otherwise."""

    def __init__(self, span: StepSpan) -> None:
        self.span = span
        self.outcome = "error"

    def model_done(self, result: RunModelResult) -> None:
        self.outcome = model_outcome(result)
        usage = _usage(result)
        self.span.set(
            {
                "gen_ai.usage.input_tokens": usage.input_tokens,
                "gen_ai.usage.output_tokens": usage.output_tokens,
            }
        )

    def tool_done(self, output: ToolCallOutput) -> None:
        self.outcome = tool_outcome(output)


def model_outcome(result: RunModelResult) -> str:
    if result.completed is not None:
        return "completed"
    if result.continued is not None:
        return "continue"
    return "tool_calls"


def tool_outcome(output: ToolCallOutput) -> str:
    return "failed" if output.error is not None else "succeeded"


def _usage(result: RunModelResult) -> AgentUsage:
    outcome = result.completed or result.requested or result.continued
    return outcome.usage if outcome is not None else AgentUsage()


@contextmanager
def observe_model_step(session_id: str, turn_id: str, model: str | None) -> Generator[StepObservation]:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model,
        "sessionflow.step.attempt": activity.info().attempt,
        "sessionflow.session.id": session_id,
        "sessionflow.turn.id": turn_id,
    }
    with _observed(f"chat {model}" if model else "chat", attributes, "model", model) as step:
        yield step


@contextmanager
def observe_tool_step(session_id: str, turn_id: str, call: AgentToolCall) -> Generator[StepObservation]:
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.tool_name,
        "gen_ai.tool.call.id": call.tool_call_id,
        "sessionflow.builtin.tool.effect": call.policy.effect.value,
        "sessionflow.step.attempt": activity.info().attempt,
        "sessionflow.session.id": session_id,
        "sessionflow.turn.id": turn_id,
    }
    with _observed(f"execute_tool {call.tool_name}", attributes, "tool", None) as step:
        yield step


@contextmanager
def _observed(
    name: str, attributes: Mapping[str, str | int | None], kind: str, model: str | None
) -> Generator[StepObservation]:
    started = time.monotonic()
    with step_span(name, attributes) as span:
        step = StepObservation(span)
        try:
            yield step
        finally:
            span.set({OUTCOME: step.outcome})
            record_step(kind, step.outcome, timedelta(seconds=time.monotonic() - started), model)
