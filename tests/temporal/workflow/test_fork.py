"""Forking a session at turn N against a real worker: the fork starts from the original's
first N turns (what its model is then sent), records where it came from, and leaves the
original as it was."""

from __future__ import annotations

import pytest
from temporalio.client import Client

from sessionflow import (
    AgentMessage,
    AgentSessionClient,
    DoubleTexting,
    ForkedFrom,
    SessionExistsError,
    TurnOutOfRangeError,
    UnknownSessionError,
    UserError,
)
from sessionflow.session.transcript import HISTORY_TURN_ID
from sessionflow.testing import FileGate
from tests.harness import Harness
from tests.harness_helpers import idle_after, texts


def model_requests(harness: Harness, session_id: str) -> list[list[str]]:
    return [entry["seen"] for entry in harness.log.entries("model", session=session_id)]


async def two_turns(harness: Harness, session_id: str, first: str = "q1") -> list[AgentMessage]:
    """A session with two ended turns; its messages, whole."""
    harness.script(session_id, [[{"text": "a1"}], [{"text": "a2"}]])
    await harness.sessions.start_session(
        session_id, first, environment={"user": "ada"}, double_texting=DoubleTexting.REJECT
    )
    await idle_after(harness, session_id, 1)
    assert await harness.sessions.send_user_message(session_id, "q2")
    await idle_after(harness, session_id, 2)
    return await harness.sessions.export_messages(session_id)


async def test_a_fork_at_turn_1_starts_from_the_first_turn(harness: Harness) -> None:
    original = await two_turns(harness, "f-orig")
    harness.script("f-fork", [[{"text": "f1"}]])

    assert await harness.sessions.fork_session("f-orig", at_turn=1, new_session_id="f-fork") == "f-fork"
    fork = await harness.sessions.get_agent_snapshot("f-fork")
    assert fork.forked_from == ForkedFrom(session_id="f-orig", turn=1)
    assert texts(fork) == ["q1", "a1"]
    assert [m.turn_id for m in fork.messages] == [HISTORY_TURN_ID] * 2
    assert [m.message for m in await harness.sessions.export_messages("f-fork")] == [
        m.message for m in original if m.turn_id == "turn-1"
    ]
    # The fork starts idle, with the original's environment and policy.
    assert fork.state is not None and fork.state.turn_count == 0 and fork.queued_message_count == 0
    assert fork.environment == {"user": "ada"}
    assert fork.double_texting is DoubleTexting.REJECT

    # Its next model request holds exactly the first turn, then the new message.
    assert await harness.sessions.send_user_message("f-fork", "fq")
    snapshot = await idle_after(harness, "f-fork", 1)
    assert model_requests(harness, "f-fork") == [["q1", "a1", "fq"]]
    assert texts(snapshot) == ["q1", "a1", "fq", "f1"]

    # The original is as it was.
    assert await harness.sessions.export_messages("f-orig") == original
    still = await harness.sessions.get_agent_snapshot("f-orig")
    assert still.state is not None and still.state.turn_count == 2 and still.forked_from is None
    assert len(model_requests(harness, "f-orig")) == 2


async def test_a_fork_of_a_fork_keeps_its_history(harness: Harness) -> None:
    await two_turns(harness, "f-a")
    await harness.sessions.fork_session("f-a", at_turn=2, new_session_id="f-b")
    harness.script("f-b", [[{"text": "b1"}]])
    assert await harness.sessions.send_user_message("f-b", "bq")
    await idle_after(harness, "f-b", 1)

    # f-b's turn 1 comes after the history it was forked with: both go to the next fork.
    generated = await harness.sessions.fork_session("f-b", at_turn=1)
    assert generated.startswith("f-b.fork-")
    fork = await harness.sessions.get_agent_snapshot(generated)
    assert texts(fork) == ["q1", "a1", "q2", "a2", "bq", "b1"]
    assert fork.forked_from == ForkedFrom(session_id="f-b", turn=1)


