"""A worker SIGKILLed in the middle of `edit_file` or `write_file`: the verify step settles the outcome.

The worker child freezes the write at an exact stage (`local_tools_worker`): before the
rename (nothing was written) or after it (the file holds the new content). The test
SIGKILLs it there; a replacement worker runs the verify, which compares the file's hash
with the hashes recorded when the call was deferred.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sessionflow import AgentEventType, AgentSnapshot, AgentStatus
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import AgentTestStack, wait_for_agent_snapshot, wait_until
from tests.local_tools._session import FLOW_TYPE_ENV, MODEL_URL_ENV, WORKSPACE_ENV, local_tools_flow
from tests.local_tools.local_tools_worker import FREEZE_AT_ENV, FREEZE_MARKER_ENV

REPO_ROOT = Path(__file__).resolve().parents[2]
EDIT = {"path": "code.py", "old_string": "x = 1", "new_string": "x = 10"}


@pytest.fixture
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


async def _play(
    temporal_address: str,
    model_server: ScriptedModelServer,
    tmp_path: Path,
    *,
    call: ScriptedToolCall,
    freeze_at: str,
    kills: int,
) -> tuple[list[dict[str, Any]], str, list[tuple[str, int, str]]]:
    """Run one write, SIGKILL the worker `kills` times where it freezes, and let a clean worker verify.

    Returns the tool_call_verified events' data followed by the final status, what the
    model saw as the call's result, and the steps (type, final attempt, outcome).
    """
    workspace = tmp_path / "ws"
    key = f"lt-verify-{uuid.uuid4().hex[:8]}"
    model_server.script(key, [ModelReply.call(call), ModelReply.say("checked")])
    flow = local_tools_flow(f"flow-{key}", workspace, model_server.base_url(key))
    marker = tmp_path / "frozen"
    env = {
        FLOW_TYPE_ENV: flow.flow_type,
        WORKSPACE_ENV: str(workspace),
        MODEL_URL_ENV: model_server.base_url(key),
        FREEZE_AT_ENV: freeze_at,
        FREEZE_MARKER_ENV: str(marker),
    }
    stack = AgentTestStack(
        tmp_path / "state",
        [flow],
        "tests.local_tools.local_tools_worker",
        worker_cwd=REPO_ROOT,
        worker_env=env,
        server_address=temporal_address,
    )
    async with stack:
        await stack.start_worker()
        sessions = stack.sessions()
        await sessions.start_session(key, "change it")
        interrupt = await wait_for_agent_snapshot(
            sessions, key, lambda s: next(iter(s.pending_interrupts), None), description="the approval"
        )
        assert await sessions.resolve_interrupt(key, interrupt.interrupt_id, approved=True)
        for kill in range(1, kills + 1):
            await wait_until(f"the write to freeze ({kill})", marker.exists, timeout=60)
            marker.unlink()
            if kill == kills:
                del stack.worker_env[FREEZE_AT_ENV]  # the verify runs on a worker that does not freeze
            stack.workers[-1].kill()
            await stack.start_worker()

        def ended(s: AgentSnapshot) -> AgentSnapshot | None:
            state = s.state
            done = state and state.turn_count >= 1 and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
            return s if done else None

        snapshot = await wait_for_agent_snapshot(
            sessions, key, ended, description="the turn to end", timeout=90
        )
        assert snapshot.messages[-1].message.text == "checked"
        events = (await sessions.list_agent_events(key)).events
        finished = [e.data for e in events if e.type is AgentEventType.TOOL_CALL_FINISHED]
        verified = [e.data for e in events if e.type is AgentEventType.TOOL_CALL_VERIFIED]
        steps = await stack.read_step_history(key)
        return (
            [*verified, *({"finished": f["status"]} for f in finished)],
            model_server.requests(key)[1].tool_results()["c1"],
            [(s.step_type.removeprefix("sessionflow."), s.final_attempt, s.outcome) for s in steps],
        )


async def test_an_edit_killed_after_its_rename_is_verified_succeeded(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "code.py").write_text("x = 1\n")
    events, seen, steps = await _play(
        temporal_address,
        model_server,
        tmp_path,
        call=ScriptedToolCall("c1", "edit_file", EDIT),
        freeze_at="after_rename",
        kills=1,
    )
    assert (tmp_path / "ws" / "code.py").read_text() == "x = 10\n"
    assert events[0]["result"] == "succeeded" and events[-1] == {"finished": "succeeded"}
    assert seen == "Edited code.py (verified: the file holds the edited content)."
    assert steps == [
        ("RunModel", 1, "completed"),
        ("CallSingleAttemptTool", 1, "timed_out"),
        ("VerifyTool", 1, "completed"),
        ("RunModel", 1, "completed"),
    ]


async def test_an_edit_killed_before_its_rename_is_verified_failed(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "code.py").write_text("x = 1\n")
    events, seen, steps = await _play(
        temporal_address,
        model_server,
        tmp_path,
        call=ScriptedToolCall("c1", "edit_file", EDIT),
        freeze_at="before_rename",
        kills=1,
    )
    assert (tmp_path / "ws" / "code.py").read_text() == "x = 1\n"
    assert events[0]["result"] == "failed" and events[-1] == {"finished": "failed"}
    assert seen.startswith("Tool call failed: the edit was not applied: code.py is unchanged")
    assert [s[0] for s in steps] == ["RunModel", "CallSingleAttemptTool", "VerifyTool", "RunModel"]


async def test_a_write_killed_after_its_rename_on_every_attempt_is_verified_succeeded(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    (tmp_path / "ws").mkdir()
    events, seen, steps = await _play(
        temporal_address,
        model_server,
        tmp_path,
        call=ScriptedToolCall("c1", "write_file", {"path": "notes/new.md", "content": "# notes\n"}),
        freeze_at="after_rename",
        kills=3,  # an idempotent write has three attempts
    )
    assert (tmp_path / "ws" / "notes" / "new.md").read_text() == "# notes\n"
    assert events[0]["result"] == "succeeded"
    assert seen == "Wrote 8 bytes to notes/new.md (verified: the file holds exactly this content)."
    assert steps == [
        ("RunModel", 1, "completed"),
        ("CallTool", 3, "timed_out"),
        ("VerifyTool", 1, "completed"),
        ("RunModel", 1, "completed"),
    ]
