"""Reads run as local steps (`ToolPolicy.local_timeout`): durable, retried, recorded as markers."""

from __future__ import annotations

import math

import pytest

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.session.tools import MAX_LOCAL_TIMEOUT
from sessionflow.testing import FileGate
from tests.harness import HarnessFactory
from tests.harness_helpers import idle_after, kill_at_gate

LOCAL_READ = {"lookup": ToolPolicy(effect=ToolEffect.READ, local_timeout=5)}


def call(tool_call_id: str, name: str, **arguments: object) -> dict[str, object]:
    return {"id": tool_call_id, "name": name, "arguments": arguments}


async def test_local_reads_run_as_markers_and_are_retried(harness_factory: HarnessFactory) -> None:
    harness = await harness_factory(tool_policies=LOCAL_READ)
    harness.script(
        "local",
        [[{"tool_calls": [call("a", "lookup", k=1), call("b", "lookup", k=2)]}, {"text": "done"}]],
        {"lookup": {"effect": "read", "output": "v", "fail_attempts": 1, "sleep": 0.8}},
    )
    await harness.sessions.start_session("local", "go")
    snapshot = await idle_after(harness, "local", 1)
    assert snapshot.messages[-1].message.text == "done"
    # Each call failed once and ran again: four real runs, the second model call saw both.
    assert sorted(e["attempt"] for e in harness.log.entries("tool", "lookup")) == [1, 1, 2, 2]
    assert harness.seen("local", 2)[-2:] == ["v", "v"]
    steps = await harness.stack.read_step_history("local")
    assert [(s.step_type, s.final_attempt, s.outcome, s.local) for s in steps] == [
        ("sessionflow.RunModel", 1, "completed", False),
        ("sessionflow.CallTool", 2, "completed", True),
        ("sessionflow.CallTool", 2, "completed", True),
        ("sessionflow.RunModel", 1, "completed", False),
    ]
    assert sorted(s.step_execution_id for s in steps if s.local) == ["turn-1/tool/a", "turn-1/tool/b"]


async def test_writes_and_reads_without_the_option_stay_regular_steps(
    harness_factory: HarnessFactory,
) -> None:
    harness = await harness_factory(tool_policies=LOCAL_READ)
    harness.script(
        "mixed",
        [[{"tool_calls": [call("a", "lookup"), call("b", "find")]}, {"text": "done"}]],
        {"lookup": {"effect": "read", "output": "l"}, "find": {"effect": "read", "output": "f"}},
    )
    await harness.sessions.start_session("mixed", "go")
    await idle_after(harness, "mixed", 1)
    steps = await harness.stack.read_step_history("mixed")
    assert {s.step_execution_id: s.local for s in steps if s.step_type == "sessionflow.CallTool"} == {
        "turn-1/tool/a": True,
        "turn-1/tool/b": False,
    }


async def test_sigkill_during_a_local_read_runs_only_it_again(harness_factory: HarnessFactory) -> None:
    harness = await harness_factory(tool_policies=LOCAL_READ)
    harness.script(
        "k-local",
        [[{"tool_calls": [call("a", "lookup")]}, {"text": "done"}]],
        {"lookup": {"effect": "read", "gate": "read", "output": "value"}},
    )
    await harness.sessions.start_session("k-local", "go")
    await kill_at_gate(harness, "read")
    FileGate(harness.state_dir, "read").release()
    # The dead worker held the workflow task: it times out (Temporal's 10 s default) and the
    # new worker replays the turn and runs the read again, at attempt 1 (no marker was written).
    snapshot = await idle_after(harness, "k-local", 1)
    assert snapshot.messages[-1].message.text == "done"
    assert [e["attempt"] for e in harness.log.entries("tool", "lookup")] == [1, 1]
    assert [(m["call"], m["attempt"]) for m in harness.log.entries("model", session="k-local")] == [
        (1, 1),
        (2, 1),
    ]
    steps = await harness.stack.read_step_history("k-local")
    assert [(s.step_type, s.local) for s in steps] == [
        ("sessionflow.RunModel", False),
        ("sessionflow.CallTool", True),
        ("sessionflow.RunModel", False),
    ]


@pytest.mark.parametrize(
    ("effect", "timeout", "message"),
    [
        (ToolEffect.IDEMPOTENT_WRITE, 5.0, "read tools only"),
        (ToolEffect.NON_IDEMPOTENT_WRITE, 5.0, "read tools only"),
        (ToolEffect.UNCLASSIFIED, 5.0, "read tools only"),
        (ToolEffect.READ, 0.0, "more than 0"),
        (ToolEffect.READ, -1.0, "more than 0"),
        (ToolEffect.READ, math.nan, "more than 0"),
        (ToolEffect.READ, math.inf, "more than 0"),
        (ToolEffect.READ, MAX_LOCAL_TIMEOUT + 1, "more than 0"),
    ],
)
def test_local_timeout_is_checked(effect: ToolEffect, timeout: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ToolPolicy(effect=effect, local_timeout=timeout)
