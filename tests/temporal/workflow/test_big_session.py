"""Sessions of any size: more tool output than a run's 50 MB history limit, on the server's defaults.

Every turn's read tool returns bytes unique to that call, so the store cannot share them:
60 turns of 1 MB in CI, 200 turns of 500 KB at full size (`bench/full_sizes.sh`). The
session must keep going through several continues-as-new, list every message, read
within a bounded size, and add the same few history bytes per turn at its last turn as
at turn 10.
"""

from __future__ import annotations

import json
from dataclasses import asdict

from sessionflow.temporal import history_size
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after
from tests.scale import scaled

TURNS = scaled(60, 200)
OUTPUT_BYTES = scaled(1_000_000, 500_000)
# A tool turn is four steps (user message, two model calls, one tool) and their workflow
# tasks and update: about 8.3 KB of events (measured) whatever the session's size, since
# every body travels as a short reference. Without the store one turn here adds 1 MB.
HISTORY_BYTES_PER_TURN = 10 * 1024
SNAPSHOT_BYTES = 1024 * 1024


def _script(turns: int) -> list[list[dict[str, object]]]:
    return [
        [
            {"tool_calls": [{"id": f"r{n}", "name": "read_big", "arguments": {"n": n}}]},
            {"text": f"answer {n}"},
        ]
        for n in range(1, turns + 1)
    ]


async def test_more_tool_output_than_a_runs_history_limit(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(continue_as_new_after_events=400)
    session_id = "big-1"
    harness.script(
        session_id,
        _script(TURNS),
        {"read_big": {"effect": "read", "output_bytes": OUTPUT_BYTES, "unique_output": True}},
        log_seen="sizes",
    )

    assert TURNS * OUTPUT_BYTES > 50 * 1024 * 1024, "the session must outgrow one run's history limit"
    await harness.sessions.start_session(session_id, "question 1")
    runs: list[str] = []
    sizes: list[int] = []
    for n in range(1, TURNS + 1):
        if n > 1:
            assert await harness.sessions.send_user_message(session_id, f"question {n}")
        await idle_after(harness, session_id, n, timeout=120)
        runs.append((await harness.stack.client.get_workflow_handle(session_id).describe()).run_id)
        sizes.append((await history_size(harness.stack.client, session_id))[1])

    def growth(at: int) -> int:
        # Bytes one turn adds inside one run (a continue-as-new starts a new, short history).
        for n in range(at, 1, -1):
            if runs[n - 1] == runs[n - 2]:
                return sizes[n - 1] - sizes[n - 2]
        raise AssertionError("no two consecutive turns in one run")

    early, late = growth(10), growth(TURNS)
    print(f"history bytes per turn: turn 10 {early}, turn {TURNS} {late}; runs {len(set(runs))}")
    assert len(set(runs)) >= 3, "the session should have continued as new several times"
    assert early <= HISTORY_BYTES_PER_TURN and late <= HISTORY_BYTES_PER_TURN, (early, late)
    assert late <= early * 1.2, (early, late)

    snapshot = await harness.sessions.get_agent_snapshot(session_id)
    assert snapshot.state is not None and snapshot.state.turn_count == TURNS
    assert snapshot.message_count == 4 * TURNS  # question, call, result, answer
    assert len(json.dumps(asdict(snapshot), default=str)) <= SNAPSHOT_BYTES
    assert snapshot.messages[-1].message.text == f"answer {TURNS}"

    sequences: list[int] = []
    after = 0
    while True:
        page = await harness.sessions.list_agent_messages(session_id, after=after, limit=200)
        assert len(json.dumps(asdict(page), default=str)) <= SNAPSHOT_BYTES
        sequences += [m.sequence for m in page.messages]
        if page.next_after is None:
            break
        after = page.next_after
    assert sequences == list(range(1, snapshot.message_count + 1))

    # The first turn's tool result is kept by reference, and reads back whole.
    first_result = await harness.sessions.get_message(session_id, 3)
    assert first_result.message.framework_item["role"] == "tool"
    assert len(first_result.message.framework_item["content"]) == OUTPUT_BYTES

    # The last model call saw the whole conversation, each tool result in full.
    last = harness.log.entries("model", session=session_id)[-1]
    assert last["message_count"] == snapshot.message_count - 3
    seen_sizes = [int(entry.split(":")[0]) for entry in last["seen"]]
    assert seen_sizes.count(OUTPUT_BYTES) == TURNS
    assert len(harness.log.entries("tool", session=session_id)) == TURNS