async def test_large_bodies_are_copied_to_the_fork(harness: Harness) -> None:
    large = "x" * 20_000  # over the 8 KiB a message may keep inline
    original = await two_turns(harness, "f-large", first=large)
    stored = (await harness.sessions.list_agent_messages("f-large")).messages[0]
    assert stored.message.body is not None

    await harness.sessions.fork_session("f-large", at_turn=1, new_session_id="f-large-fork")
    page = await harness.sessions.list_agent_messages("f-large-fork")
    copied = page.messages[0].message
    # Kept by reference in the fork's own objects, with the same content. (The bodies'
    # digests differ: a body names its long texts' parts, which are the fork's own objects.)
    assert copied.body is not None and copied.body.claim != stored.message.body.claim
    assert "f-large-fork" in str(copied.body.claim) and "f-large-fork" not in str(stored.message.body.claim)
    assert (await harness.sessions.get_message("f-large-fork", 1)).message == original[0].message

    harness.script("f-large-fork", [[{"text": "seen it"}]])
    assert await harness.sessions.send_user_message("f-large-fork", "and?")
    await idle_after(harness, "f-large-fork", 1)
    assert model_requests(harness, "f-large-fork") == [[large, "a1", "and?"]]


async def test_a_fork_mid_turn_takes_only_ended_turns(harness: Harness) -> None:
    harness.script("f-mid", [[{"text": "a1"}], [{"gate": "f-mid", "text": "a2"}]])
    await harness.sessions.start_session("f-mid", "q1")
    await idle_after(harness, "f-mid", 1)
    assert await harness.sessions.send_user_message("f-mid", "q2")
    gate = FileGate(harness.state_dir, "f-mid")
    await gate.wait_until_reached()

    with pytest.raises(TurnOutOfRangeError, match=r"has ended turns 1\.\.1: cannot fork at turn 2"):
        await harness.sessions.fork_session("f-mid", at_turn=2, new_session_id="f-mid-2")
    await harness.sessions.fork_session("f-mid", at_turn=1, new_session_id="f-mid-1")
    assert texts(await harness.sessions.get_agent_snapshot("f-mid-1")) == ["q1", "a1"]

    gate.release()
    snapshot = await idle_after(harness, "f-mid", 2)
    assert texts(snapshot) == ["q1", "a1", "q2", "a2"]


async def test_fork_argument_errors(harness: Harness, temporal_address: str) -> None:
    await two_turns(harness, "f-err")
    with pytest.raises(UnknownSessionError, match="no session 'f-nobody'"):
        await harness.sessions.fork_session("f-nobody", at_turn=1)
    for turn in (0, 3, -1):
        with pytest.raises(TurnOutOfRangeError, match=r"has ended turns 1\.\.2"):
            await harness.sessions.fork_session("f-err", at_turn=turn)
    with pytest.raises(TurnOutOfRangeError, match="whole number"):
        await harness.sessions.fork_session("f-err", at_turn="1")  # pyright: ignore[reportArgumentType]
    with pytest.raises(ValueError, match="must be 1-255 characters"):
        await harness.sessions.fork_session("f-err", at_turn=1, new_session_id="no spaces")
    with pytest.raises(SessionExistsError):
        await harness.sessions.fork_session("f-err", at_turn=1, new_session_id="f-err")

    # A session with no ended turn has nothing to fork.
    harness.script("f-empty", [])
    await harness.sessions.start_session("f-empty")
    with pytest.raises(TurnOutOfRangeError, match="has no ended turn"):
        await harness.sessions.fork_session("f-empty", at_turn=1)

    # A body kept by reference cannot be forked by a client without the store.
    large = "y" * 20_000
    await two_turns(harness, "f-stored", first=large)
    bare = AgentSessionClient(await Client.connect(temporal_address), harness.flow)
    with pytest.raises(UserError, match="kept in a payload store, and this client has none"):
        await bare.fork_session("f-stored", at_turn=1, new_session_id="f-stored-fork")
