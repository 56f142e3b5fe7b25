"""An error's class says whether its step runs again: `SessionError.retryable`."""

from __future__ import annotations

from tests.harness import Harness
from tests.harness_helpers import idle_after


def call(tool_call_id: str, name: str, **arguments: object) -> dict[str, object]:
    return {"id": tool_call_id, "name": name, "arguments": arguments}


async def test_a_read_tool_raising_a_user_error_runs_once(harness: Harness) -> None:
    harness.script(
        "nr-user",
        [[{"tool_calls": [call("c1", "lookup")]}, {"text": "done"}]],
        {"lookup": {"effect": "read", "user_error": "the lookup is misconfigured"}},
    )
    await harness.sessions.start_session("nr-user", "go")
    await idle_after(harness, "nr-user", 1)
    # A READ step has three attempts; the class of the error ends it after the first.
    assert [e["attempt"] for e in harness.log.entries("tool", "lookup")] == [1]
    seen = harness.seen("nr-user", 2)[-1]
    assert seen.startswith("Tool call failed:")
    assert "UserError: the lookup is misconfigured" in seen


async def test_a_read_tool_raising_a_plain_error_runs_again(harness: Harness) -> None:
    harness.script(
        "nr-plain",
        [[{"tool_calls": [call("c1", "lookup")]}, {"text": "done"}]],
        {"lookup": {"effect": "read", "fail_attempts": 1, "output": "value"}},
    )
    await harness.sessions.start_session("nr-plain", "go")
    await idle_after(harness, "nr-plain", 1)
    assert [e["attempt"] for e in harness.log.entries("tool", "lookup")] == [1, 2]
    assert harness.seen("nr-plain", 2)[-1] == "value"
