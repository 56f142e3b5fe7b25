"""Continue steps through the real workflow: each continued call is a RunModel of its own."""

from __future__ import annotations

from pathlib import Path

from sessionflow import AgentEventType
from sessionflow.temporal import PayloadStore
from sessionflow.testing import FileGate
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after

RUN_MODEL = "sessionflow.RunModel"
LOOKUP: dict[str, object] = {"id": "c1", "name": "lookup", "arguments": {}}


def _calls(harness: Harness, session_id: str) -> list[tuple[int, int]]:
    return [(m["call"], m["attempt"]) for m in harness.log.entries("model", session=session_id)]


async def test_the_next_call_sees_the_retry_prompt_and_is_its_own_step(harness: Harness) -> None:
    harness.script("c-retry", [[{"continue": "say it with OK"}, {"text": "OK then"}]])
    await harness.sessions.start_session("c-retry", "answer me")
    snapshot = await idle_after(harness, "c-retry", 1)
    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    assert snapshot.messages[-1].message.text == "OK then"
    assert harness.seen("c-retry", 1) == ["answer me"]
    assert harness.seen("c-retry", 2) == ["answer me", "say it with OK"]
    assert snapshot.usage.requests == 2
    steps = await harness.stack.read_step_history("c-retry")
    assert [(s.step_type, s.step_execution_id, s.final_attempt, s.outcome) for s in steps] == [
        (RUN_MODEL, "turn-1/model-1", 1, "completed"),
        (RUN_MODEL, "turn-1/model-2", 1, "completed"),
    ]
    page = await harness.sessions.list_agent_events("c-retry")
    continued = [e for e in page.events if e.type is AgentEventType.MODEL_CONTINUED]
    assert [(e.step_execution_id, e.data) for e in continued] == [
        ("turn-1/model-1", {"note": "say it with OK", "continues": 1})
    ]


async def test_a_failing_continued_call_repeats_alone(harness: Harness) -> None:
    harness.script("c-fail", [[{"continue": "again"}, {"fail_attempts": 1, "text": "second try"}]])
    await harness.sessions.start_session("c-fail", "go")
    snapshot = await idle_after(harness, "c-fail", 1)
    assert snapshot.messages[-1].message.text == "second try"
    assert _calls(harness, "c-fail") == [(1, 1), (2, 1), (2, 2)]
    steps = await harness.stack.read_step_history("c-fail")
    assert [(s.step_type, s.final_attempt) for s in steps] == [(RUN_MODEL, 1), (RUN_MODEL, 2)]


async def test_sigkill_between_a_continue_and_its_next_call_repeats_only_that_call(
    harness: Harness,
) -> None:
    harness.script("c-kill", [[{"continue": "once more"}, {"gate": "model-2", "text": "done"}]])
    await harness.sessions.start_session("c-kill", "go")
    await FileGate(harness.state_dir, "model-2").wait_until_reached()
    harness.stack.workers[-1].kill()
    await harness.stack.start_worker()
    snapshot = await idle_after(harness, "c-kill", 1)
    assert snapshot.messages[-1].message.text == "done"
    assert _calls(harness, "c-kill") == [(1, 1), (2, 1), (2, 2)]
    assert harness.seen("c-kill", 3) == ["go", "once more"]
    steps = await harness.stack.read_step_history("c-kill")
    assert [(s.step_type, s.final_attempt) for s in steps] == [(RUN_MODEL, 1), (RUN_MODEL, 2)]


async def test_a_continue_after_tools_still_sees_their_results(harness: Harness) -> None:
    harness.script(
        "c-tools",
        [
            [
                {"tool_calls": [LOOKUP]},
                {"continue": "check the value"},
                {"text": "checked"},
            ]
        ],
        {"lookup": {"effect": "read", "output": "42"}},
    )
    await harness.sessions.start_session("c-tools", "go")
    snapshot = await idle_after(harness, "c-tools", 1)
    assert snapshot.messages[-1].message.text == "checked"
    assert harness.seen("c-tools", 3) == ["go", "calls lookup({})#c1", "42", "check the value"]


async def test_the_continue_past_the_limit_stops_the_turn_with_a_note(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory(max_continues_per_turn=2)
    harness.script(
        "c-limit",
        [[{"continue": "1"}, {"continue": "2"}, {"continue": "3"}], [{"text": "next turn"}]],
    )
    await harness.sessions.start_session("c-limit", "loop")
    snapshot = await idle_after(harness, "c-limit", 1)
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error == (
        "turn stopped (continue_limit): the model asked to continue 3 times in this turn; the limit is 2"
    )
    assert len(harness.log.entries("model", session="c-limit")) == 3
    assert snapshot.usage.requests == 3
    await harness.sessions.send_user_message("c-limit", "and now?")
    await idle_after(harness, "c-limit", 2)
    assert harness.seen("c-limit", 4)[-2:] == [
        "[sessionflow] The previous turn was stopped (continue_limit): "
        "the model asked to continue 3 times in this turn; the limit is 2",
        "and now?",
    ]


async def test_a_large_run_state_travels_by_reference(
    harness_factory: HarnessFactory, tmp_path: Path
) -> None:
    harness: Harness = await harness_factory(payloads=PayloadStore(location=str(tmp_path / "payloads")))
    harness.script("c-big", [[{"continue": "go on", "state_bytes": 40_000}, {"text": "big done"}]])
    await harness.sessions.start_session("c-big", "go")
    snapshot = await idle_after(harness, "c-big", 1)
    assert snapshot.messages[-1].message.text == "big done"
    assert harness.seen("c-big", 2) == ["go", "go on"]
    history = await harness.stack.client.get_workflow_handle("c-big").fetch_history()
    padding = b"p" * 1000
    for event in history.events:
        for payload in [
            *event.activity_task_scheduled_event_attributes.input.payloads,
            *event.activity_task_completed_event_attributes.result.payloads,
        ]:
            assert padding not in payload.data
