"""Step timings for tests that kill workers."""

from __future__ import annotations

from datetime import timedelta

from sessionflow.session.options import SessionTimings

__all__ = ["CRASH_TIMINGS"]

CRASH_TIMINGS = SessionTimings(
    model_start_to_close=timedelta(seconds=30),
    model_heartbeat_timeout=timedelta(seconds=2),
    model_schedule_to_close=timedelta(seconds=90),
    tool_start_to_close=timedelta(seconds=30),
    tool_heartbeat_timeout=timedelta(seconds=2),
    tool_schedule_to_close=timedelta(seconds=90),
    retry_initial_interval=timedelta(milliseconds=100),
    heartbeat_interval=timedelta(milliseconds=300),
)
"""Short timeouts so a SIGKILLed worker is noticed in about two seconds."""
