"""What each session of a flow runs under, as its start input carries it."""

from __future__ import annotations

from sessionflow.kit._flow import AgentSessionFlow
from sessionflow.temporal._payloads import MemorySettings, SessionRunConfig
from sessionflow.temporal._prices import lookup_prices

__all__ = ["run_config"]


def run_config(flow: AgentSessionFlow) -> SessionRunConfig:
    """The run configuration of `flow`'s sessions: its timings, budget, memory and model."""
    options = flow.options
    memory = options.memory
    return SessionRunConfig.from_timings(
        options.timings,
        continue_as_new_after_events=flow.continue_as_new_after_events,
        event_retention_bytes=options.event_stream_capacity,
        budget=options.budget.resolve(lookup_prices) if options.budget is not None else None,
        memory=MemorySettings(
            max_notes=memory.max_notes,
            max_chars=memory.max_chars,
            ttl_seconds=memory.ttl.total_seconds() if memory.ttl else None,
        )
        if memory is not None
        else None,
        max_continues_per_turn=options.max_continues_per_turn,
        model_name=flow.model_name,
        steering=flow.runner.accepts_steering(),
    )
