"""A long session: continue-as-new keeps everything, and history per turn stays flat.

120 turns in CI, continuing as new every 240 events; 300 turns every 600 events at full
size (`bench/full_sizes.sh`): the same number of runs either way.
"""

from __future__ import annotations

from sessionflow.temporal import history_size
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after
from tests.scale import scaled

TURNS = scaled(120, 300)
CONTINUE_AS_NEW_AFTER_EVENTS = scaled(240, 600)


async def run_turn(harness: Harness, session_id: str, n: int) -> tuple[str, int]:
    """Send turn n, wait for it, and return (run ID, history bytes) afterwards."""
    if n > 1:
        assert await harness.sessions.send_user_message(session_id, f"question {n} " + "q" * 40)
    await idle_after(harness, session_id, n)
    description = await harness.stack.client.get_workflow_handle(session_id).describe()
    _, size = await history_size(harness.stack.client, session_id)
    return description.run_id, size


async def test_a_long_session_survives_continue_as_new(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(continue_as_new_after_events=CONTINUE_AS_NEW_AFTER_EVENTS)
    session_id = "long-1"
    turns = [
        [
            {"tool_calls": [{"id": "c1", "name": "lookup", "arguments": {"n": n}}]},
            {"text": f"answer {n} " + "a" * 60},
        ]
        if n % 10 == 0
        else [{"text": f"answer {n} " + "a" * 60}]
        for n in range(1, TURNS + 1)
    ]
    harness.script(session_id, turns, {"lookup": {"effect": "read", "output": "looked up"}})
    await harness.sessions.start_session(
        session_id, "question 1 " + "q" * 40, environment={"host": "h1", "user": "1000", "workspace": "/w"}
    )
    runs: list[str] = []
    sizes: dict[int, int] = {}
    for n in range(1, TURNS + 1):
        run_id, size = await run_turn(harness, session_id, n)
        runs.append(run_id)
        sizes[n] = size

    def growth(first: int, last: int) -> float:
        # Mean bytes a plain turn adds inside one run (a continue-as-new resets the history).
        # A mean over a window, because the bytes of one turn rise and fall: the messages the
        # stored index does not cover yet ride inline until they pass 1 KiB.
        added = [
            sizes[n] - sizes[n - 1]
            for n in range(first, last + 1)
            if runs[n - 1] == runs[n - 2] and n % 10 != 0 and (n - 1) % 10 != 0
        ]
        assert len(added) >= 10, (first, last, added)
        return sum(added) / len(added)

    assert len(set(runs)) > 1, "the session should have continued as new at least once"
    early, late = growth(3, 40), growth(TURNS - 39, TURNS)
    print(
        f"history bytes per turn: turns 3-40 {early:.0f}, turns {TURNS - 39}-{TURNS} {late:.0f}; runs {len(set(runs))}"
    )
    assert late <= early * 1.2, (early, late)

    snapshot = await harness.sessions.get_agent_snapshot(session_id)
    assert snapshot.state is not None and snapshot.state.turn_count == TURNS
    assert snapshot.environment == {"host": "h1", "user": "1000", "workspace": "/w"}
    tool_turns = TURNS // 10
    assert snapshot.message_count == 2 * TURNS + 2 * tool_turns
    assert snapshot.usage.requests == TURNS + tool_turns
    assert snapshot.usage.input_tokens == 10 * (TURNS + tool_turns)
    assert snapshot.messages[-1].message.text == f"answer {TURNS} " + "a" * 60
    # Every message is still there, in order, after the continues-as-new.
    sequences: list[int] = []
    after = 0
    while True:
        page = await harness.sessions.list_agent_messages(session_id, after=after, limit=200)
        sequences += [m.sequence for m in page.messages]
        if page.next_after is None:
            break
        after = page.next_after
    assert sequences == list(range(1, snapshot.message_count + 1))
    # The model saw the whole conversation on the last turn, not just the current run's part.
    last = harness.log.entries("model", session=session_id)[-1]
    # Turn 300 used a tool: its last model call saw everything but the request, result and answer.
    assert last["message_count"] == snapshot.message_count - 3
    assert harness.seen(session_id, 1)[0].startswith("question 1")
