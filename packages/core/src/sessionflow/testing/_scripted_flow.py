"""Build the same scripted flow in the test process and in worker child processes."""

from __future__ import annotations

import dataclasses
import json
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from sessionflow._environment import read_env
from sessionflow.kit._deltas import DeltaTransport
from sessionflow.kit._flow import AgentSessionFlow
from sessionflow.session.options import AgentSessionOptions, SessionBudget, SessionTimings
from sessionflow.session.tools import ToolEffect, ToolPolicy
from sessionflow.temporal.worker._worker import run_agent_worker
from sessionflow.testing._scripted_runner import ScriptedRunner

__all__ = ["STATE_DIR_ENV", "load_scripted_flow", "save_scripted_flow"]

STATE_DIR_ENV = "SESSIONFLOW_TEST_STATE_DIR"


def _timings_to_json(timings: SessionTimings) -> dict[str, Any]:
    return {
        field.name: value.total_seconds() if isinstance(value, timedelta) else value
        for field in dataclasses.fields(timings)
        for value in [getattr(timings, field.name)]
    }


def _timings_from_json(raw: dict[str, Any]) -> SessionTimings:
    values: dict[str, Any] = {
        name: timedelta(seconds=value)
        if isinstance(value, (int, float)) and not name.endswith("attempts")
        else value
        for name, value in raw.items()
    }
    return SessionTimings(**values)


def save_scripted_flow(
    state_dir: Path,
    flow_type: str,
    *,
    tool_policies: dict[str, ToolPolicy] | None = None,
    timings: SessionTimings | None = None,
    default_tool_effect: ToolEffect = ToolEffect.UNCLASSIFIED,
    continue_as_new_after_events: int = 10_000,
    redis_url: str | None = None,
    max_continues_per_turn: int = 8,
    task_queue: str | None = None,
    max_tool_calls_per_turn: int | None = None,
) -> AgentSessionFlow:
    """Write `flow.json` for worker children and return the flow for the test process."""
    state_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        "flow_type": flow_type,
        "tool_policies": {
            name: {
                "effect": p.effect.value,
                "requires_approval": p.requires_approval,
                "max_output_bytes": p.max_output_bytes,
                "local_timeout": p.local_timeout,
            }
            for name, p in (tool_policies or {}).items()
        },
        "timings": _timings_to_json(timings or SessionTimings()),
        "default_tool_effect": default_tool_effect.value,
        "continue_as_new_after_events": continue_as_new_after_events,
        "redis_url": redis_url,
        "max_continues_per_turn": max_continues_per_turn,
        "task_queue": task_queue,
        "max_tool_calls_per_turn": max_tool_calls_per_turn,
    }
    (state_dir / "flow.json").write_text(json.dumps(spec))
    return load_scripted_flow(state_dir)


def load_scripted_flow(state_dir: Path) -> AgentSessionFlow:
    spec = json.loads((state_dir / "flow.json").read_text())
    options = AgentSessionOptions(
        tool_policies={
            name: ToolPolicy(
                effect=ToolEffect(p["effect"]),
                requires_approval=p["requires_approval"],
                max_output_bytes=p.get("max_output_bytes"),
                local_timeout=p.get("local_timeout"),
            )
            for name, p in spec["tool_policies"].items()
        },
        default_tool_effect=ToolEffect(spec["default_tool_effect"]),
        timings=_timings_from_json(spec["timings"]),
        max_continues_per_turn=int(spec.get("max_continues_per_turn", 8)),
        budget=SessionBudget(max_tool_calls_per_turn=spec["max_tool_calls_per_turn"])
        if spec.get("max_tool_calls_per_turn") is not None
        else None,
    )
    transport: DeltaTransport | None = None
    if spec.get("redis_url"):
        from sessionflow.kit._redis_deltas import RedisDeltaTransport

        transport = RedisDeltaTransport(spec["redis_url"])
    return AgentSessionFlow(
        ScriptedRunner(state_dir),
        flow_type=spec["flow_type"],
        options=options,
        continue_as_new_after_events=spec["continue_as_new_after_events"],
        delta_transport=transport,
        task_queue=spec.get("task_queue"),
    )


def main() -> None:
    state_dir = read_env(STATE_DIR_ENV)
    if not state_dir:
        sys.exit(f"scripted flow worker: environment variable {STATE_DIR_ENV} is not set")
    run_agent_worker([load_scripted_flow(Path(state_dir))])


if __name__ == "__main__":
    main()
