"""Turns of any length: a run continues as new between two steps of one turn, carrying it.

One user message, hundreds of model -> tool rounds: the session moves to a new run
whenever the history passes `continue_as_new_after_events`, and the turn goes on there as
if nothing happened (issue 41).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

import pytest
from temporalio.client import Client

from sessionflow import (
    AgentEvent,
    AgentEventType,
    MessageRejectedError,
    ToolEffect,
    ToolPolicy,
    TurnResult,
    TurnStatus,
    serve_agent_flows,
)
from sessionflow.testing import CRASH_TIMINGS, FileGate
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after, kill_at_gate
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


async def scheduled_by_run(client: Client, session_id: str) -> list[list[str]]:
    """The activity IDs each run of the session scheduled, oldest run first."""
    runs: list[list[str]] = []
    async for execution in client.list_workflows(f"WorkflowId = '{session_id}'"):
        history = await client.get_workflow_handle(session_id, run_id=execution.run_id).fetch_history()
        runs.append(
            [
                e.activity_task_scheduled_event_attributes.activity_id
                for e in history.events
                if e.HasField("activity_task_scheduled_event_attributes")
            ]
        )
    return runs[::-1]


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
    offsets = [e.offset or 0 for e in events]
    assert offsets == sorted(set(offsets))
    snapshot = await harness.sessions.get_agent_snapshot("long-turn")
    assert snapshot.usage.requests == ROUNDS + 1
    print(f"{ROUNDS} rounds in one turn: {len(lengths)} runs, history lengths {lengths}")


def gated(rounds: int, gates: dict[int, str]) -> list[dict[str, object]]:
    """`rounds_script` whose model steps at the given rounds wait at a gate (first attempt only)."""
    steps = rounds_script(rounds)
    for index, gate in gates.items():
        steps[index - 1] = {**steps[index - 1], "gate": gate}
    return steps


async def test_sigkills_around_the_moves_lose_and_repeat_nothing(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(continue_as_new_after_events=40)
    harness.script(
        "turn-kill", [gated(12, {4: "k4", 5: "k5"})], {"lookup": {"effect": "read", "output": "found"}}
    )
    waiting = asyncio.create_task(harness.sessions.run_turn("turn-kill", "go", timeout=300))
    for gate in ("k4", "k5"):  # the first move falls between rounds 3 and 5
        await kill_at_gate(harness, gate)
    result = await waiting
    assert (result.status, result.text) == (TurnStatus.COMPLETED, "all 12 rounds done")
    tools = harness.log.entries("tool", session="turn-kill")
    assert sorted(r["tool_call_id"] for r in tools) == sorted(f"c{n}" for n in range(1, 13))
    models = harness.log.entries("model", session="turn-kill")
    # Two model steps died at their gates and ran again; nothing else repeated.
    assert len(models) == 13 + 2
    assert [m["attempt"] for m in models].count(2) == 2
    assert len(await run_lengths(harness.stack.client, "turn-kill")) > 2


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("enqueue", ["completed", "completed"]),
        ("interrupt", ["cancelled", "completed"]),
        ("reject", ["completed"]),
    ],
)
async def test_a_message_sent_to_a_turn_that_moves(
    harness_factory: HarnessFactory, policy: str, expected: list[str]
) -> None:
    harness: Harness = await harness_factory(continue_as_new_after_events=40)
    session_id = f"turn-msg-{policy}"
    harness.script(
        session_id,
        [gated(8, {5: "held"}), [{"text": "second turn"}]],
        {"lookup": {"effect": "read", "output": "found"}},
    )
    first = asyncio.create_task(harness.sessions.run_turn(session_id, "go", timeout=300))
    gate = FileGate(harness.state_dir, "held")
    await gate.wait_until_reached()
    runs_before = len(await run_lengths(harness.stack.client, session_id))
    assert runs_before > 1  # the turn moved before the message came
    if policy == "reject":
        with pytest.raises(MessageRejectedError):
            await harness.sessions.send_user_message(session_id, "next", double_texting=policy)
    else:
        assert await harness.sessions.send_user_message(session_id, "next", double_texting=policy)
    gate.release()
    ended = await first
    snapshot = await idle_after(harness, session_id, len(expected))
    assert snapshot.state is not None and snapshot.state.turn_count == len(expected)
    page = await harness.sessions.list_agent_events(session_id, limit=500)
    endings = [
        e for e in page.events if e.type in (AgentEventType.TURN_COMPLETED, AgentEventType.TURN_FAILED)
    ]
    while page.events:
        page = await harness.sessions.list_agent_events(session_id, after=page.next_offset, limit=500)
        endings += [
            e for e in page.events if e.type in (AgentEventType.TURN_COMPLETED, AgentEventType.TURN_FAILED)
        ]
    outcomes = [
        "completed" if e.type is AgentEventType.TURN_COMPLETED else str(e.data["reason"]) for e in endings
    ]
    assert outcomes == expected
    assert ended.status.value == expected[0]
    if len(expected) == 2:
        assert snapshot.messages[-1].message.text == "second turn"


async def test_a_cancel_while_a_moved_turn_runs_ends_it_once(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(continue_as_new_after_events=40)
    harness.script("turn-cancel", [gated(10, {6: "held"})], {"lookup": {"effect": "read", "output": "found"}})
    first = asyncio.create_task(harness.sessions.run_turn("turn-cancel", "go", timeout=300))
    gate = FileGate(harness.state_dir, "held")
    await gate.wait_until_reached()
    assert len(await run_lengths(harness.stack.client, "turn-cancel")) > 1  # it moved first
    assert await harness.sessions.cancel_turn("turn-cancel")
    gate.release()
    result = await first
    assert (result.status, result.stop_reason) == (TurnStatus.CANCELLED, "cancelled")
    # The rounds before the cancel each ran their tool once; none after it.
    tools = harness.log.entries("tool", session="turn-cancel")
    assert sorted(r["tool_call_id"] for r in tools) == sorted(f"c{n}" for n in range(1, 6))


async def test_a_budget_nearly_spent_before_the_move_is_kept_after_it(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory(continue_as_new_after_events=40, max_tool_calls_per_turn=7)
    harness.script("turn-budget", [rounds_script(12)], {"lookup": {"effect": "read", "output": "found"}})
    result = await harness.sessions.run_turn("turn-budget", "go", timeout=300)
    assert (result.status, result.stop_reason) == (TurnStatus.STOPPED, "tool_budget")
    assert len(await run_lengths(harness.stack.client, "turn-budget")) > 1
    # Seven calls ran across the runs; the eighth was refused by the budget the move carried.
    tools = harness.log.entries("tool", session="turn-budget")
    assert sorted(r["tool_call_id"] for r in tools) == sorted(f"c{n}" for n in range(1, 8))


async def test_an_approval_pending_when_the_run_moves_is_answered_afterwards(
    harness_factory: HarnessFactory,
) -> None:
    """The turn waits on an approval while messages pile up behind it; their updates grow
    the history until the run moves, with the approval still open."""
    timings = replace(CRASH_TIMINGS, interrupt_deadline=timedelta(hours=1))
    harness: Harness = await harness_factory(
        continue_as_new_after_events=80,
        timings=timings,
        tool_policies={"publish": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True)},
    )
    steps = rounds_script(3)[:-1]
    later: list[list[dict[str, object]]] = [[{"text": f"later {n}"}] for n in range(1, 21)]
    publish: dict[str, object] = {"tool_calls": [{"id": "w", "name": "publish", "arguments": {}}]}
    harness.script(
        "turn-wait",
        [
            [
                *steps,
                publish,
                {"text": "published"},
            ],
            *later,
        ],
        {"lookup": {"effect": "read", "output": "found"}, "publish": {"output": "out"}},
    )
    waiting = await harness.sessions.run_turn("turn-wait", "go", timeout=120)
    assert waiting.status is TurnStatus.WAITING
    (before,) = waiting.interrupts
    assert len(await run_lengths(harness.stack.client, "turn-wait")) == 1
    sent = 0
    while len(await run_lengths(harness.stack.client, "turn-wait")) == 1:
        sent += 1
        assert sent <= 20, "the run never moved"
        assert await harness.sessions.send_user_message("turn-wait", f"meanwhile {sent}")
    (after,) = (await harness.sessions.get_agent_snapshot("turn-wait")).pending_interrupts
    assert (after.interrupt_id, after.deadline, after.raised_at) == (
        before.interrupt_id,
        before.deadline,
        before.raised_at,
    )  # carried as it was
    assert "w" not in [e["tool_call_id"] for e in harness.log.entries("tool", session="turn-wait")]
    assert await harness.sessions.resolve_interrupt("turn-wait", after.interrupt_id, approved=True)
    # Every message sent was kept, the one whose update reached the new run in its first
    # workflow task too (it is handled before `run` starts: the carried model is in place).
    snapshot = await idle_after(harness, "turn-wait", 1 + sent)
    texts = [m.message.text for m in snapshot.messages]
    assert "published" in texts and texts[-1] == f"later {sent}"
    assert [e["tool_call_id"] for e in harness.log.entries("tool", session="turn-wait")].count("w") == 1
    # The model step that asked for the write ran in an earlier run than the write itself:
    # the run moved while the approval waited.
    scheduled = await scheduled_by_run(harness.stack.client, "turn-wait")
    asked_in = next(i for i, ids in enumerate(scheduled) if "turn-1/model-4" in ids)
    ran_in = next(i for i, ids in enumerate(scheduled) if "turn-1/tool/w" in ids)
    assert asked_in < ran_in, scheduled


async def test_a_follower_sees_one_unbroken_turn_across_the_moves(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(workers=0, continue_as_new_after_events=40)
    steps = [
        {**step, "deltas": [f"r{n}a ", f"r{n}b "]} if "tool_calls" in step else step
        for n, step in enumerate(rounds_script(10), start=1)
    ]
    harness.script("turn-stream", [steps], {"lookup": {"effect": "read", "output": "found"}})
    stop = asyncio.Event()
    # The worker shares this process, so its deltas reach the client on the in-process bus.
    worker = asyncio.create_task(serve_agent_flows(harness.stack.client, [harness.flow], stop=stop))
    try:
        items = [item async for item in harness.sessions.stream_turn("turn-stream", "go", timeout=120)]
    finally:
        stop.set()
        await worker
    *events, result = items
    assert isinstance(result, TurnResult) and result.status is TurnStatus.COMPLETED
    assert len(await run_lengths(harness.stack.client, "turn-stream")) > 2
    seen = [e for e in events if isinstance(e, AgentEvent)]
    kinds = [e.type for e in seen]
    assert (kinds[0], kinds[-1], kinds.count(AgentEventType.TURN_STARTED)) == (
        AgentEventType.TURN_STARTED,
        AgentEventType.TURN_COMPLETED,
        1,
    )
    # Every round's deltas, in order, once; durable events in offset order.
    text = "".join(str(e.data["text"]) for e in seen if e.type is AgentEventType.TEXT_DELTA)
    assert text == "".join(f"r{n}a r{n}b " for n in range(1, 11))
    offsets = [e.offset for e in seen if e.offset is not None]
    assert offsets == sorted(set(offsets))
    # Each round's tool call finished before the next round's deltas began.
    finished = [i for i, e in enumerate(seen) if e.type is AgentEventType.TOOL_CALL_FINISHED]
    firsts = [next(i for i, e in enumerate(seen) if e.data.get("text") == f"r{n}a ") for n in range(2, 11)]
    assert all(done < first for done, first in zip(finished[:-1], firsts, strict=True))
