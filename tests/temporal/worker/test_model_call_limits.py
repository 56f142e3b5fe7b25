"""`ModelCallLimits` and the worker's gate, without an engine (the session test is in
tests/builtin/test_provider_load.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError

from sessionflow.temporal import MODEL_CALL_LIMITS_ENV, ModelCallLimits
from sessionflow.temporal.activities._model_call_gate import WAIT_ERROR_TYPE, ModelCallGate
from sessionflow.temporal.worker._model_call_limits import model_call_keys


def test_parse_and_env() -> None:
    limits = ModelCallLimits.parse(" gpt-4.1-mini=2, openai=8 ,*=16,")
    assert limits.limits == {"gpt-4.1-mini": 2, "openai": 8, "*": 16}
    assert ModelCallLimits.parse("").limits == {}
    assert ModelCallLimits.from_env({}).limits == {}
    assert ModelCallLimits.from_env({MODEL_CALL_LIMITS_ENV: "m=1"}).limits == {"m": 1}
    # A model name may hold '=' nowhere but a provider prefix may hold ':' and '/'.
    assert ModelCallLimits.parse("openai:gpt-4o=3,meta/llama=1").limits == {
        "openai:gpt-4o": 3,
        "meta/llama": 1,
    }


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("gpt", "must read key=limit"),
        ("gpt=", "must read key=limit"),
        ("=2", "must read key=limit"),
        ("gpt=-1", "must read key=limit"),
        ("gpt=two", "must read key=limit"),
        ("gpt=0", "must be an integer >= 1"),
        ("a b=2", "without spaces"),
        ("gpt=1,gpt=2", "given twice"),
    ],
)
def test_bad_limits_are_refused_clearly(text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment) as raised:
        ModelCallLimits.from_env({MODEL_CALL_LIMITS_ENV: text})
    assert MODEL_CALL_LIMITS_ENV in str(raised.value)


def test_bad_limits_in_code() -> None:
    with pytest.raises(ValueError, match=">= 1"):
        ModelCallLimits({"m": 0})
    with pytest.raises(ValueError, match=">= 1"):
        ModelCallLimits({"m": True})


def test_which_limits_a_call_counts_against() -> None:
    limits = ModelCallLimits({"*": 10, "openai": 4, "gpt-4o": 2, "claude": 1})
    assert limits.applying(["openai:gpt-4o", "openai", "gpt-4o"]) == [("*", 10), ("gpt-4o", 2), ("openai", 4)]
    assert limits.applying([]) == [("*", 10)]


class WithModel:
    model = "openai:gpt-4o"


class WithKeys:
    def model_call_keys(self, settings: Mapping[str, Any]) -> list[str]:
        return [str(settings.get("model", "default-model"))]


def test_model_call_keys() -> None:
    assert model_call_keys(WithModel(), {}) == ("openai:gpt-4o", "openai", "gpt-4o")
    assert model_call_keys(WithKeys(), {"model": "anthropic/claude-x"}) == (
        "anthropic/claude-x",
        "anthropic",
        "claude-x",
    )
    assert model_call_keys(object(), {}) == ()


async def test_a_call_beyond_the_limit_waits_heartbeating_and_goes_on() -> None:
    gate = ModelCallGate(ModelCallLimits({"m": 1}))
    beats: list[int] = []
    three_beats = asyncio.Event()

    def beat() -> None:
        beats.append(1)
        if len(beats) >= 3:
            three_beats.set()

    first_in = asyncio.Event()
    release_first = asyncio.Event()
    order: list[str] = []

    async def call(name: str, hold: asyncio.Event | None) -> None:
        async with gate.slot(["m"], heartbeat=beat, interval=0.01, max_wait=None):
            order.append(f"{name} in")
            if hold is not None:
                first_in.set()
                await hold.wait()
            order.append(f"{name} out")

    first = asyncio.create_task(call("a", release_first))
    await first_in.wait()
    second = asyncio.create_task(call("b", None))
    await asyncio.wait_for(three_beats.wait(), timeout=30)  # b waits, and beats while it waits
    assert order == ["a in"]
    release_first.set()
    await asyncio.gather(first, second)
    assert order == ["a in", "a out", "b in", "b out"]


async def test_waiting_past_the_budget_fails_retryably_and_holds_nothing() -> None:
    gate = ModelCallGate(ModelCallLimits({"*": 5, "m": 1}))
    async with gate.slot(["m"], heartbeat=lambda: None, interval=0.01, max_wait=None):
        with pytest.raises(ApplicationError) as raised:
            async with gate.slot(["m"], heartbeat=lambda: None, interval=0.01, max_wait=0.05):
                pytest.fail("got a slot beyond the limit")
        assert raised.value.type == WAIT_ERROR_TYPE and not raised.value.non_retryable
    # Every slot is back: five calls at once fit the "*" limit, and "m" is free again.
    async with gate.slot(["m"], heartbeat=lambda: None, interval=0.01, max_wait=0.05):
        pass
    holders = [gate.slot([], heartbeat=lambda: None, interval=0.01, max_wait=0.05) for _ in range(5)]
    for holder in holders:
        await holder.__aenter__()
    for holder in holders:
        await holder.__aexit__(None, None, None)


async def test_a_cancelled_wait_and_a_failed_call_give_their_slots_back() -> None:
    gate = ModelCallGate(ModelCallLimits({"m": 1}))
    with pytest.raises(RuntimeError):
        async with gate.slot(["m"], heartbeat=lambda: None, interval=0.01, max_wait=None):
            raise RuntimeError("the model call failed")
    held = gate.slot(["m"], heartbeat=lambda: None, interval=0.01, max_wait=None)
    await held.__aenter__()

    async def wait() -> None:
        async with gate.slot(["m"], heartbeat=lambda: None, interval=0.01, max_wait=None):
            pass

    waiter = asyncio.create_task(wait())
    await asyncio.sleep(0.05)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await held.__aexit__(None, None, None)
    await asyncio.wait_for(wait(), timeout=5)  # free again: the cancelled waiter took nothing
