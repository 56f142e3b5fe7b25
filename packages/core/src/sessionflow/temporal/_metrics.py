"""sessionflow's own metrics, recorded through Temporal's metric meters.

They go wherever the process's Temporal runtime sends the SDK's own metrics (the
Prometheus endpoint of `connect(metrics_address=...)`), with the labels Temporal adds
(``namespace``, ``task_queue``, ``workflow_type``/``activity_type``). The workflow's meter
records nothing while a workflow replays, so a session moved to another worker counts
each event once.

Names (Temporal's Prometheus exporter adds no ``_total`` suffix by default):

- ``sessionflow_turns`` {outcome: completed | error | cancelled | stopped}
- ``sessionflow_model_calls`` {model, outcome: completed | tool_calls | continue | error}, one per attempt
- ``sessionflow_tool_calls`` {tool_effect, outcome: succeeded | failed | rejected | outcome_unknown}
- ``sessionflow_outcome_unknown`` {tool_effect}
- ``sessionflow_approvals_requested``, ``sessionflow_approvals_resolved``: waiting = requested - resolved
- ``sessionflow_step_latency`` {step: model | tool, outcome}, a histogram (milliseconds, or
  seconds with Temporal's ``durations_as_seconds``)
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.common import MetricCounter, MetricMeter

__all__ = [
    "APPROVALS_REQUESTED",
    "APPROVALS_RESOLVED",
    "MODEL_CALLS",
    "OUTCOME_UNKNOWN",
    "STEP_LATENCY",
    "TOOL_CALLS",
    "TURNS",
    "record_step",
    "workflow_count",
]

TURNS = "sessionflow_turns"
MODEL_CALLS = "sessionflow_model_calls"
TOOL_CALLS = "sessionflow_tool_calls"
OUTCOME_UNKNOWN = "sessionflow_outcome_unknown"
APPROVALS_REQUESTED = "sessionflow_approvals_requested"
APPROVALS_RESOLVED = "sessionflow_approvals_resolved"
STEP_LATENCY = "sessionflow_step_latency"

_DESCRIPTIONS = {
    TURNS: "Turns that ended, by outcome",
    MODEL_CALLS: "Model step attempts, by model and outcome",
    TOOL_CALLS: "Tool calls that ended, by effect and outcome",
    OUTCOME_UNKNOWN: "Write calls whose outcome is unknown (their step died)",
    APPROVALS_REQUESTED: "Tool calls that began waiting for a person's answer",
    APPROVALS_RESOLVED: "Waiting tool calls that were answered, expired or cancelled",
}


def workflow_count(name: str, labels: Mapping[str, str] | None = None) -> None:
    """Add one to a workflow counter (replay-safe)."""
    meter = workflow.metric_meter()
    _counter(meter, name).add(1, dict(labels or {}))


def record_step(step: str, outcome: str, elapsed: timedelta, model: str | None = None) -> None:
    """One activity attempt: its latency, and for a model step its count."""
    meter = activity.metric_meter()
    meter.create_histogram_timedelta(
        STEP_LATENCY, "Model and tool step attempts' latency", "duration"
    ).record(elapsed, {"step": step, "outcome": outcome})
    if step == "model":
        _counter(meter, MODEL_CALLS).add(1, {"model": model or "unknown", "outcome": outcome})


def _counter(meter: MetricMeter, name: str) -> MetricCounter:
    return meter.create_counter(name, _DESCRIPTIONS[name])
