"""A user message the client built: the turn runs no `BuildUserMessage` step, and stores the same message.

A large message, and one from a client that sends only text (a version before this one),
still go through the step.
"""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType

from sessionflow import MessageRole
from sessionflow.kit import FrameworkMessage
from sessionflow.temporal._payloads import SEND_USER_MESSAGE, SendUserMessageRequest
from tests.harness import Harness
from tests.harness_helpers import idle_after, texts


async def _user_message_steps(harness: Harness, session_id: str) -> int:
    """Local activity markers in the session's history: each is one `BuildUserMessage` step."""
    history = await harness.sessions.client.get_workflow_handle(session_id).fetch_history()
    # Patch markers (such as sessionflow-search-attributes) are markers too; count local activities.
    return sum(
        e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and e.marker_recorded_event_attributes.marker_name == "core_local_activity"
        for e in history.events
    )


def _user_messages(snapshot_messages: list[FrameworkMessage]) -> list[FrameworkMessage]:
    return [m for m in snapshot_messages if m.role.value == "user"]


async def test_a_small_message_is_built_by_the_client(harness: Harness) -> None:
    harness.script("s-small", [[{"text": "one"}], [{"text": "two"}]])
    await harness.sessions.start_session("s-small", "hi")
    await idle_after(harness, "s-small", 1)
    assert await harness.sessions.send_user_message("s-small", "again")
    snapshot = await idle_after(harness, "s-small", 2)
    assert texts(snapshot) == ["hi", "one", "again", "two"]
    assert harness.seen("s-small", 2) == ["hi", "one", "again"]
    stored = _user_messages([m.message for m in snapshot.messages])
    runner = harness.flow.runner
    assert stored == [runner.build_user_message("hi"), runner.build_user_message("again")]
    assert await _user_message_steps(harness, "s-small") == 0


async def test_a_large_message_and_a_text_only_client_use_the_step(harness: Harness) -> None:
    large = "x" * 20_000  # over the 8 KiB a message body may keep inline
    harness.script("s-large", [[{"text": "one"}], [{"text": "two"}], [{"text": "three"}]])
    await harness.sessions.start_session("s-large", large)
    await idle_after(harness, "s-large", 1)
    # What a client before this version sends: the text alone.
    handle = harness.sessions.client.get_workflow_handle("s-large")
    accepted = await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
        SEND_USER_MESSAGE, SendUserMessageRequest(text="old client"), result_type=bool
    )
    assert accepted
    await idle_after(harness, "s-large", 2)
    # A client's message the step would not have kept inline (or not as a user message) is
    # rebuilt by the step, not stored as sent.
    oversized = FrameworkMessage(role=MessageRole.USER, framework_item={"role": "user", "content": large})
    accepted = await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
        SEND_USER_MESSAGE, SendUserMessageRequest(text="small", message=oversized), result_type=bool
    )
    assert accepted
    snapshot = await idle_after(harness, "s-large", 3)
    assert harness.seen("s-large", 3) == [large, "one", "old client", "two", "small"]
    first, second, third = _user_messages([m.message for m in snapshot.messages])
    assert first.body is not None and first.framework_item is None  # stored by reference, as before
    assert second == harness.flow.runner.build_user_message("old client")
    assert third == harness.flow.runner.build_user_message("small")
    assert await _user_message_steps(harness, "s-large") == 3
