"""Turns of any length: a run continues as new between two steps of one turn, carrying it.

One user message, hundreds of model -> tool rounds: the session moves to a new run
whenever the history passes `continue_as_new_after_events`, and the turn goes on there as
if nothing happened (issue 41).
"""

from __future__ import annotations

from temporalio.client import Client

from sessionflow import AgentEventType, TurnStatus
from tests.harness import Harness, HarnessFactory
from tests.scale import scaled

ROUNDS = scaled(300, 300)
CONTINUE_AS_NEW_AFTER_EVENTS = 400


def rounds_script(rounds: int) -> list[dict[str, object]]:
    steps: list[dict[str, object]] = [
        {"tool_calls": [{"id": f"c{n}", "name": "lookup", "arguments": {"n": n}}]}
        for n in range(1, rounds + 1)
    ]
    return [*steps, {"text": f"all {rounds} rounds done"}]


async def run_lengths(client: Client, session_id: str) -> list[int]:
    """The history length of every run of the session, oldest first."""
    lengths: list[int] = []
    async for execution in client.list_workflows(f"WorkflowId = '{session_id}'"):
        history = await client.get_workflow_handle(session_id, run_id=execution.run_id).fetch_history()
        lengths.append(len(history.events))
    return lengths[::-1]


async def test_one_turn_of_hundreds_of_rounds_moves_between_runs(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(continue_as_new_after_events=CONTINUE_AS_NEW_AFTER_EVENTS)
    harness.script("long-turn", [rounds_script(ROUNDS)], {"lookup": {"effect": "read", "output": "found"}})
    result = await harness.sessions.run_turn("long-turn", "work until done", timeout=600)

    assert (result.status, result.text, result.turn_id) == (
        TurnStatus.COMPLETED,
        f"all {ROUNDS} rounds done",
        "turn-1",
    )
    assert len(result.tool_calls) == ROUNDS and {c.status for c in result.tool_calls} == {"succeeded"}
    # Every tool ran once, and the model was called once per round and once more.
    runs = harness.log.entries("tool", session="long-turn")
    assert sorted(r["tool_call_id"] for r in runs) == sorted(f"c{n}" for n in range(1, ROUNDS + 1))
    model_calls = harness.log.entries("model", session="long-turn")
    assert len(model_calls) == ROUNDS + 1
    # The last request held every result of the turn.
    assert harness.seen("long-turn", ROUNDS + 1).count("found") == ROUNDS
    lengths = await run_lengths(harness.stack.client, "long-turn")
    assert len(lengths) > 1, lengths
    assert max(lengths) < 2 * CONTINUE_AS_NEW_AFTER_EVENTS, lengths
    # One unbroken turn for a follower: one start, one end, offsets in order, no repeats.
    page = await harness.sessions.list_agent_events("long-turn", limit=500)
    events = list(page.events)
    while page.events:
        page = await harness.sessions.list_agent_events("long-turn", after=page.next_offset, limit=500)
        events += page.events
    kinds = [e.type for e in events]
    assert (kinds.count(AgentEventType.TURN_STARTED), kinds.count(AgentEventType.TURN_COMPLETED)) == (1, 1)
    offsets = [e.offset for e in events]
    assert offsets == sorted(set(offsets))
    snapshot = await harness.sessions.get_agent_snapshot("long-turn")
    assert snapshot.usage.requests == ROUNDS + 1
    print(f"{ROUNDS} rounds in one turn: {len(lengths)} runs, history lengths {lengths}")
