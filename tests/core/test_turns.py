"""Turns end to end on a real dev server with a worker child process."""

from __future__ import annotations

from sessionflow import AgentStatus
from sessionflow.testing import wait_for_agent_snapshot
from tests.core.conftest import Harness


async def idle_after(harness: Harness, session_id: str, turns: int):
    return await wait_for_agent_snapshot(
        harness.sessions,
        session_id,
        lambda s: s
        if s.state is not None and s.state.turn_count >= turns and s.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
        else None,
        description=f"turn {turns} to end",
    )


async def test_text_answer(harness: Harness) -> None:
    harness.script("s-text", [[{"text": "hello there"}]])
    await harness.sessions.start_session("s-text", "hi")
    snapshot = await idle_after(harness, "s-text", 1)
    assert [m.message.text for m in snapshot.messages] == ["hi", "hello there"]
    assert [m.sequence for m in snapshot.messages] == [1, 2]
    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    assert harness.seen("s-text", 1) == ["hi"]
