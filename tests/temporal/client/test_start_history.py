"""A session that starts from an existing history (`start_session(history=...)`).

The history is stored before the first turn as if earlier turns had produced it: the model
sees it, reads list it, `export_messages` returns it whole. Large bodies go by reference,
the first turn reads the history through the index chunk the client wrote, and a client
without a payload store refuses a history it could not start with.
"""

from __future__ import annotations

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from sessionflow import AgentSessionClient, MessageRole, UserError
from sessionflow.kit import FrameworkMessage
from sessionflow.session.transcript import HISTORY_TURN_ID
from sessionflow.temporal._payloads import RunModelInput
from sessionflow.temporal.client._start_history import HISTORY_BYTES_WITHOUT_STORE, HISTORY_INLINE_BYTES
from tests.harness import Harness
from tests.harness_helpers import idle_after, texts


def said(role: MessageRole, text: str) -> FrameworkMessage:
    """A message in the scripted runner's format."""
    return FrameworkMessage(role=role, framework_item={"role": role.value, "content": text}, text=text)


HISTORY = [
    said(MessageRole.USER, "my name is Ada"),
    said(MessageRole.ASSISTANT, "hello Ada"),
    said(MessageRole.USER, "I like tea"),
    said(MessageRole.ASSISTANT, "noted"),
]


async def _model_inputs(harness: Harness, session_id: str) -> list[RunModelInput]:
    """The inputs of the session's model steps, as its history records them."""
    client = harness.sessions.client
    history = await client.get_workflow_handle(session_id).fetch_history()
    inputs: list[RunModelInput] = []
    for event in history.events:
        if event.event_type != EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            continue
        attributes = event.activity_task_scheduled_event_attributes
        if attributes.activity_type.name == "sessionflow.RunModel":
            [decoded] = await client.data_converter.decode(attributes.input.payloads, [RunModelInput])
            inputs.append(decoded)
    return inputs


async def test_the_first_turn_sees_the_history(harness: Harness) -> None:
    harness.script("h-few", [[{"text": "you like tea"}], [{"text": "Ada"}]])
    await harness.sessions.start_session("h-few", "what do I like?", history=HISTORY)
    snapshot = await idle_after(harness, "h-few", 1)

    assert harness.seen("h-few", 1) == [*(m.text for m in HISTORY), "what do I like?"]
    assert texts(snapshot) == [*(m.text for m in HISTORY), "what do I like?", "you like tea"]
    assert [m.turn_id for m in snapshot.messages] == [HISTORY_TURN_ID] * 4 + ["turn-1"] * 2
    assert [m.sequence for m in snapshot.messages] == [1, 2, 3, 4, 5, 6]
    assert snapshot.state is not None and snapshot.state.turn_count == 1
    # The history went by reference through the client's index chunk: the step's input
    # carries the turn's user message alone.
    [first] = await _model_inputs(harness, "h-few")
    assert first.prefix_count == 4 and first.prefix_ref is not None
    assert [m.sequence for m in first.tail] == [5]

    assert await harness.sessions.send_user_message("h-few", "my name?")
    await idle_after(harness, "h-few", 2)
    assert harness.seen("h-few", 2)[:5] == [*(m.text for m in HISTORY), "what do I like?"]
    exported = await harness.sessions.export_messages("h-few")
    assert [m.message for m in exported[:4]] == HISTORY
    assert len(exported) == 8


async def test_a_history_with_no_message_waits_for_one(harness: Harness) -> None:
    harness.script("h-quiet", [[{"text": "still Ada"}]])
    await harness.sessions.start_session("h-quiet", history=HISTORY)
    snapshot = await harness.sessions.get_agent_snapshot("h-quiet")
    assert texts(snapshot) == [m.text for m in HISTORY]
    assert snapshot.state is not None and snapshot.state.turn_count == 0
    assert await harness.sessions.send_user_message("h-quiet", "who am I?")
    await idle_after(harness, "h-quiet", 1)
    assert harness.seen("h-quiet", 1) == [*(m.text for m in HISTORY), "who am I?"]


async def test_large_bodies_go_by_reference(harness: Harness) -> None:
    large = "x" * 20_000  # over the 8 KiB a body may keep inline
    history = [said(MessageRole.USER, large), said(MessageRole.ASSISTANT, "long")]
    harness.script("h-large", [[{"text": "ok"}]])
    await harness.sessions.start_session("h-large", "and?", history=history)
    snapshot = await idle_after(harness, "h-large", 1)

    assert harness.seen("h-large", 1) == [large, "long", "and?"]
    first = snapshot.messages[0].message
    assert first.body is not None and first.framework_item is None
    assert snapshot.messages[1].message == history[1]
    exported = await harness.sessions.export_messages("h-large")
    assert [m.message for m in exported[:2]] == history


async def test_a_long_history_of_small_messages_goes_wholly_by_reference(harness: Harness) -> None:
    count = 200
    history = [said(MessageRole.USER, f"{n:04d} " + "y" * 4000) for n in range(count)]
    assert count * 4000 > HISTORY_INLINE_BYTES
    harness.script("h-long", [[{"text": "read"}]], log_seen="sizes")
    await harness.sessions.start_session("h-long", "go", history=history)
    await idle_after(harness, "h-long", 1)

    assert len(harness.seen("h-long", 1)) == count + 1
    exported = await harness.sessions.export_messages("h-long")
    assert [m.message for m in exported[:count]] == history
    page = await harness.sessions.list_agent_messages("h-long", limit=200)
    assert all(m.message.body is not None for m in page.messages[:count])


async def test_a_client_without_a_store_refuses_what_it_cannot_start(
    harness: Harness, temporal_address: str
) -> None:
    bare = AgentSessionClient(await Client.connect(temporal_address), harness.flow)
    huge = [said(MessageRole.USER, "z" * 600_000), said(MessageRole.USER, "z" * 600_000)]
    with pytest.raises(UserError, match="too large to start a session without a payload store"):
        await bare.start_session("h-bare-huge", "hi", history=huge)
    assert 2 * 600_000 > HISTORY_BYTES_WITHOUT_STORE

    # Small enough, it travels inline and the session runs as with a store.
    harness.script("h-bare", [[{"text": "fine"}]])
    await bare.start_session("h-bare", "hi", history=HISTORY)
    snapshot = await idle_after(harness, "h-bare", 1)
    assert texts(snapshot) == [*(m.text for m in HISTORY), "hi", "fine"]


async def test_items_that_are_not_json_messages_are_refused(harness: Harness) -> None:
    bad_item = FrameworkMessage(role=MessageRole.USER, framework_item={"when": object()})
    with pytest.raises(UserError, match="history message 1: framework_item is not JSON"):
        await harness.sessions.start_session("h-bad", "hi", history=[bad_item])
    with pytest.raises(UserError, match="history item 2 is a dict"):
        await harness.sessions.start_session("h-bad", "hi", history=[HISTORY[0], {"role": "user"}])  # pyright: ignore[reportArgumentType]
