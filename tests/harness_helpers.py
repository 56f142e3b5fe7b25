"""Small helpers shared by the integration tests that use `tests.harness`."""

from __future__ import annotations

from sessionflow import AgentInterrupt, AgentSnapshot, AgentStatus
from sessionflow.testing import FileGate, wait_for_agent_snapshot
from tests.harness import Harness


async def idle_after(harness: Harness, session_id: str, turns: int, timeout: float = 60.0) -> AgentSnapshot:
    """Wait until `turns` turns have ended and the session waits for the user."""

    def done(s: AgentSnapshot) -> AgentSnapshot | None:
        state = s.state
        if (
            state is not None
            and state.turn_count >= turns
            and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
        ):
            return s
        return None

    return await wait_for_agent_snapshot(
        harness.sessions,
        session_id,
        done,
        description=f"turn {turns} of {session_id} to end",
        timeout=timeout,
    )


async def pending_interrupt(
    harness: Harness, session_id: str, tool_call_id: str | None = None
) -> AgentInterrupt:
    def find(s: AgentSnapshot) -> AgentInterrupt | None:
        return next(
            (i for i in s.pending_interrupts if tool_call_id is None or i.tool_call_id == tool_call_id), None
        )

    return await wait_for_agent_snapshot(harness.sessions, session_id, find, description="a pending approval")


def texts(snapshot: AgentSnapshot) -> list[str | None]:
    return [m.message.text for m in snapshot.messages]


async def kill_at_gate(harness: Harness, gate_name: str) -> None:
    """Wait for a worker to reach the gate, SIGKILL it there, and start a replacement."""
    await FileGate(harness.state_dir, gate_name).wait_until_reached()
    harness.stack.workers[-1].kill()
    await harness.stack.start_worker()
