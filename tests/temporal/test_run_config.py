"""`SessionRunConfig`, once `WorkflowTimings`: a new name, the same payload."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from temporalio.converter import default

from sessionflow.temporal._payloads import SessionRunConfig, SessionStartInput

HISTORY = Path(__file__).parents[1] / "replay" / "histories" / "text-turn.json"


def _recorded_start_input() -> dict[str, object]:
    events = json.loads(HISTORY.read_text())["events"]
    payload = events[0]["workflowExecutionStartedEventAttributes"]["input"]["payloads"][0]
    return json.loads(base64.b64decode(payload["data"]))


def test_a_recorded_start_input_reads_and_writes_back_the_same_json() -> None:
    recorded = _recorded_start_input()
    converter = default().payload_converter
    payload = converter.to_payloads([recorded])[0]
    start = converter.from_payloads([payload], [SessionStartInput])[0]
    assert isinstance(start.timings, SessionRunConfig)
    written = json.loads(converter.to_payloads([start])[0].data)
    old = recorded["timings"]
    assert isinstance(old, dict)
    # The history was recorded before budgets, memory, continue steps, telemetry (the
    # model's name, search attributes) and steering: those fields are new, with their defaults.
    assert written["timings"] == {
        **old,
        "budget": None,
        "memory": None,
        "max_continues_per_turn": 8,
        "model_name": None,
        "search_attributes": False,
        "steering": False,
    }
    # Also newer than the history.
    assert written.keys() - recorded.keys() == {
        "initial_settings",
        "initial_user_message",
        "history",
        "history_index_ref",
        "double_texting",
        "forked_from",
        "search_attributes",
    }
