"""SessionModel reads: paging through messages and snapshots."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionflow import AgentMessage, MessageRole
from sessionflow.kit import FrameworkMessage, TurnCompleted
from sessionflow.session.model import SessionModel
from sessionflow.session.queued_message import QueuedUserMessage
from sessionflow.session.reads import MAX_PAGE_SIZE, SNAPSHOT_MESSAGE_LIMIT
from tests.session.helpers import NOW, WRITE, assistant, call, model_in_turn, requested, user


def _with_messages(count: int) -> SessionModel:
    """A model holding `count` stored messages (sequences 1..count), built without turns."""
    return SessionModel(
        messages=[
            AgentMessage(sequence=n, turn_id=f"turn-{(n + 1) // 2}", message=user(str(n)))
            for n in range(1, count + 1)
        ]
    )


def _seqs(messages: list[AgentMessage]) -> list[int]:
    return [m.sequence for m in messages]


def test_limits() -> None:
    assert MAX_PAGE_SIZE == 200
    assert SNAPSHOT_MESSAGE_LIMIT == 200


def test_page_of_an_empty_model() -> None:
    page = SessionModel().page(after=0, limit=10)
    assert (page.messages, page.next_after) == ([], None)


def test_page_defaults_to_50_from_the_start() -> None:
    page = _with_messages(120).page()
    assert _seqs(page.messages) == list(range(1, 51))
    assert page.next_after == 50


@pytest.mark.parametrize(
    ("limit", "size"), [(-5, 1), (0, 1), (1, 1), (7, 7), (200, 200), (201, 200), (10_000, 200)]
)
def test_page_limit_is_clamped(limit: int, size: int) -> None:
    page = _with_messages(300).page(after=0, limit=limit)
    assert _seqs(page.messages) == list(range(1, size + 1))
    assert page.next_after == size


@pytest.mark.parametrize(
    ("after", "limit", "expected", "next_after"),
    [
        (-3, 4, [1, 2, 3, 4], 4),
        (0, 4, [1, 2, 3, 4], 4),
        (3, 4, [4, 5, 6, 7], 7),
        (6, 4, [7, 8, 9, 10], None),  # the last page ends exactly at the end
        (7, 4, [8, 9, 10], None),
        (9, 4, [10], None),
        (10, 4, [], None),
        (99, 4, [], None),
        (0, 10, list(range(1, 11)), None),
        (0, 9, list(range(1, 10)), 9),
    ],
)
def test_page_after_semantics(after: int, limit: int, expected: list[int], next_after: int | None) -> None:
    page = _with_messages(10).page(after=after, limit=limit)
    assert _seqs(page.messages) == expected
    assert page.next_after == next_after


@settings(max_examples=200, deadline=None, database=None)
@given(
    count=st.integers(min_value=0, max_value=450),
    limits=st.lists(st.integers(min_value=-3, max_value=260), min_size=1),
)
def test_paging_yields_every_message_once_in_order(count: int, limits: list[int]) -> None:
    model = _with_messages(count)
    seen: list[AgentMessage] = []
    after = 0
    for step in range(count + 2):
        limit = limits[step % len(limits)]
        page = model.page(after=after, limit=limit)
        assert len(page.messages) <= max(1, min(200, limit))
        seen.extend(page.messages)
        if page.next_after is None:
            break
        assert page.next_after == page.messages[-1].sequence
        after = page.next_after
    else:
        pytest.fail("paging did not end")
    assert seen == model.messages


def test_snapshot_of_a_running_turn() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("b", policy=WRITE), call("a")), now=NOW, deadline=None)
    model.queue_user_message(QueuedUserMessage(text="later"))
    snapshot = model.snapshot("session-1")
    assert snapshot.session_id == "session-1"
    assert snapshot.state == model.state
    assert snapshot.messages == model.messages
    assert snapshot.message_count == 1
    assert [r.tool_call_id for r in snapshot.tool_calls] == ["b", "a"]
    assert snapshot.pending_interrupts == model.pending_interrupts
    assert snapshot.usage == model.usage
    assert snapshot.queued_message_count == 1
    assert snapshot.stopped is False
    # The snapshot does not alias the model's lists.
    snapshot.pending_interrupts.clear()
    snapshot.messages.clear()
    assert len(model.pending_interrupts) == 1
    assert len(model.messages) == 1


def test_snapshot_tool_calls_are_sorted_by_deferral_order() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("z"), call("y"), call("x")), now=NOW, deadline=None)
    # Insertion order differs from deferral order after a record is replaced.
    record = model.tool_calls.pop("z")
    model.tool_calls["z"] = record
    assert list(model.tool_calls) == ["y", "x", "z"]
    assert [r.tool_call_id for r in model.snapshot("s").tool_calls] == ["z", "y", "x"]


def test_snapshot_before_start_has_no_state() -> None:
    model = SessionModel()
    model.stopped = True
    snapshot = model.snapshot("s", started=False)
    assert snapshot.state is None
    assert (snapshot.messages, snapshot.message_count, snapshot.tool_calls, snapshot.stopped) == (
        [],
        0,
        [],
        True,
    )


@pytest.mark.parametrize("count", [0, 1, 199, 200, 201, 450])
def test_snapshot_holds_at_most_the_last_200_messages(count: int) -> None:
    snapshot = _with_messages(count).snapshot("s")
    assert snapshot.message_count == count
    assert _seqs(snapshot.messages) == list(range(max(1, count - 199), count + 1))


def test_snapshot_after_real_turns() -> None:
    model = SessionModel()
    for _ in range(70):
        model.begin_turn()
        model.store_user_message(user())
        model.complete_turn(TurnCompleted(new_messages=[assistant(), assistant()]))
    snapshot = model.snapshot("s")
    assert snapshot.message_count == 210
    assert _seqs(snapshot.messages) == list(range(11, 211))
    assert snapshot.state is not None and snapshot.state.turn_count == 70


def _sized(sizes: list[int]) -> SessionModel:
    """Stored messages whose read size (`bounds.message_size`: text plus 200) is given."""
    return SessionModel(
        messages=[
            AgentMessage(
                sequence=n,
                turn_id="turn-1",
                message=FrameworkMessage(role=MessageRole.USER, framework_item=None, text="x" * (size - 200)),
            )
            for n, size in enumerate(sizes, start=1)
        ]
    )


def test_a_snapshot_carries_the_newest_messages_up_to_512_kib_exactly() -> None:
    half = 256 * 1024
    assert _seqs(_sized([half, half, half]).snapshot("s").messages) == [2, 3]
    assert _seqs(_sized([half, half + 1]).snapshot("s").messages) == [2]


def test_a_page_carries_the_oldest_messages_up_to_512_kib_exactly() -> None:
    half = 256 * 1024
    exact = _sized([half, half, half]).page(after=0, limit=10)
    assert (_seqs(exact.messages), exact.next_after) == ([1, 2], 2)
    over = _sized([half + 1, half]).page(after=0, limit=10)
    assert (_seqs(over.messages), over.next_after) == ([1], 1)
