"""EventLog: offsets, the retention bound by count and by bytes, and paging (ci/mutants' survivors)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from sessionflow import AgentEvent, AgentEventType
from sessionflow.session.events import AgentEventsPage, EventLog


def _event(text: str = "", **data: Any) -> AgentEvent:
    return AgentEvent(
        type=AgentEventType.TEXT_DELTA,
        turn_id="t",
        step_execution_id="s",
        attempt=1,
        data={"text": text, **data} if text else dict(data),
    )


def _offsets(page_or_log: EventLog | AgentEventsPage) -> list[int | None]:
    return [event.offset for event in page_or_log.events]


def test_offsets_count_from_one_and_continue_from_the_last() -> None:
    log = EventLog()
    assert [log.append(_event("a")).offset for _ in range(3)] == [1, 2, 3]
    continued = EventLog(last_offset=41)
    assert continued.append(_event("b")).offset == 42
    assert continued.last_offset == 42


def test_an_event_is_sized_as_96_bytes_plus_its_keys_and_values() -> None:
    log = EventLog()
    log.append(_event("abc"))  # 96 + len("text") + len("abc")
    assert log.retained_bytes == 103
    log.append(_event(number=12345))  # 96 + len("number") + len("12345")
    assert log.retained_bytes == 103 + 107


def test_the_count_bound_keeps_exactly_max_events_newest() -> None:
    log = EventLog(max_events=3)
    for _ in range(3):
        log.append(_event("x"))
    assert _offsets(log) == [1, 2, 3]
    log.append(_event("x"))
    assert _offsets(log) == [2, 3, 4]
    assert log.retained_bytes == 3 * (96 + 4 + 1)


def test_the_byte_bound_drops_the_oldest_only_once_over_it() -> None:
    size = 96 + 4 + 1
    log = EventLog(max_bytes=2 * size)
    log.append(_event("x"))
    log.append(_event("y"))
    assert _offsets(log) == [1, 2]  # exactly at the bound: kept
    log.append(_event("z"))
    assert _offsets(log) == [2, 3]
    assert [event.data["text"] for event in log.events] == ["y", "z"]
    assert log.retained_bytes == 2 * size


def test_one_event_larger_than_the_byte_bound_is_still_kept() -> None:
    log = EventLog(max_bytes=10)
    log.append(_event("a" * 100))
    assert _offsets(log) == [1]
    log.append(_event("b" * 100))
    assert _offsets(log) == [2]
    assert log.retained_bytes == 96 + 4 + 100


def test_read_pages_from_an_offset() -> None:
    log = EventLog()
    for letter in "abcde":
        log.append(_event(letter))
    page = log.read(after=2, limit=2)
    assert _offsets(page) == [3, 4]
    assert page.next_offset == 4
    assert not page.truncated
    assert _offsets(log.read(after=4)) == [5]
    assert _offsets(log.read(after=0)) == [1, 2, 3, 4, 5]
    assert _offsets(log.read(after=0, limit=0)) == [1]  # a page holds at least one event
    assert _offsets(log.read(after=0, limit=1)) == [1]  # and no more than asked for


def test_read_past_the_end_returns_nothing_and_keeps_the_offset() -> None:
    log = EventLog()
    for letter in "ab":
        log.append(_event(letter))
    page = log.read(after=2)
    assert page.events == []
    assert page.next_offset == 2
    assert not page.truncated


def test_read_before_the_retained_events_says_truncated() -> None:
    log = EventLog(max_events=2)
    for letter in "abcd":
        log.append(_event(letter))
    assert _offsets(log) == [3, 4]
    at_the_edge = log.read(after=2)
    assert _offsets(at_the_edge) == [3, 4]
    assert not at_the_edge.truncated
    before = log.read(after=1)
    assert before.truncated
    assert _offsets(before) == [3, 4]
    assert before.next_offset == 4


def test_read_of_an_empty_log_that_continued() -> None:
    log = EventLog(last_offset=5)
    page = log.read(after=5)
    assert (page.events, page.next_offset, page.truncated) == ([], 5, False)
    behind = log.read(after=3)
    assert (behind.events, behind.next_offset, behind.truncated) == ([], 5, True)
    ahead = log.read(after=7)
    assert (ahead.events, ahead.next_offset, ahead.truncated) == ([], 7, False)


def test_events_and_pages_are_immutable_and_take_keywords_only() -> None:
    event = _event("a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.attempt = 2  # pyright: ignore[reportAttributeAccessIssue]
    page = AgentEventsPage(events=[], next_offset=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        page.next_offset = 1  # pyright: ignore[reportAttributeAccessIssue]
    with pytest.raises(TypeError):
        AgentEvent(AgentEventType.TEXT_DELTA, "t", "s", 1)  # pyright: ignore[reportCallIssue]
    with pytest.raises(TypeError):
        AgentEventsPage([], 0)  # pyright: ignore[reportCallIssue]
    with pytest.raises(TypeError):
        EventLog([], 0)  # pyright: ignore[reportCallIssue]
    assert (page.truncated, page.closed) == (False, False)
