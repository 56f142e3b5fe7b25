"""Shared by the adapters' build-refusal tests: a session whose first turn a refused option fails."""

from __future__ import annotations

from sessionflow import AgentSessionFlow
from sessionflow.demo import ScriptedModelServer
from sessionflow.temporal import StepHistoryEntry, read_step_history
from tests.adapter_langgraph.conftest import serving, turn_ended


async def first_turn_error(
    temporal_address: str, flow: AgentSessionFlow, session_id: str, model_server: ScriptedModelServer
) -> tuple[str, list[StepHistoryEntry]]:
    """Run one turn of ``flow`` in this process; its error and the session's steps.

    The option is refused before any request, so the model server must see none.
    """
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(session_id, "hello")
        snapshot = await turn_ended(sessions, session_id)
        steps = await read_step_history(sessions.client, session_id)
    assert model_server.requests(session_id) == []
    assert snapshot.state is not None
    return snapshot.state.last_turn_error or "", steps
