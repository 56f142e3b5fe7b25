"""Where `AgentSessionClient.events` puts live events among a page of durable events."""

from __future__ import annotations

from sessionflow import AgentEvent, AgentEventType
from sessionflow.temporal.client._live_order import interleave

T = AgentEventType


def durable(kind: AgentEventType, step: str, offset: int, turn: str = "turn-1") -> AgentEvent:
    return AgentEvent(type=kind, turn_id=turn, step_execution_id=step, attempt=1, offset=offset)


def live(
    kind: AgentEventType, step: str, text: str = "", turn: str = "turn-1", attempt: int = 1
) -> AgentEvent:
    return AgentEvent(type=kind, turn_id=turn, step_execution_id=step, attempt=attempt, data={"text": text})


def shape(events: list[AgentEvent]) -> list[str]:
    return [f"{e.type.value}:{e.step_execution_id}:{e.data.get('text', '')}" for e in events]


def test_deltas_go_before_the_durable_events_their_step_end_caused() -> None:
    page = [
        durable(T.TURN_STARTED, "turn-1/turn", 1),
        durable(T.USAGE_RECORDED, "turn-1/model-1", 2),
        durable(T.TOOL_CALL_DEFERRED, "turn-1/model-1", 3),
        durable(T.TOOL_CALL_STARTED, "turn-1/tool/a", 4),
        durable(T.TOOL_CALL_FINISHED, "turn-1/tool/a", 5),
        durable(T.USAGE_RECORDED, "turn-1/model-2", 6),
        durable(T.TURN_COMPLETED, "turn-1/turn", 7),
    ]
    deltas = [
        live(T.TEXT_DELTA, "turn-1/model-1", "one"),
        live(T.TOOL_CALL_STARTED, "turn-1/tool/a", attempt=2),
        live(T.CUSTOM_EVENT, "turn-1/tool/a"),
        live(T.TEXT_DELTA, "turn-1/model-2", "two"),
    ]
    assert shape(interleave(deltas, page)) == [
        "turn_started:turn-1/turn:",
        "text_delta:turn-1/model-1:one",
        "usage_recorded:turn-1/model-1:",
        "tool_call_deferred:turn-1/model-1:",
        # The workflow writes tool_call_started when it starts the step: the tool's own events follow it.
        "tool_call_started:turn-1/tool/a:",
        "tool_call_started:turn-1/tool/a:",
        "custom_event:turn-1/tool/a:",
        "tool_call_finished:turn-1/tool/a:",
        "text_delta:turn-1/model-2:two",
        "usage_recorded:turn-1/model-2:",
        "turn_completed:turn-1/turn:",
    ]


def test_a_step_the_page_does_not_see_end_goes_after_the_page() -> None:
    page = [durable(T.TOOL_CALL_FINISHED, "turn-1/tool/a", 5)]
    deltas = [live(T.TEXT_DELTA, "turn-1/model-2", "x"), live(T.TEXT_DELTA, "turn-1/model-2", "y")]
    assert shape(interleave(deltas, page)) == [
        "tool_call_finished:turn-1/tool/a:",
        "text_delta:turn-1/model-2:x",
        "text_delta:turn-1/model-2:y",
    ]


def test_the_turn_end_bounds_every_step_of_its_turn_and_no_other() -> None:
    page = [
        durable(T.TURN_FAILED, "turn-1/turn", 8),
        durable(T.TURN_STARTED, "turn-2/turn", 9, turn="turn-2"),
    ]
    deltas = [
        live(T.TEXT_DELTA, "turn-2/model-1", "next", turn="turn-2"),
        live(T.TEXT_DELTA, "turn-1/model-3", "last"),
    ]
    assert shape(interleave(deltas, page)) == [
        "text_delta:turn-1/model-3:last",
        "turn_failed:turn-1/turn:",
        "turn_started:turn-2/turn:",
        "text_delta:turn-2/model-1:next",
    ]


def test_a_batched_delta_of_the_step_is_no_end_of_it() -> None:
    page = [
        durable(T.TEXT_DELTA, "turn-1/model-1", 2),
        durable(T.USAGE_RECORDED, "turn-1/model-1", 3),
    ]
    deltas = [live(T.TEXT_DELTA, "turn-1/model-1", "a")]
    assert shape(interleave(deltas, page)) == [
        "text_delta:turn-1/model-1:",
        "text_delta:turn-1/model-1:a",
        "usage_recorded:turn-1/model-1:",
    ]


def test_nothing_live_leaves_the_page_as_it_is() -> None:
    page = [durable(T.TURN_STARTED, "turn-1/turn", 1)]
    assert interleave([], page) == page
    assert interleave([], []) == []
