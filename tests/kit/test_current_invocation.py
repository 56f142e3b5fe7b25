"""`current_tool_invocation()`: the call a tool step runs, set and put back by its scope."""

from __future__ import annotations

import asyncio

import pytest

from sessionflow.kit import ToolInvocation, current_tool_invocation, tool_invocation_scope

OUTER = ToolInvocation(tool_call_id="c-1", idempotency_key="s/turn-1/c-1", attempt=1)
INNER = ToolInvocation(tool_call_id="c-2", idempotency_key="s/turn-1/c-2", attempt=2)


def test_the_scope_sets_the_invocation_and_puts_the_previous_one_back() -> None:
    assert current_tool_invocation() is None
    with tool_invocation_scope(OUTER) as entered:
        assert entered is OUTER
        assert current_tool_invocation() is OUTER
        with tool_invocation_scope(INNER):
            assert current_tool_invocation() is INNER
        assert current_tool_invocation() is OUTER
    assert current_tool_invocation() is None


def test_a_tool_that_raises_leaves_no_invocation_behind() -> None:
    with pytest.raises(RuntimeError, match="tool failed"), tool_invocation_scope(OUTER):
        raise RuntimeError("tool failed")
    assert current_tool_invocation() is None


def test_a_sync_tool_run_in_a_thread_sees_the_invocation() -> None:
    async def run() -> ToolInvocation | None:
        with tool_invocation_scope(OUTER):
            return await asyncio.to_thread(current_tool_invocation)

    assert asyncio.run(run()) is OUTER
