"""Hedged reads: a read without an answer is sent once more, and the first answer wins."""

from __future__ import annotations

import asyncio

import pytest

from sessionflow_cli._hedged_client import hedged


class _Reads:
    """Reads that answer in the order the test releases them."""

    def __init__(self, *outcomes: str | Exception) -> None:
        self.outcomes = list(outcomes)
        self.gates = [asyncio.Event() for _ in outcomes]
        self.started = 0
        self.cancelled: list[int] = []
        self.hedged = asyncio.Event()

    async def read(self) -> str:
        index = self.started
        self.started += 1
        if index == 1:
            self.hedged.set()
        try:
            await self.gates[index].wait()
        except asyncio.CancelledError:
            self.cancelled.append(index)
            raise
        outcome = self.outcomes[index]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


async def test_a_read_that_answers_in_time_is_sent_once() -> None:
    reads = _Reads("first")
    reads.gates[0].set()
    assert await hedged(reads.read, after=60) == "first"
    assert reads.started == 1


async def test_a_held_read_is_sent_again_and_the_first_answer_wins() -> None:
    reads = _Reads("held", "second")
    reads.gates[1].set()  # the first read stays held, as Temporal holds a query
    assert await hedged(reads.read, after=0.01) == "second"
    assert reads.started == 2
    assert reads.cancelled == [0]


async def test_a_failed_read_gives_way_to_the_other() -> None:
    reads = _Reads(RuntimeError("first failed"), "second")

    async def release() -> None:
        await reads.hedged.wait()
        reads.gates[0].set()
        await asyncio.sleep(0)
        reads.gates[1].set()

    releaser = asyncio.create_task(release())
    assert await hedged(reads.read, after=0.01) == "second"
    await releaser


async def test_when_both_reads_fail_the_first_error_is_raised() -> None:
    reads = _Reads(RuntimeError("first failed"), RuntimeError("second failed"))

    async def release() -> None:
        await reads.hedged.wait()
        reads.gates[0].set()
        reads.gates[1].set()

    releaser = asyncio.create_task(release())
    with pytest.raises(RuntimeError, match="first failed"):
        await hedged(reads.read, after=0.01)
    await releaser
