"""Tool steps with framework state through the real workflow.

A tool step gets the run state of the model step that deferred it, may return a state
update, and the next model step gets every update in model order, recorded once.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow import AgentSnapshot, AgentToolCallStatus
from sessionflow.temporal import PayloadStore
from sessionflow.testing import FileGate, wait_for_agent_snapshot
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after


def _call(tool_call_id: str, name: str) -> dict[str, object]:
    return {"id": tool_call_id, "name": name, "arguments": {"id": tool_call_id}}


def _updates(harness: Harness, session_id: str) -> list[list[list[str]]]:
    """The state updates each model call was handed, in call order."""
    return [m["state_updates"] for m in harness.log.entries("model", session=session_id)]


async def _finished(harness: Harness, session_id: str, tool_call_id: str) -> None:
    def done(s: AgentSnapshot) -> bool | None:
        return any(r.tool_call_id == tool_call_id and r.is_final for r in s.tool_calls) or None

    await wait_for_agent_snapshot(harness.sessions, session_id, done, description=f"{tool_call_id} to finish")


async def test_the_next_call_gets_every_update_in_model_order_not_finish_order(harness: Harness) -> None:
    harness.script(
        "ts-order",
        [
            [
                {"tool_calls": [_call("a", "slow"), _call("b", "fast"), _call("c", "broken")]},
                {"tool_calls": [_call("d", "fast")]},
                {"text": "done"},
            ]
        ],
        {
            "slow": {"effect": "read", "gate": "slow", "state_update": {"who": "a"}},
            "fast": {"effect": "read", "state_update": {"who": "fast"}},
            "broken": {"effect": "read", "error": "no such id", "state_update": {"who": "c"}},
        },
    )
    await harness.sessions.start_session("ts-order", "go")
    await FileGate(harness.state_dir, "slow").wait_until_reached()
    await _finished(harness, "ts-order", "b")
    FileGate(harness.state_dir, "slow").release()  # the first call in model order ends last
    snapshot = await idle_after(harness, "ts-order", 1)
    assert snapshot.messages[-1].message.text == "done"
    assert _updates(harness, "ts-order") == [
        [],
        [["a", '{"who": "a"}'], ["b", '{"who": "fast"}']],  # the failed call c carries none
        [["d", '{"who": "fast"}']],  # a and b were applied by call 2: not handed again
    ]
    # Each tool step got the run state of the model call that deferred it.
    tools = harness.log.entries("tool", session="ts-order")
    assert sorted((t["tool_call_id"], t["run_state_calls"]) for t in tools) == [
        ("a", 1),
        ("b", 1),
        ("c", 1),
        ("d", 2),
    ]


async def test_a_crash_after_the_tool_step_replays_its_recorded_update(harness: Harness) -> None:
    harness.script(
        "ts-kill",
        [
            [
                {"tool_calls": [_call("w", "book")]},
                {"gate": "model-2", "text": "booked"},
            ]
        ],
        {"book": {"effect": "idempotent_write", "state_update": {"seat": "12A"}}},
    )
    await harness.sessions.start_session("ts-kill", "book a seat")
    await FileGate(harness.state_dir, "model-2").wait_until_reached()
    harness.stack.workers[-1].kill()
    await harness.stack.start_worker()
    snapshot = await idle_after(harness, "ts-kill", 1)
    assert snapshot.messages[-1].message.text == "booked"
    assert harness.log.count("tool", "book", session="ts-kill") == 1
    models = harness.log.entries("model", session="ts-kill")
    assert [(m["call"], m["attempt"]) for m in models] == [(1, 1), (2, 1), (2, 2)]
    assert [m["state_updates"] for m in models[1:]] == [[["w", '{"seat": "12A"}']]] * 2


async def test_large_updates_and_run_states_travel_by_reference(
    harness_factory: HarnessFactory, tmp_path: Path
) -> None:
    harness: Harness = await harness_factory(payloads=PayloadStore(location=str(tmp_path / "payloads")))
    mib = 1024 * 1024
    harness.script(
        "ts-big",
        [
            [
                {
                    "tool_calls": [_call("x", "fill"), _call("y", "fill"), _call("z", "fill")],
                    "state_bytes": 40_000,
                },
                {"text": "filled"},
            ]
        ],
        {"fill": {"effect": "read", "state_update_bytes": mib}},
    )
    await harness.sessions.start_session("ts-big", "fill it")
    snapshot = await idle_after(harness, "ts-big", 1)
    assert snapshot.messages[-1].message.text == "filled"
    handed = _updates(harness, "ts-big")[1]
    assert [tool_call_id for tool_call_id, _ in handed] == ["x", "y", "z"]
    assert all(update.startswith(f"{mib}:") for _, update in handed)
    assert len({update for _, update in handed}) == 3  # each call's own bytes, whole
    tools = harness.log.entries("tool", session="ts-big")
    assert all(t["run_state_bytes"] >= 40_000 for t in tools)
    history = await harness.stack.client.get_workflow_handle("ts-big").fetch_history()
    for event in history.events:
        for payload in [
            *event.activity_task_scheduled_event_attributes.input.payloads,
            *event.activity_task_completed_event_attributes.result.payloads,
        ]:
            # References, not the 3 MiB of updates (each 1 MiB, together past the 2 MiB limit).
            assert len(payload.data) < 64 * 1024
            assert b"p" * 1000 not in payload.data  # nor the run state's padding


async def test_a_successful_call_keeps_its_update_on_the_record(harness: Harness) -> None:
    harness.script(
        "ts-record",
        [[{"tool_calls": [_call("r", "mark")]}, {"gate": "model-2", "text": "ok"}]],
        {"mark": {"effect": "read", "state_update": "framework-encoded update"}},
    )
    await harness.sessions.start_session("ts-record", "mark it")
    await FileGate(harness.state_dir, "model-2").wait_until_reached()
    snapshot = await harness.sessions.get_agent_snapshot("ts-record")
    (record,) = snapshot.tool_calls
    assert (record.status, record.state_update) == (AgentToolCallStatus.SUCCEEDED, "framework-encoded update")
    FileGate(harness.state_dir, "model-2").release()
    await idle_after(harness, "ts-record", 1)
