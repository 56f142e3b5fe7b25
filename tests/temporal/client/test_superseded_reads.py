"""Superseded messages through a real worker: what reads, exports and forks return once a
turn says the framework's history no longer holds earlier messages (`TurnCompleted.superseded`).

The transcript is what the framework's history holds, so reads leave superseded messages
out; they stay stored, for an audit read and for a fork at a turn before the one that
dropped them.
"""

from __future__ import annotations

from tests.harness import Harness
from tests.harness_helpers import idle_after, texts


async def summarized(harness: Harness, session_id: str) -> None:
    """Three turns; turn 2 drops turn 1's messages from the framework's history."""
    harness.script(session_id, [[{"text": "a1"}], [{"text": "a2", "supersede": [1, 2]}], [{"text": "a3"}]])
    await harness.sessions.start_session(session_id, "q1")
    await idle_after(harness, session_id, 1)
    for number, text in ((2, "q2"), (3, "q3")):
        assert await harness.sessions.send_user_message(session_id, text)
        await idle_after(harness, session_id, number)


async def test_reads_leave_out_what_a_turn_superseded_and_an_audit_read_names_it(harness: Harness) -> None:
    await summarized(harness, "sup-reads")
    sessions = harness.sessions

    snapshot = await sessions.get_agent_snapshot("sup-reads")
    assert texts(snapshot) == ["q2", "a2", "q3", "a3"]
    assert snapshot.message_count == 6
    assert [m.message.text for m in await sessions.export_messages("sup-reads")] == ["q2", "a2", "q3", "a3"]
    first = await sessions.list_agent_messages("sup-reads", limit=1)
    assert ([m.sequence for m in first.messages], first.next_after, first.superseded) == ([3], 3, [])

    audit = await sessions.list_agent_messages("sup-reads", include_superseded=True)
    assert [m.message.text for m in audit.messages] == ["q1", "a1", "q2", "a2", "q3", "a3"]
    assert [(r.first, r.last, r.turn) for r in audit.superseded] == [(1, 2, 2)]
    exported = await sessions.export_messages("sup-reads", include_superseded=True)
    assert [m.sequence for m in exported] == [1, 2, 3, 4, 5, 6]
    # Asked for by sequence, a superseded message is still there.
    assert (await sessions.get_message("sup-reads", 1)).message.text == "q1"


async def test_a_fork_holds_what_the_framework_held_at_its_turn(harness: Harness) -> None:
    await summarized(harness, "sup-fork")
    sessions = harness.sessions

    # At turn 1 nothing was superseded yet; turn 2 dropped turn 1's messages.
    await sessions.fork_session("sup-fork", at_turn=1, new_session_id="sup-fork-1")
    assert texts(await sessions.get_agent_snapshot("sup-fork-1")) == ["q1", "a1"]
    await sessions.fork_session("sup-fork", at_turn=3, new_session_id="sup-fork-3")
    fork = await sessions.get_agent_snapshot("sup-fork-3")
    assert texts(fork) == ["q2", "a2", "q3", "a3"]
    # The fork starts from that history alone: nothing in it is superseded.
    audit = await sessions.list_agent_messages("sup-fork-3", include_superseded=True)
    assert (len(audit.messages), audit.superseded) == (4, [])


async def test_a_turn_that_supersedes_a_message_that_is_not_stored_fails(harness: Harness) -> None:
    harness.script("sup-bad", [[{"text": "a1", "supersede": [7]}]])
    await harness.sessions.start_session("sup-bad", "q1")
    snapshot = await idle_after(harness, "sup-bad", 1)
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error == (
        "invalid model step: a turn may supersede only stored messages; there is no message 7"
    )
    # Nothing of the turn's outcome was kept, and nothing was marked.
    assert texts(snapshot) == ["q1"]
    audit = await harness.sessions.list_agent_messages("sup-bad", include_superseded=True)
    assert audit.superseded == []
