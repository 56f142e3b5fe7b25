"""Every kind of expectation and invariant fails when the observation differs (no vacuous passes)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from sessionflow import (
    AgentEvent,
    AgentEventType,
    AgentSnapshot,
    AgentState,
    AgentStatus,
    AgentUsage,
)
from sessionflow.demo import RecordedRequest
from sessionflow.temporal import StepHistoryEntry
from sessionflow.testing.conformance._case_files import Node
from sessionflow.testing.conformance._checks import Observation, check_expectations, check_invariants
from sessionflow.testing.conformance._expect import Expectations, parse_expectations

T = AgentEventType
SESSION = "s1"


def expect(raw: dict[str, Any]) -> Expectations:
    return parse_expectations(Node(Path("inline.json"), "/expect", raw))


def event(kind: AgentEventType, offset: int, step: str = "turn-1/model-1", **data: Any) -> AgentEvent:
    return AgentEvent(
        type=kind, turn_id="turn-1", step_execution_id=step, attempt=1, data=data, offset=offset
    )


def request(body: dict[str, Any], index: int = 0) -> RecordedRequest:
    return RecordedRequest(
        api="chat_completions", path="/v1/chat/completions", headers={}, body=body, index=index
    )


def observation(**changes: Any) -> Observation:
    """A session that ran one read tool `c1` (lookup) once and answered 'found it'."""
    values: dict[str, Any] = {
        "session_id": SESSION,
        "snapshot": AgentSnapshot(
            session_id=SESSION,
            state=AgentState(status=AgentStatus.WAITING_FOR_USER_MESSAGE, turn_count=1),
            messages=[],
            message_count=4,
            pending_interrupts=[],
            tool_calls=[],
            usage=AgentUsage(requests=2, input_tokens=20, output_tokens=10),
            queued_message_count=0,
        ),
        "events": [
            event(T.TURN_STARTED, 1, "turn-1/turn"),
            event(
                T.TOOL_CALL_DEFERRED,
                2,
                tool_call_id="c1",
                tool_name="lookup",
                effect="read",
                requires_approval=False,
            ),
            event(T.TOOL_CALL_STARTED, 3, "turn-1/tool/c1", tool_call_id="c1", tool_name="lookup"),
            event(
                T.TOOL_CALL_FINISHED,
                4,
                "turn-1/tool/c1",
                tool_call_id="c1",
                tool_name="lookup",
                status="succeeded",
            ),
            event(T.TURN_COMPLETED, 5, "turn-1/turn"),
        ],
        "requests": [
            request(
                {"messages": [{"role": "user", "content": "go"}], "tools": [{"function": {"name": "lookup"}}]}
            ),
            request(
                {
                    "messages": [
                        {"role": "user", "content": "go"},
                        {"role": "tool", "tool_call_id": "c1", "content": "lookup says 42"},
                    ]
                },
                1,
            ),
        ],
        "invocations": [
            {
                "kind": "tool",
                "name": "lookup",
                "tool_call_id": "c1",
                "idempotency_key": f"{SESSION}/turn-1/c1",
                "attempt": 1,
            }
        ],
        "steps": [
            StepHistoryEntry(
                step_type="sessionflow.RunModel",
                step_execution_id="turn-1/model-1",
                final_attempt=1,
                outcome="completed",
            ),
            StepHistoryEntry(
                step_type="sessionflow.CallTool",
                step_execution_id="turn-1/tool/c1",
                final_attempt=1,
                outcome="completed",
            ),
        ],
    }
    values.update(changes)
    return Observation(**values)


MATCHING: dict[str, Any] = {
    "snapshot": {"turn_count": 1, "message_count": 4, "last_turn_error": None, "usage": {"requests": 2}},
    "tool_statuses": {"c1": "succeeded"},
    "policies": {"c1": {"effect": "read", "requires_approval": False}},
    "invocations": {"lookup": {"count": 1, "attempts": [1], "idempotency_keys": ["{session}/turn-1/c1"]}},
    "model_requests": {
        "count": 2,
        "calls": [
            {"call": 1, "tools_offered": ["lookup"], "last_user_text": "go"},
            {
                "call": 2,
                "saw": ["lookup says 42"],
                "tool_results": {"c1": "lookup says 42"},
                "tool_result_ids": ["c1"],
            },
        ],
    },
    "events": {
        "subsequence": ["turn_started", "tool_call_finished", "turn_completed"],
        "contains": [{"type": "tool_call_finished", "data": {"status": "succeeded"}, "count": 1}],
        "absent": [{"type": "turn_failed"}],
    },
    "steps": [{"type": "RunModel", "final_attempt": 1}, {"type": "CallTool", "outcome": "completed"}],
}


def test_a_matching_observation_passes() -> None:
    assert check_expectations(expect(MATCHING), observation()) == []
    assert check_invariants(observation()) == []


def with_field(path: str, value: object) -> Expectations:
    data: Any = json.loads(json.dumps(MATCHING))
    *parents, last = path.strip("/").split("/")
    node: Any = data
    for token in parents:
        node = node[int(token) if token.isdigit() else token]
    node[int(last) if last.isdigit() else last] = value
    return expect(data)


def only_failure(expectations: Expectations, obs: Observation | None = None) -> str:
    failures = check_expectations(expectations, obs or observation())
    assert len(failures) == 1, failures
    return failures[0]


def test_each_expectation_can_fail() -> None:
    cases = {
        "/snapshot/turn_count": (2, "snapshot turn_count: expected 2, got 1"),
        "/snapshot/last_turn_error": (
            {"contains": "boom"},
            "snapshot last_turn_error: expected text, got None",
        ),
        "/snapshot/usage/requests": (3, "usage.requests: expected 3, got 2"),
        "/tool_statuses/c1": ("failed", "expected final status 'failed', got 'succeeded'"),
        "/tool_statuses/c9": ("succeeded", "tool call 'c9': expected a tool_call_finished event"),
        "/policies/c1/requires_approval": (True, "requires_approval=True, got effect 'read'"),
        "/invocations/lookup/count": (2, "expected 2 real run(s), got 1"),
        "/invocations/lookup/attempts": ([1, 2], "expected runs with attempts [1, 2], got [1]"),
        "/invocations/lookup/idempotency_keys": (
            ["{session}/turn-2/c1"],
            "expected idempotency keys ['s1/turn-2/c1']",
        ),
        "/model_requests/count": (3, "model requests: expected 3, the server recorded 2"),
        "/model_requests/calls/1/tool_results/c1": ({"startswith": "Tool call failed"}, "to start with"),
        "/model_requests/calls/1/saw": (["secret"], "did not see 'secret'"),
        "/model_requests/calls/1/tool_result_ids": (["c1", "c2"], "expected tool results for ['c1', 'c2']"),
        "/model_requests/calls/0/tools_offered": (["other"], "expected tools ['other'] offered"),
        "/model_requests/calls/0/last_user_text": ("stop", "last user text: expected 'stop', got 'go'"),
        "/events/subsequence": (["turn_completed", "turn_started"], "expected the subsequence"),
        "/events/contains/0/count": (2, "expected 2 event(s) tool_call_finished"),
        "/events/absent/0/type": ("tool_call_started", "expected no event tool_call_started"),
        "/steps/1/final_attempt": (3, "step history: expected"),
    }
    for path, (value, message) in cases.items():
        failure = only_failure(with_field(path, value))
        assert message in failure, (path, failure)


def test_a_call_that_never_happened_fails() -> None:
    failure = only_failure(with_field("/model_requests/calls/1/call", 5))
    assert failure == "model call 5: never made (the server recorded 2 request(s))"


def test_images_must_reach_the_request_body() -> None:
    expectations = expect({"model_requests": {"calls": [{"call": 1, "images": ["red"]}]}})
    png = b"\x89PNG fake bytes"
    assert "image 'red'" in only_failure(expectations, observation(images={"red": png}))
    import base64

    body = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "image_url",
                        "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()},
                    }
                ],
            }
        ]
    }
    assert check_expectations(expectations, observation(images={"red": png}, requests=[request(body)])) == []


def test_deltas_must_exist_carry_their_identity_and_join_to_the_text() -> None:
    expectations = expect(
        {
            "events": {
                "deltas": [
                    {
                        "type": "text_delta",
                        "source": "live",
                        "joined": "Hello",
                        "step_execution_id": "turn-1/model-1",
                        "attempt": 1,
                    }
                ]
            }
        }
    )
    assert "expected at least 1, got 0" in only_failure(expectations)
    live = [
        AgentEvent(
            type=T.TEXT_DELTA,
            turn_id="turn-1",
            step_execution_id="turn-1/model-1",
            attempt=1,
            data={"text": "Hel"},
        ),
        AgentEvent(
            type=T.TEXT_DELTA,
            turn_id="turn-1",
            step_execution_id="turn-1/model-1",
            attempt=1,
            data={"text": "lo"},
        ),
    ]
    assert check_expectations(expectations, observation(live_events=live)) == []
    wrong = [
        *live[:1],
        AgentEvent(
            type=T.TEXT_DELTA, turn_id="", step_execution_id="turn-1/model-2", attempt=2, data={"text": "lo"}
        ),
    ]
    failures = check_expectations(expectations, observation(live_events=wrong))
    assert any("lacks its identity" in f for f in failures), failures
    assert any("expected identity" in f for f in failures), failures
    # Durable deltas do not count for a live expectation.
    durable = [
        AgentEvent(
            type=T.TEXT_DELTA,
            turn_id="turn-1",
            step_execution_id="turn-1/model-1",
            attempt=1,
            data={"text": "Hello"},
            offset=9,
        )
    ]
    assert "expected at least 1, got 0" in only_failure(
        expectations, observation(events=observation().events + durable)
    )


def test_invariants_catch_double_runs_unapproved_runs_and_bad_keys() -> None:
    base = observation()
    deferred = event(
        T.TOOL_CALL_DEFERRED,
        2,
        tool_call_id="c1",
        tool_name="lookup",
        effect="non_idempotent_write",
        requires_approval=True,
    )
    events = [base.events[0], deferred, *base.events[2:]]
    twice = base.invocations * 2
    failures = check_invariants(observation(events=events, invocations=twice))
    assert any("ran 2 times, at most 1 allowed" in f for f in failures), failures
    assert any("ran without an approval" in f for f in failures), failures
    bad_key = [{**base.invocations[0], "idempotency_key": "other/turn-1/c1"}]
    assert any(
        "idempotency key 'other/turn-1/c1'" in f for f in check_invariants(observation(invocations=bad_key))
    )
    unfinished = [e for e in base.events if e.type is not T.TOOL_CALL_FINISHED]
    assert any("finished 0 times" in f for f in check_invariants(observation(events=unfinished)))
    anonymous = [
        *base.events,
        AgentEvent(type=T.TURN_STARTED, turn_id="", step_execution_id="", attempt=1, offset=6),
    ]
    assert any("lacks its identity" in f for f in check_invariants(observation(events=anonymous)))


def test_the_carried_state_expectations_can_fail() -> None:
    carried = observation(
        snapshot=replace(
            observation().snapshot, carried_state_preview="n: 1", carried_state_by_reference=True
        )
    )
    assert (
        check_expectations(
            expect({"snapshot": {"carried_state_preview": "n: 1", "carried_state_by_reference": True}}),
            carried,
        )
        == []
    )
    assert "carried_state_preview: expected None, got" in only_failure(
        expect({"snapshot": {"carried_state_preview": None}}), carried
    )
    assert "snapshot carried_state_preview" in only_failure(
        expect({"snapshot": {"carried_state_preview": "n: 2"}}), carried
    )
    assert "snapshot carried_state_preview" in only_failure(
        expect({"snapshot": {"carried_state_preview": "n: 1"}}), observation()
    )
    assert only_failure(expect({"snapshot": {"carried_state_by_reference": False}}), carried) == (
        "snapshot carried_state_by_reference: expected False, got True"
    )
