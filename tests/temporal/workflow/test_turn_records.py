"""A running turn read whole by any client, and finished turns that keep their record (issue 44)."""

from __future__ import annotations

from sessionflow import AgentEventType, LiveText, TurnOutcome, TurnResult
from sessionflow.testing import wait_until
from tests.harness import Harness
from tests.harness_helpers import idle_after, pending_interrupt

LOOK = {"id": "r1", "name": "list_files", "arguments": {"path": "."}}
WRITE = {"id": "w1", "name": "write_file", "arguments": {"path": "notes.md", "content": "hello"}}
TOOLS = {
    "list_files": {"effect": "read", "output": "notes.md"},
    "write_file": {"effect": "non_idempotent_write", "output": "written"},
}


async def test_a_client_that_connects_after_the_first_step_reads_its_text_and_calls(harness: Harness) -> None:
    harness.script(
        "tr-late",
        [
            [
                {"tool_calls": [LOOK, WRITE], "deltas": ["Let me look ", "around your workspace."]},
                {"text": "Done: notes.md is written."},
            ]
        ],
        TOOLS,
    )
    await harness.sessions.start_session("tr-late", "tidy up")
    interrupt = await pending_interrupt(harness, "tr-late")
    assert interrupt.reason == "`non_idempotent_write` calls ask for approval by default"

    async def read_finished() -> bool:
        [running] = await harness.sessions.list_turns("tr-late")
        return any(c.tool_call_id == "r1" and c.status == "succeeded" for c in running.tool_calls)

    await wait_until("the read to be recorded", read_finished)
    # A client that never saw a delta reads the step's text from durable state.
    [running] = await harness.sessions.list_turns("tr-late")
    assert running.outcome is TurnOutcome.RUNNING and running.user_sequence == 1
    assert [(s.step, s.text, s.tool_call_ids) for s in running.steps] == [
        ("turn-1/model-1", "Let me look around your workspace.", ["r1", "w1"])
    ]
    read, write = running.tool_calls
    assert (read.status, read.output, read.effect) == ("succeeded", "notes.md", "read")
    assert read.started_at is not None and read.finished_at is not None
    assert read.started_at <= read.finished_at
    assert (write.status, write.approval_reason) == ("awaiting_approval", interrupt.reason)
    events = (await harness.sessions.list_agent_events("tr-late")).events
    [step_event] = [e for e in events if e.type is AgentEventType.MODEL_STEP_COMPLETED]
    assert step_event.data["text"] == "Let me look around your workspace."
    # A follower in another process than the worker (this one) rebuilds the text from the
    # durable events alone, once, whatever coarse delta batches reached the log too.
    live = LiveText()
    for event in events:
        live.apply(event)
    assert live.text("turn-1") == "Let me look around your workspace."

    assert await harness.sessions.resolve_interrupt(
        "tr-late", interrupt.interrupt_id, approved=True, answered_by="alice"
    )
    await idle_after(harness, "tr-late", 1)
    [done] = await harness.sessions.list_turns("tr-late")
    assert done.outcome is TurnOutcome.COMPLETED and done.ended_at is not None
    assert [s.text for s in done.steps] == [
        "Let me look around your workspace.",
        "Done: notes.md is written.",
    ]
    write = done.tool_calls[1]
    assert (write.status, write.output) == ("succeeded", "written")
    assert write.approval is not None and write.approval.answered_by == "alice" and write.approval.approved
    assert done.usage.requests == 2
    assert harness.log.count("tool", "write_file") == 1


async def test_a_cancelled_turn_keeps_what_it_did_and_its_note_is_named(harness: Harness) -> None:
    harness.script(
        "tr-cancel",
        [
            [{"tool_calls": [LOOK, WRITE], "deltas": ["Looking first."]}, {"text": "never"}],
            [{"text": "Fine."}],
        ],
        TOOLS,
    )
    await harness.sessions.start_session("tr-cancel", "tidy up")
    await pending_interrupt(harness, "tr-cancel")

    async def read_finished() -> bool:
        [running] = await harness.sessions.list_turns("tr-cancel")
        return running.tool_calls[0].status == "succeeded"

    await wait_until("the read to be recorded", read_finished)
    assert await harness.sessions.cancel_turn("tr-cancel")
    snapshot = await idle_after(harness, "tr-cancel", 1)
    [cancelled] = await harness.sessions.list_turns("tr-cancel")
    assert cancelled.outcome is TurnOutcome.CANCELLED and cancelled.error == "turn cancelled"
    assert [s.text for s in cancelled.steps] == ["Looking first."]
    assert [(c.tool_call_id, c.status, c.error) for c in cancelled.tool_calls] == [
        ("r1", "succeeded", None),
        ("w1", "rejected", "turn cancelled"),
    ]
    assert harness.log.count("tool", "write_file") == 0
    # The note the next turn's model reads is the session's, and says nobody rejected the write.
    assert cancelled.note_sequence is not None
    note = next(m for m in snapshot.messages if m.sequence == cancelled.note_sequence)
    assert note.message.text is not None
    assert "write_file" in note.message.text and "Tool call not run: turn cancelled" in note.message.text
    assert "rejected by the user" not in note.message.text

    assert await harness.sessions.send_user_message("tr-cancel", "never mind")
    await idle_after(harness, "tr-cancel", 2)
    first, second = await harness.sessions.list_turns("tr-cancel")
    assert first == cancelled
    assert (second.turn_id, second.outcome) == ("turn-2", TurnOutcome.COMPLETED)


async def test_a_large_tool_output_is_read_whole_from_the_store(harness: Harness) -> None:
    big = "".join(f"line {n}\n" for n in range(4000))  # ~40 KB: kept by reference
    harness.script(
        "tr-big",
        [[{"tool_calls": [LOOK]}, {"text": "ok"}]],
        {"list_files": {"effect": "read", "output": big}},
    )
    await harness.sessions.start_session("tr-big", "list")
    await idle_after(harness, "tr-big", 1)
    [turn] = await harness.sessions.list_turns("tr-big")
    [read] = turn.tool_calls
    assert read.has_stored_output and read.output is not None and len(read.output) < len(big)
    assert await harness.sessions.tool_output("tr-big", "turn-1", "r1") == big


async def test_stream_turn_yields_each_steps_recorded_text(harness: Harness) -> None:
    harness.script(
        "tr-stream",
        [
            [{"text": "hi"}],
            [{"tool_calls": [LOOK], "deltas": ["Looking."]}, {"text": "Found notes.md."}],
        ],
        TOOLS,
    )
    await harness.sessions.start_session("tr-stream", "hello")
    await idle_after(harness, "tr-stream", 1)
    steps: list[tuple[str, str]] = []
    result: TurnResult | None = None
    async for item in harness.sessions.stream_turn("tr-stream", "look"):
        if isinstance(item, TurnResult):
            result = item
        elif item.type is AgentEventType.MODEL_STEP_COMPLETED:
            steps.append((item.step_execution_id, str(item.data["text"])))
    assert result is not None and result.text == "Found notes.md."
    assert steps == [("turn-2/model-1", "Looking."), ("turn-2/model-2", "Found notes.md.")]
