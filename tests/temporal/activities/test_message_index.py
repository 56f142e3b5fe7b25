"""The stored message index is written only when the messages it lacks pass 1 KiB."""

from __future__ import annotations

import json

from temporalio.api.enums.v1 import EventType

from sessionflow.session.bodies import UNINDEXED_MESSAGE_BYTES
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after


async def _indexed_turns(harness: Harness, session_id: str) -> list[bool]:
    """For each completed RunModel step, in order: did its result name an index chunk?"""
    history = await harness.stack.client.get_workflow_handle(session_id).fetch_history()
    scheduled: set[int] = set()
    indexed: list[bool] = []
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            if event.activity_task_scheduled_event_attributes.activity_type.name == "sessionflow.RunModel":
                scheduled.add(event.event_id)
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            completed = event.activity_task_completed_event_attributes
            if completed.scheduled_event_id in scheduled:
                result = json.loads(completed.result.payloads[0].data)
                indexed.append("index_ref" in result)
    return indexed


async def test_short_turns_ride_inline_until_the_index_is_worth_a_write(
    harness_factory: HarnessFactory,
) -> None:
    harness = await harness_factory(workers=1)
    long_answer = "a" * (UNINDEXED_MESSAGE_BYTES + 100)
    turns = [
        [{"text": "one"}],
        [{"text": "two"}],
        [{"text": long_answer}],
        [{"text": "four"}],
        [{"text": "five"}],
    ]
    harness.script("index", turns)
    await harness.sessions.start_session("index", "first")
    for number in range(2, 6):
        await idle_after(harness, "index", number - 1)
        if number == 5:
            # A worker without the session in its cache must rebuild the messages from the
            # index (turns 1-3) and the inline rest (turn 4 and the new message).
            harness.stack.workers[-1].kill()
            await harness.stack.start_worker()
        await harness.sessions.send_user_message("index", f"message {number}")
    snapshot = await idle_after(harness, "index", 5)
    assert snapshot.messages[-1].message.text == "five"
    # Turns 1-2 are short and write nothing; turn 3 passes 1 KiB and writes the index;
    # turn 4 is short again; turn 5 (on the new worker) is short too.
    assert await _indexed_turns(harness, "index") == [False, False, True, False, False]
    # What the model saw on the fresh worker: every message, in order.
    assert harness.seen("index", 5) == [
        "first",
        "one",
        "message 2",
        "two",
        "message 3",
        long_answer,
        "message 4",
        "four",
        "message 5",
    ]
