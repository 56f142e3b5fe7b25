"""Compact payload JSON: absent fields are left out, and every Temporal converter reads it.

The corpus is every step payload of every recorded history in `tests/replay/histories`
(written by earlier versions, with every field spelled out): each is decoded as a worker
decodes it, written compactly, and read back by Temporal's default converter, which is
what a worker of an earlier version runs.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from temporalio.api.common.v1 import Payload
from temporalio.converter import DataConverter

from sessionflow import AgentToolCall, AgentToolCallStatus, ToolEffect, ToolPolicy
from sessionflow.temporal import build_data_converter
from sessionflow.temporal._payloads import (
    PAYLOAD_VERSION,
    RunModelInput,
    RunModelResult,
    SessionRunConfig,
    SessionStartInput,
    ToolCallInput,
    ToolCallOutput,
)
from sessionflow.temporal.storage._compact_payloads import COMPACT_DATA_CONVERTER

HISTORIES = sorted((Path(__file__).parents[2] / "replay" / "histories").glob("*.json"))
COMPACT = COMPACT_DATA_CONVERTER.payload_converter
DEFAULT = DataConverter.default.payload_converter
INPUTS = {
    "sessionflow.RunModel": RunModelInput,
    "sessionflow.CallTool": ToolCallInput,
    "sessionflow.CallSingleAttemptTool": ToolCallInput,
}
RESULTS = {
    "sessionflow.RunModel": RunModelResult,
    "sessionflow.CallTool": ToolCallOutput,
    "sessionflow.CallSingleAttemptTool": ToolCallOutput,
}


def _payload(raw: dict[str, Any]) -> Payload:
    return Payload(
        metadata={k: base64.b64decode(v) for k, v in raw["metadata"].items()},
        data=base64.b64decode(raw.get("data", "")),
    )


def _recorded() -> list[tuple[str, type[Any], Payload]]:
    """(where, type, payload) of every start input, step input and step result recorded."""
    found: list[tuple[str, type[Any], Payload]] = []
    for path in HISTORIES:
        scheduled: dict[str, str] = {}
        for event in json.loads(path.read_text())["events"]:
            where = f"{path.stem}#{event['eventId']}"
            kind = event["eventType"]
            if kind == "EVENT_TYPE_WORKFLOW_EXECUTION_STARTED":
                raw = event["workflowExecutionStartedEventAttributes"]["input"]["payloads"][0]
                found.append((where, SessionStartInput, _payload(raw)))
            elif kind == "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED":
                attrs = event["activityTaskScheduledEventAttributes"]
                name = attrs["activityType"]["name"]
                scheduled[event["eventId"]] = name
                if name in INPUTS:
                    found.append((where, INPUTS[name], _payload(attrs["input"]["payloads"][0])))
            elif kind == "EVENT_TYPE_ACTIVITY_TASK_COMPLETED":
                attrs = event["activityTaskCompletedEventAttributes"]
                name = scheduled.get(attrs["scheduledEventId"], "")
                if name in RESULTS and "result" in attrs:
                    found.append((where, RESULTS[name], _payload(attrs["result"]["payloads"][0])))
    return found


def test_recorded_payloads_round_trip_through_compact_json() -> None:
    recorded = _recorded()
    kinds = {kind for _, kind, _ in recorded}
    assert kinds == {SessionStartInput, RunModelInput, ToolCallInput, RunModelResult, ToolCallOutput}
    shrank = earlier = 0
    mismatched: list[str] = []
    for where, kind, payload in recorded:
        value = DEFAULT.from_payload(payload, kind)
        compact = COMPACT.to_payload(value)
        assert compact is not None
        # An earlier worker (Temporal's default converter) and this one read it alike.
        if DEFAULT.from_payload(compact, kind) != value or COMPACT.from_payload(compact, kind) != value:
            mismatched.append(where)
        if where.startswith(
            (
                "compact-payloads#",
                "local-reads#",
                "version-upgrade-",
                "search-attributes#",
                "double-texting#",
                "forked-session#",
                "flow-type-",
                "long-turn-",
                "approval-rebound#",
                "turn-records#",
                "steer#",
            )
        ):
            # Recorded by this converter (local-reads, version-upgrade-*, search-attributes,
            # double-texting, forked-session, flow-type-*, long-turn-*, approval-rebound,
            # turn-records, steer too):
            # writing it again gives the same bytes.
            assert compact.data == payload.data, where
        else:
            assert len(compact.data) <= len(payload.data), where
            earlier += 1
            shrank += len(compact.data) < len(payload.data)
    assert not mismatched, mismatched
    assert len(recorded) > 100
    # Payloads of earlier versions lack the fields added since, so a few have nothing absent.
    assert shrank >= earlier * 0.9, (shrank, earlier)


def test_the_compact_history_has_no_absent_step_fields() -> None:
    compact = next(p for p in HISTORIES if p.stem == "compact-payloads")
    checked = 0
    given_state: dict[str, bool] = {}
    for where, kind, payload in _recorded():
        if not where.startswith("compact-payloads#"):
            continue
        checked += 1
        written = json.loads(payload.data)
        if kind is ToolCallInput:
            # The scripted runner's state is small, so it travels inline, not by reference.
            assert "run_state_ref" not in written, where
            assert not {"output", "error", "output_ref", "state_update"} & set(written["tool_call"]), where
            call = written["tool_call"]
            given_state[call["tool_call_id"]] = "run_state" in written
            assert call.get("skip_run_state", False) is (call["tool_call_id"] == "s"), where
        if kind is SessionStartInput:
            # Recorded at version 5 (compact payloads); later versions only add fields.
            assert "carried" not in written and written["version"] == 5 <= PAYLOAD_VERSION, where
            assert written["initial_user_message"]["text"] == "start", where
    assert checked >= 8, compact
    # The client built the user messages: no turn ran a BuildUserMessage step (a marker).
    assert "MARKER_RECORDED" not in compact.read_text()
    # The call deferred with skip_run_state is the one tool step given no run state.
    assert given_state == {"r": True, "w": True, "q": True, "s": False}


@dataclass(frozen=True, kw_only=True)
class _Shapes:
    required: str
    none: str | None = None
    flag: bool = False
    count: int = 0
    text: str = ""
    items: list[int] = field(default_factory=lambda: [])
    mapping: dict[str, int] = field(default_factory=lambda: {})
    chosen: int = 8
    on: bool = True


def _written(value: Any) -> dict[str, Any]:
    payload = COMPACT.to_payload(value)
    assert payload is not None
    return json.loads(payload.data)


def test_only_absent_defaults_are_left_out() -> None:
    assert _written(_Shapes(required="x")) == {"required": "x", "chosen": 8, "on": True}
    full = _Shapes(
        required="", none="", flag=True, count=-1, text="t", items=[0], mapping={"": 0}, chosen=0, on=False
    )
    assert _written(full) == {
        "required": "",
        "none": "",
        "flag": True,
        "count": -1,
        "text": "t",
        "items": [0],
        "mapping": {"": 0},
        "chosen": 0,
        "on": False,
    }
    # A value equal to an absence but of another type is a value: 0.0 is not the int 0.
    assert _written(_Shapes(required="x", count=0.0))["count"] == 0.0  # pyright: ignore[reportArgumentType]
    for value in (_Shapes(required="x"), full):
        written = COMPACT.to_payload(value)
        assert written is not None and DEFAULT.from_payload(written, _Shapes) == value


def test_chosen_defaults_of_the_wire_formats_are_written() -> None:
    timings = SessionRunConfig(
        model_start_to_close=1,
        model_heartbeat_timeout=1,
        model_schedule_to_close=1,
        model_max_attempts=3,
        tool_start_to_close=1,
        tool_heartbeat_timeout=1,
        tool_schedule_to_close=1,
        tool_max_attempts=3,
        retry_initial_interval=1,
        heartbeat_interval=1,
    )
    written = _written(SessionStartInput(timings=timings))
    # A version or a limit read from today's default would change a recorded session's meaning.
    assert written["version"] == PAYLOAD_VERSION
    assert written["timings"]["max_continues_per_turn"] == 8
    assert written["timings"]["continue_as_new_after_events"] == 10_000
    assert "budget" not in written["timings"] and "carried" not in written


def test_nested_records_in_lists_are_compact() -> None:
    call = AgentToolCall(
        tool_call_id="c",
        tool_name="t",
        arguments="{}",
        policy=ToolPolicy(effect=ToolEffect.READ),
        deferral_order=1,
        status=AgentToolCallStatus.SUCCEEDED,
        output="ok",
    )
    written = _written([call, call])
    assert (
        written
        == [
            {
                "tool_call_id": "c",
                "tool_name": "t",
                "arguments": "{}",
                "policy": {"effect": "read"},
                "deferral_order": 1,
                "status": "succeeded",
                "output": "ok",
            }
        ]
        * 2
    )


def test_the_session_converter_is_compact_with_or_without_a_store(tmp_path: Path) -> None:
    from sessionflow.temporal import PayloadStore

    for store in (None, PayloadStore(location=str(tmp_path))):
        converter = build_data_converter(store)
        assert converter.payload_converter_class is COMPACT_DATA_CONVERTER.payload_converter_class
