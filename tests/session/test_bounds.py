"""Bounded reads (`sessionflow.session.bounds`): what a snapshot or a page may carry."""

from __future__ import annotations

import json

from sessionflow import AgentToolCallStatus, MessageRole
from sessionflow.kit import FrameworkMessage
from sessionflow.session.bodies import INLINE_BODY_BYTES, BodyRef, preview_text
from sessionflow.session.bounds import bounded_interrupt, bounded_messages, bounded_tool_call, message_size
from sessionflow.session.messages import AgentMessage
from sessionflow.session.state import AgentInterrupt
from tests.session.helpers import record

_REF = BodyRef(driver="local", claim={"key": "k"}, size=10, sha256="0" * 64)


def _stored(
    sequence: int, text: str | None, item: object = None, *, body: BodyRef | None = None
) -> AgentMessage:
    return AgentMessage(
        sequence=sequence,
        turn_id="t1",
        message=FrameworkMessage(role=MessageRole.USER, framework_item=item, text=text, body=body),
    )


def test_message_size_is_the_item_as_json_plus_the_text_plus_200() -> None:
    assert message_size(_stored(1, None)) == 200
    assert message_size(_stored(1, "héllo")) == 205
    item = {"content": "é"}
    assert message_size(_stored(1, "ab", item)) == len(json.dumps(item, ensure_ascii=False)) + 2 + 200
    assert message_size(_stored(1, None, {"n": 1})) == len('{"n": 1}') + 200


def test_bounded_messages_keep_what_fits_newest_or_oldest_first() -> None:
    messages = [_stored(n, "x" * 100) for n in range(1, 5)]  # 300 bytes each
    newest = bounded_messages(messages, 600, newest=True)
    assert [m.sequence for m in newest] == [3, 4]
    oldest = bounded_messages(messages, 600, newest=False)
    assert [m.sequence for m in oldest] == [1, 2]
    assert [m.sequence for m in bounded_messages(messages, 599, newest=True)] == [4]
    assert [m.sequence for m in bounded_messages(messages, 1200, newest=False)] == [1, 2, 3, 4]
    assert bounded_messages(messages, 600, newest=True)[0] is messages[2]  # kept whole, not copied


def test_the_first_message_that_does_not_fit_ends_the_read() -> None:
    # A smaller message after it would fit, but a read is contiguous: the next read starts
    # at the one left out, so nothing after it may come in this one.
    messages = [_stored(1, "x" * 100), _stored(2, "x" * 500), _stored(3, "x" * 100)]
    assert [m.sequence for m in bounded_messages(messages, 650, newest=False)] == [1]
    assert [m.sequence for m in bounded_messages(messages, 650, newest=True)] == [3]


def test_a_message_too_large_for_the_bound_is_carried_as_its_preview() -> None:
    text = "y" * 1000
    large = _stored(1, text, {"content": text})
    [only] = bounded_messages([large], 500, newest=True)
    assert only.message.framework_item is None
    assert only.message.text == preview_text(text)
    assert only.sequence == 1
    # One that fits exactly stays whole.
    size = message_size(large)
    assert bounded_messages([large], size, newest=True) == [large]


def test_a_stored_message_is_never_cut_and_the_first_one_always_comes() -> None:
    stored = _stored(1, "z" * 300, {"x": "z" * 300}, body=_REF)
    [only] = bounded_messages([stored], 10, newest=True)
    assert only is stored
    small = _stored(2, "s")
    # The stored one does not fit after the first: the page ends there.
    assert bounded_messages([stored, small], 300, newest=True) == [small]
    assert bounded_messages([small, stored], 300, newest=False) == [small]


def test_a_legacy_message_without_text_previews_as_empty() -> None:
    large = _stored(1, None, {"content": "w" * 1000})
    [only] = bounded_messages([large], 100, newest=False)
    assert only.message.text == ""
    assert only.message.framework_item is None


def test_tool_call_fields_are_cut_past_the_inline_bound_and_no_sooner() -> None:
    fits = "a" * INLINE_BODY_BYTES
    whole = record(AgentToolCallStatus.SUCCEEDED, arguments=fits, output=fits, state_update=fits)
    assert bounded_tool_call(whole) is whole
    long = fits + "b"
    for field in ("arguments", "output", "state_update"):
        changed: dict[str, str] = {"arguments": fits, "output": fits, "state_update": fits, field: long}
        cut = bounded_tool_call(
            record(
                AgentToolCallStatus.SUCCEEDED,
                arguments=changed["arguments"],
                output=changed["output"],
                state_update=changed["state_update"],
            )
        )
        assert getattr(cut, field) == preview_text(long, INLINE_BODY_BYTES)
        for other in {"arguments", "output", "state_update"} - {field}:
            assert getattr(cut, other) == fits
    assert INLINE_BODY_BYTES == 8 * 1024


def test_tool_call_without_output_keeps_none_and_empty_arguments() -> None:
    bare = record(AgentToolCallStatus.PENDING, arguments="", output=None, state_update=None)
    bounded = bounded_tool_call(bare)
    assert (bounded.arguments, bounded.output, bounded.state_update) == ("", None, None)


def _interrupt(arguments: str) -> AgentInterrupt:
    return AgentInterrupt(
        interrupt_id="i1",
        turn_id="t1",
        tool_call_id="c1",
        tool_name="write",
        arguments=arguments,
        raised_at="2025-01-01T00:00:00+00:00",
    )


def test_interrupt_arguments_are_cut_past_the_inline_bound() -> None:
    fits = _interrupt("a" * INLINE_BODY_BYTES)
    assert bounded_interrupt(fits) is fits
    long = _interrupt("a" * (INLINE_BODY_BYTES + 1))
    cut = bounded_interrupt(long)
    assert cut.arguments == preview_text(long.arguments, INLINE_BODY_BYTES)
    assert (cut.interrupt_id, cut.tool_name) == ("i1", "write")
    empty = _interrupt("")
    assert bounded_interrupt(empty).arguments == ""
