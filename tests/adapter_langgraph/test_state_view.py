"""The snapshot shows the thread's state: every key that fits, whole, and names the rest.

A graph with no model: each turn ``note`` appends a large note (a reducer-managed list)
and answers with how many notes it saw. After turn 2 the notes are past the snapshot's
64 KiB, so the snapshot leaves that key out and names it, while the carry keeps it whole:
turn 3 still sees every note.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from sessionflow import AgentSessionOptions
from sessionflow.session.framework_state import FRAMEWORK_STATE_BYTES
from sessionflow_langgraph import langgraph_session_flow
from tests.adapter_langgraph.conftest import serving, turn_ended, unique
from tests.adapter_langgraph.flows import FAST

NOTE = "n" * (FRAMEWORK_STATE_BYTES // 2)


class Notes(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    notes: Annotated[list[str], operator.add]
    last: str


def notes_graph() -> StateGraph[Notes]:
    def note(state: Notes) -> dict[str, Any]:
        seen = len(state.get("notes") or [])
        return {"notes": [NOTE], "last": f"saw {seen}", "messages": [AIMessage(content=f"saw {seen} notes")]}

    builder = StateGraph(Notes)
    builder.add_node("note", note)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    builder.add_edge(START, "note")
    builder.add_edge("note", END)
    return builder


async def test_the_snapshot_shows_the_state_within_its_bound_and_the_carry_keeps_it_whole(
    temporal_address: str,
) -> None:
    key = unique("lg-state-view")
    flow = langgraph_session_flow(
        flow_type=key, graph=notes_graph(), options=AgentSessionOptions(timings=FAST)
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "one")
        first = await turn_ended(sessions, key)
        assert first.framework_state == {"notes": [NOTE], "last": "saw 0"}
        assert first.framework_state_omitted == []
        await sessions.send_user_message(key, "two")
        second = await turn_ended(sessions, key, turns=2)
        await sessions.send_user_message(key, "three")
        third = await turn_ended(sessions, key, turns=3)

    # Two notes are past the bound: the key is left out whole and named, the rest shown.
    assert second.framework_state == {"last": "saw 1"}
    assert second.framework_state_omitted == ["notes"]
    # The carry kept every note: turn 3 saw both.
    assert [m.message.text for m in third.messages][-1] == "saw 2 notes"
    assert third.framework_state == {"last": "saw 2"}
    assert third.state is not None and third.state.last_turn_error is None
