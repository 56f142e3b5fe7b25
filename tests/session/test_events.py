"""AgentEventWriter: event identity, closing, and thread safety."""

from __future__ import annotations

import threading
import time

from sessionflow import AgentEvent, AgentEventType
from sessionflow.kit import AgentEventWriter


def _writer(sink: list[AgentEvent]) -> AgentEventWriter:
    return AgentEventWriter(sink.append, turn_id="turn-3", step_execution_id="step-9", attempt=2)


def test_events_carry_the_writer_identity() -> None:
    events: list[AgentEvent] = []
    writer = _writer(events)
    writer.write_event(AgentEventType.TURN_STARTED)
    writer.write_text_delta("Hel")
    writer.write_reasoning_delta("hmm")
    writer.write_tool_call_started("c1", "search")
    writer.write_tool_call_finished("c1", "search", "succeeded")
    writer.write_event(AgentEventType.USAGE_RECORDED, {"requests": 1})
    assert events == [
        AgentEvent(type=AgentEventType.TURN_STARTED, turn_id="turn-3", step_execution_id="step-9", attempt=2),
        AgentEvent(
            type=AgentEventType.TEXT_DELTA,
            turn_id="turn-3",
            step_execution_id="step-9",
            attempt=2,
            data={"text": "Hel"},
        ),
        AgentEvent(
            type=AgentEventType.REASONING_DELTA,
            turn_id="turn-3",
            step_execution_id="step-9",
            attempt=2,
            data={"text": "hmm"},
        ),
        AgentEvent(
            type=AgentEventType.TOOL_CALL_STARTED,
            turn_id="turn-3",
            step_execution_id="step-9",
            attempt=2,
            data={"tool_call_id": "c1", "tool_name": "search"},
        ),
        AgentEvent(
            type=AgentEventType.TOOL_CALL_FINISHED,
            turn_id="turn-3",
            step_execution_id="step-9",
            attempt=2,
            data={"tool_call_id": "c1", "tool_name": "search", "status": "succeeded"},
        ),
        AgentEvent(
            type=AgentEventType.USAGE_RECORDED,
            turn_id="turn-3",
            step_execution_id="step-9",
            attempt=2,
            data={"requests": 1},
        ),
    ]
    assert all(e.offset is None for e in events)


def test_empty_deltas_are_not_written() -> None:
    events: list[AgentEvent] = []
    writer = _writer(events)
    writer.write_text_delta("")
    writer.write_reasoning_delta("")
    assert events == []


def test_writes_after_close_are_dropped() -> None:
    events: list[AgentEvent] = []
    writer = _writer(events)
    assert writer.closed is False
    writer.write_text_delta("a")
    writer.close()
    assert writer.closed is True
    writer.write_text_delta("b")
    writer.write_event(AgentEventType.TURN_COMPLETED)
    writer.write_tool_call_started("c1", "t")
    writer.close()
    assert [e.data for e in events] == [{"text": "a"}]


def test_writer_without_sink_is_closed_and_silent() -> None:
    writer = AgentEventWriter(None, turn_id="t", step_execution_id="s", attempt=1)
    assert writer.closed is True
    writer.write_event(AgentEventType.TURN_STARTED)


def test_delta_types() -> None:
    assert {t for t in AgentEventType if t.is_delta} == {
        AgentEventType.TEXT_DELTA,
        AgentEventType.REASONING_DELTA,
    }


def test_safe_from_many_threads() -> None:
    threads_count, per_thread = 8, 500
    events: list[AgentEvent] = []
    in_sink = 0
    overlap = False
    guard = threading.Lock()

    def sink(event: AgentEvent) -> None:
        nonlocal in_sink, overlap
        with guard:
            in_sink += 1
            overlap = overlap or in_sink > 1
        events.append(event)
        with guard:
            in_sink -= 1

    writer = AgentEventWriter(sink, turn_id="turn-1", step_execution_id="step-1", attempt=1)
    start = threading.Barrier(threads_count)

    def work(index: int) -> None:
        start.wait()
        for n in range(per_thread):
            writer.write_text_delta(f"{index}:{n}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert len(events) == threads_count * per_thread
    assert overlap is False, "the sink was entered by two threads at once"
    texts = [e.data["text"] for e in events]
    assert sorted(texts) == sorted(f"{i}:{n}" for i in range(threads_count) for n in range(per_thread))
    for index in range(threads_count):
        mine = [t for t in texts if t.startswith(f"{index}:")]
        assert mine == [f"{index}:{n}" for n in range(per_thread)]


def test_close_while_writing_from_threads_stops_all_writes() -> None:
    events: list[AgentEvent] = []
    writer = AgentEventWriter(events.append, turn_id="t", step_execution_id="s", attempt=1)
    closed_at: list[int] = []
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            writer.write_text_delta("x")

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 10
    while len(events) < 200 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert len(events) >= 200
    writer.close()
    closed_at.append(len(events))
    stop.set()
    for thread in threads:
        thread.join(timeout=10)
    assert len(events) == closed_at[0]
