"""`custom_event`: data a framework streams beside the text, JSON-safe for every transport."""

from __future__ import annotations

import json
from pathlib import Path

from sessionflow import AgentEvent, AgentEventType
from sessionflow.kit import AgentEventWriter


def test_a_custom_event_carries_its_data_json_safe() -> None:
    events: list[AgentEvent] = []
    writer = AgentEventWriter(events.append, turn_id="turn-1", step_execution_id="turn-1/model-1", attempt=1)
    writer.write_custom_event(
        {"progress": 0.5, "file": Path("/tmp/a.txt"), "steps": (1, 2)}, namespace=["sub:1"]
    )
    writer.write_custom_event("plain text")
    assert [(e.type, e.data) for e in events] == [
        (
            AgentEventType.CUSTOM_EVENT,
            {"namespace": ["sub:1"], "data": {"progress": 0.5, "file": "/tmp/a.txt", "steps": [1, 2]}},
        ),
        (AgentEventType.CUSTOM_EVENT, {"data": "plain text"}),
    ]
    assert json.loads(json.dumps(events[0].data)) == events[0].data


def test_custom_events_are_live_but_no_delta() -> None:
    kind = AgentEventType.CUSTOM_EVENT
    assert kind.is_live and not kind.is_delta  # never merged into text, never in the fallback batches
    assert AgentEventType.TEXT_DELTA.is_live and AgentEventType.ATTEMPT_RESTARTED.is_live
    assert not AgentEventType.TURN_COMPLETED.is_live
