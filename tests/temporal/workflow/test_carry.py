"""Carry between turns through the real workflow: what the next turn's model steps are given."""

from __future__ import annotations

import hashlib

from sessionflow.session.bodies import INLINE_BODY_BYTES
from sessionflow.testing import FileGate
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after
from tests.temporal.payload_history import payload_sizes, run_histories

LOOKUP: dict[str, object] = {"id": "c1", "name": "lookup", "arguments": {}}
PAYLOAD_LIMIT = 2 * 1024 * 1024
"""The server's production limit on one payload."""


def carried(harness: Harness, session_id: str) -> list[tuple[str, int, str | None]]:
    """(turn, call, carried state) of every model step of the session, attempts included."""
    return [(m["turn"], m["call"], m["carried"]) for m in harness.log.entries("model", session=session_id)]


async def next_turn(harness: Harness, session_id: str, n: int, text: str = "next") -> None:
    assert await harness.sessions.send_user_message(session_id, f"{text} {n}")
    await idle_after(harness, session_id, n)


async def test_every_model_step_of_the_next_turn_gets_the_carry_and_none_clears_it(
    harness: Harness,
) -> None:
    harness.script(
        "carry-1",
        [
            [{"text": "one", "carry": "agent=billing"}],
            [{"tool_calls": [LOOKUP]}, {"text": "two", "carry": "agent=refunds"}],
            [{"text": "three"}],
            [{"text": "four"}],
        ],
        {"lookup": {"effect": "read"}},
    )
    await harness.sessions.start_session("carry-1", "go")
    snapshot = await idle_after(harness, "carry-1", 1)
    assert (snapshot.carried_state_preview, snapshot.carried_state_by_reference) == ("agent=billing", False)
    await next_turn(harness, "carry-1", 2)
    snapshot = await harness.sessions.get_agent_snapshot("carry-1")
    assert snapshot.carried_state_preview == "agent=refunds"
    await next_turn(harness, "carry-1", 3)
    snapshot = await harness.sessions.get_agent_snapshot("carry-1")
    assert snapshot.carried_state_preview is None
    await next_turn(harness, "carry-1", 4)
    assert carried(harness, "carry-1") == [
        ("turn-1", 1, None),
        ("turn-2", 1, "agent=billing"),
        ("turn-2", 2, "agent=billing"),
        ("turn-3", 1, "agent=refunds"),
        ("turn-4", 1, None),
    ]


async def test_a_failed_turn_keeps_the_previous_carry(harness: Harness) -> None:
    harness.script(
        "carry-fail",
        [
            [{"text": "one", "carry": "kept"}],
            [{"fail_attempts": 3, "text": "never", "carry": "lost"}],
            [{"text": "three"}],
        ],
    )
    await harness.sessions.start_session("carry-fail", "go")
    await idle_after(harness, "carry-fail", 1)
    await next_turn(harness, "carry-fail", 2)
    snapshot = await harness.sessions.get_agent_snapshot("carry-fail")
    assert snapshot.state is not None and (snapshot.state.last_turn_error or "").startswith(
        "model call failed"
    )
    assert snapshot.carried_state_preview == "kept"
    await next_turn(harness, "carry-fail", 3)
    assert carried(harness, "carry-fail") == [
        ("turn-1", 1, None),
        ("turn-2", 1, "kept"),
        ("turn-2", 1, "kept"),
        ("turn-2", 1, "kept"),
        ("turn-3", 1, "kept"),
    ]


async def test_the_carry_survives_continue_as_new_and_a_worker_sigkill(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory(continue_as_new_after_events=20)
    turns = 6
    harness.script(
        "carry-can",
        [
            [{"text": f"answer {n}", "carry": f"count={n}", **({"gate": "mid"} if n == 4 else {})}]
            for n in range(1, turns + 1)
        ],
    )
    await harness.sessions.start_session("carry-can", "go")
    await idle_after(harness, "carry-can", 1)
    runs = {(await harness.stack.client.get_workflow_handle("carry-can").describe()).run_id}
    for n in range(2, turns + 1):
        if n == 4:
            # The worker dies in turn 4's model step; the repeated attempt is given the carry again.
            assert await harness.sessions.send_user_message("carry-can", "next 4")
            await FileGate(harness.state_dir, "mid").wait_until_reached()
            harness.stack.workers[-1].kill()
            await harness.stack.start_worker()
            await idle_after(harness, "carry-can", 4)
        else:
            await next_turn(harness, "carry-can", n)
        runs.add((await harness.stack.client.get_workflow_handle("carry-can").describe()).run_id)
    assert len(runs) > 1, "the session should have continued as new"
    expected = [("turn-1", 1, None)]
    for n in range(2, turns + 1):
        expected += [(f"turn-{n}", 1, f"count={n - 1}")] * (2 if n == 4 else 1)
    assert carried(harness, "carry-can") == expected
    snapshot = await harness.sessions.get_agent_snapshot("carry-can")
    assert snapshot.carried_state_preview == f"count={turns}"


async def test_a_large_carry_travels_by_reference_under_the_payload_limit(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory(continue_as_new_after_events=20)
    size = 3 * 1024 * 1024
    harness.script(
        "carry-big",
        [
            [{"text": "one", "carry": "big:", "carry_bytes": size}],
            [{"text": "two", "carry": "big:", "carry_bytes": size}],
            [{"text": "three", "carry": "small"}],
            [{"text": "four"}],
        ],
    )
    whole = "big:" + "c" * (size - 4)
    await harness.sessions.start_session("carry-big", "go")
    snapshot = await idle_after(harness, "carry-big", 1)
    assert snapshot.carried_state_by_reference is True
    preview = snapshot.carried_state_preview
    assert preview is not None and preview.startswith("big:ccc") and "more characters are stored" in preview
    for n in (2, 3):
        await next_turn(harness, "carry-big", n)
    snapshot = await harness.sessions.get_agent_snapshot("carry-big")
    assert (snapshot.carried_state_preview, snapshot.carried_state_by_reference) == ("small", False)
    await next_turn(harness, "carry-big", 4)
    digest = f"{size}:{hashlib.sha256(whole.encode()).hexdigest()[:16]}"
    assert [c for _, _, c in carried(harness, "carry-big")] == [None, digest, digest, "small"]
    histories = await run_histories(harness.stack.client, "carry-big")
    assert len(histories) > 1, "the session should have continued as new with the carry"
    padding = b"c" * INLINE_BODY_BYTES
    for history in histories:
        for event in history.events:
            assert max(payload_sizes(event), default=0) <= PAYLOAD_LIMIT
            assert padding not in event.SerializeToString()
