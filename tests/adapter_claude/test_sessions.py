"""Sessions on a real dev server, driving the real bundled Claude Code CLI against the
scripted model server, in worker child processes a test can SIGKILL."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from sessionflow import AgentInterrupt, AgentSnapshot, AgentStatus
from sessionflow.demo import ModelReply, RecordedRequest, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import AgentTestStack, FileGate, InvocationLog, wait_for_agent_snapshot
from sessionflow_claude_agent_sdk import CONFIG_ROOT_ENV
from sessionflow_local_tools import SandboxBackend, ShellSandbox, sandbox_status
from tests.adapter_claude.flows import Scenario, load_flow, save_flow_spec

WORKER = "tests.adapter_claude.worker"


def pending(snapshot: AgentSnapshot) -> AgentInterrupt | None:
    return snapshot.pending_interrupts[0] if snapshot.pending_interrupts else None


def idle_after(turns: int) -> Callable[[AgentSnapshot], AgentSnapshot | None]:
    def check(snapshot: AgentSnapshot) -> AgentSnapshot | None:
        state = snapshot.state
        done = state is not None and state.turn_count >= turns
        return (
            snapshot
            if done and state is not None and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
            else None
        )

    return check


def tool_results_of(request: RecordedRequest) -> dict[str, tuple[str, bool]]:
    """Every tool result the request sends, with its error flag."""
    found: dict[str, tuple[str, bool]] = {}
    for message in cast(list[dict[str, Any]], request.body.get("messages") or []):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in cast(list[dict[str, Any]], content):
            if block.get("type") == "tool_result":
                text = request.tool_results()[str(block["tool_use_id"])]
                found[str(block["tool_use_id"])] = (text, block.get("is_error") is True)
    return found


def tool_use_ids(request: RecordedRequest) -> list[str]:
    ids: list[str] = []
    for message in cast(list[dict[str, Any]], request.body.get("messages") or []):
        content = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, list):
            ids += [str(b["id"]) for b in cast(list[dict[str, Any]], content) if b.get("type") == "tool_use"]
    return ids


def make_stack(
    tmp_path: Path,
    model_server: ScriptedModelServer,
    temporal_address: str,
    key: str,
    scenario: Scenario,
    sandbox_backend: SandboxBackend = "auto",
) -> tuple[AgentTestStack, Path]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    state_dir = tmp_path / "state"
    save_flow_spec(
        state_dir,
        flow_type=f"claude-{key}",
        base_url=model_server.base_url(key, api="anthropic"),
        workspace=workspace,
        scenario=scenario,
        sandbox_backend=sandbox_backend,
    )
    home = tmp_path / "home"
    home.mkdir()
    stack = AgentTestStack(
        state_dir,
        [load_flow(state_dir)],
        worker_module=WORKER,
        server_address=temporal_address,
        worker_env={CONFIG_ROOT_ENV: str(tmp_path / "config-1"), "HOME": str(home)},
    )
    return stack, workspace


def assert_nothing_written_outside(tmp_path: Path) -> None:
    """The CLI runs left nothing behind: no config folders, nothing in HOME."""
    for root in tmp_path.glob("config-*"):
        assert list(root.iterdir()) == [], f"{root} still holds {list(root.iterdir())}"
    assert list((tmp_path / "home").iterdir()) == []


async def test_a_turn_resumes_in_another_process_with_its_own_config_folder(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = "claude-two-processes"
    model_server.script(
        key,
        [
            ModelReply.call(
                ScriptedToolCall("c1", "mcp__weather__delete_file", {"path": "/tmp/old.log"}),
                text="Cleaning up.",
            ),
            ModelReply.call(ScriptedToolCall("c2", "mcp__weather__lookup", {"city": "Oslo"})),
            ModelReply.say("Deleted, and it is sunny in Oslo."),
        ],
    )
    stack, workspace = make_stack(tmp_path, model_server, temporal_address, key, "custom")
    log = InvocationLog(stack.state_dir / "invocations.jsonl")
    async with stack:
        first = await stack.start_worker()
        sessions = stack.sessions()
        await sessions.start_session(key, "Delete /tmp/old.log, then tell me the weather in Oslo")
        interrupt = await wait_for_agent_snapshot(
            sessions, key, pending, description="the delete to need approval"
        )
        assert interrupt.tool_call_id == "c1"
        first.kill()

        stack.worker_env[CONFIG_ROOT_ENV] = str(tmp_path / "config-2")
        second = await stack.start_worker()
        assert await sessions.resolve_interrupt(key, interrupt.interrupt_id, approved=True)
        snapshot = await wait_for_agent_snapshot(
            sessions, key, idle_after(1), description="the turn to end", timeout=90
        )

    requests = model_server.requests(key)
    assert len(requests) == 3
    assert requests[0].last_user_text() == "Delete /tmp/old.log, then tell me the weather in Oslo"
    # SDK MCP tools keep their SDK names in what the model sees.
    assert requests[0].tool_names() == ["mcp__weather__delete_file", "mcp__weather__lookup"]
    assert tool_results_of(requests[1]) == {"c1": ("deleted /tmp/old.log", False)}
    assert tool_results_of(requests[2]) == {
        "c1": ("deleted /tmp/old.log", False),
        "c2": ("sunny in Oslo", False),
    }
    assert [m.message.text for m in snapshot.messages] == [
        "Delete /tmp/old.log, then tell me the weather in Oslo",
        "Cleaning up.",
        "deleted /tmp/old.log",
        None,
        "sunny in Oslo",
        "Deleted, and it is sunny in Oslo.",
    ]
    # The first model step ran in the first process under its config root; everything
    # after the approval (tool steps and both resumed model steps) in the second one.
    built = [(e["pid"], e["config_root"]) for e in log.entries("options")]
    assert built[0] == (first.pid, str(tmp_path / "config-1"))
    assert set(built[1:]) == {(second.pid, str(tmp_path / "config-2"))}
    deletes = log.entries("tool", "delete_file")
    assert [(d["pid"], d["key"]) for d in deletes] == [(second.pid, f"{key}/turn-1/c1")]
    assert [e["pid"] for e in log.entries("tool", "lookup")] == [second.pid]
    assert list(workspace.iterdir()) == []
    assert_nothing_written_outside(tmp_path)


async def test_parallel_calls_run_as_steps_of_one_response(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = "claude-parallel"
    stack, workspace = make_stack(tmp_path, model_server, temporal_address, key, "builtin")
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    (workspace / "code.py").write_text("def beta():\n    return 2\n")
    model_server.script(
        key,
        [
            ModelReply.call(
                ScriptedToolCall("c1", "Read", {"file_path": str(workspace / "notes.txt")}),
                ScriptedToolCall("c2", "Grep", {"pattern": "def beta"}),
            ),
            ModelReply.say("Both done."),
        ],
    )
    async with stack:
        await stack.start_worker()
        sessions = stack.sessions()
        await sessions.start_session(key, "Read the notes and find beta")
        snapshot = await wait_for_agent_snapshot(
            sessions, key, idle_after(1), description="the turn to end", timeout=90
        )
        steps = await stack.read_step_history(key)

    requests = model_server.requests(key)
    assert len(requests) == 2
    second = tool_results_of(requests[1])
    assert set(second) == {"c1", "c2"}
    assert "1\talpha\n" in second["c1"][0] and "2\tbeta" in second["c1"][0]
    assert not second["c1"][1] and not second["c2"][1]
    assert "code.py" in second["c2"][0]
    # Both results in one user message, in the order the model asked, and nothing after them:
    # the model sees what the plain SDK shows it.
    last = cast(list[dict[str, Any]], requests[1].body["messages"])[-1]
    assert last["role"] == "user"
    assert [b.get("tool_use_id") for b in last["content"]] == ["c1", "c2"]
    assert tool_use_ids(requests[1]) == ["c1", "c2"]
    kinds = [(s.step_type.removeprefix("sessionflow."), s.final_attempt) for s in steps]
    assert kinds == [("RunModel", 1), ("CallTool", 1), ("CallTool", 1), ("RunModel", 1)]
    stored = [m.message for m in snapshot.messages]
    assert stored[-1].text == "Both done."
    results = [
        r for m in stored if m.role.value == "tool" for r in cast(dict[str, Any], m.framework_item)["results"]
    ]
    assert [r["tool_use_id"] for r in results] == ["c1", "c2"]
    assert_nothing_written_outside(tmp_path)


async def test_bash_waits_for_approval_and_a_rejection_reaches_the_model(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = "claude-bash"
    model_server.script(
        key,
        [
            ModelReply.call(
                ScriptedToolCall("c1", "Bash", {"command": "echo hello >> note.txt && cat note.txt"})
            ),
            ModelReply.say("Wrote the note."),
            ModelReply.call(ScriptedToolCall("c2", "Bash", {"command": "rm note.txt"})),
            ModelReply.say("I left it."),
        ],
    )
    stack, workspace = make_stack(tmp_path, model_server, temporal_address, key, "builtin")
    async with stack:
        await stack.start_worker()
        sessions = stack.sessions()
        await sessions.start_session(key, "Write a note")
        interrupt = await wait_for_agent_snapshot(sessions, key, pending, description="Bash to need approval")
        assert (interrupt.tool_call_id, interrupt.tool_name) == ("c1", "Bash")
        assert not (workspace / "note.txt").exists()
        assert await sessions.resolve_interrupt(key, interrupt.interrupt_id, approved=True)
        await wait_for_agent_snapshot(sessions, key, idle_after(1), description="turn 1 to end", timeout=60)
        assert (workspace / "note.txt").read_text() == "hello\n"

        assert await sessions.send_user_message(key, "Now delete it")
        interrupt = await wait_for_agent_snapshot(
            sessions, key, pending, description="the rm to need approval"
        )
        assert await sessions.resolve_interrupt(
            key, interrupt.interrupt_id, approved=False, rejection_message="keep it"
        )
        snapshot = await wait_for_agent_snapshot(
            sessions, key, idle_after(2), description="turn 2 to end", timeout=60
        )

    requests = model_server.requests(key)
    assert len(requests) == 4
    # The approved command ran once, in the tool step; its output reached the model as a
    # plain result (the replay only printed the recorded output).
    assert tool_results_of(requests[1]) == {"c1": ("hello", False)}
    assert (workspace / "note.txt").read_text() == "hello\n"
    assert requests[2].last_user_text() == "Now delete it"
    assert tool_results_of(requests[3])["c2"] == ("Tool call rejected by the user: keep it", True)
    assert snapshot.messages[-1].message.text == "I left it."
    assert sorted(p.name for p in workspace.iterdir()) == ["note.txt"]
    assert_nothing_written_outside(tmp_path)


@pytest.mark.parametrize("backend", ["bubblewrap", "landlock"])
async def test_bash_in_the_session_sandbox_cannot_write_outside_the_workspace(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path, backend: SandboxBackend
) -> None:
    # The real Claude Code CLI proposes the command; the tool step runs it in the sandbox.
    status = sandbox_status(ShellSandbox(backend=backend))
    if status.backend != backend:
        pytest.skip(f"{backend} is not usable on this machine: {status.reason}")
    key = f"claude-sandboxed-{backend}"
    # On the host's root file system, read-only in both sandboxes (/tmp is private or hidden).
    outside = Path("/var/tmp") / f"claude-bash-{uuid.uuid4().hex[:8]}"
    command = f"touch inside && touch {outside}"
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("c1", "Bash", {"command": command})),
            ModelReply.say("It was refused."),
        ],
    )
    stack, workspace = make_stack(tmp_path, model_server, temporal_address, key, "sandboxed_bash", backend)
    try:
        async with stack:
            await stack.start_worker()
            sessions = stack.sessions()
            await sessions.start_session(key, "Write outside the workspace")
            interrupt = await wait_for_agent_snapshot(
                sessions, key, pending, description="Bash to need approval"
            )
            assert (interrupt.tool_call_id, interrupt.tool_name) == ("c1", "Bash")
            assert await sessions.resolve_interrupt(key, interrupt.interrupt_id, approved=True)
            snapshot = await wait_for_agent_snapshot(
                sessions, key, idle_after(1), description="the turn to end", timeout=60
            )
        requests = model_server.requests(key)
        assert len(requests) == 2
        text, is_error = tool_results_of(requests[1])["c1"]
        refused = "Read-only file system" if backend == "bubblewrap" else "Permission denied"
        assert is_error and text.startswith("Exit code 1\n") and refused in text, text
        assert (workspace / "inside").exists()  # it ran, in the workspace
        assert not outside.exists()
        assert snapshot.messages[-1].message.text == "It was refused."
    finally:
        outside.unlink(missing_ok=True)


async def test_a_write_killed_mid_step_is_retried_with_the_same_content(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = "claude-write"
    stack, workspace = make_stack(tmp_path, model_server, temporal_address, key, "gated_write")
    target = workspace / "docs" / "summary.md"
    model_server.script(
        key,
        [
            ModelReply.call(
                ScriptedToolCall("c1", "Write", {"file_path": str(target), "content": "# Summary\n"})
            ),
            ModelReply.say("Saved the summary."),
        ],
    )
    log = InvocationLog(stack.state_dir / "invocations.jsonl")
    async with stack:
        first = await stack.start_worker()
        sessions = stack.sessions()
        await sessions.start_session(key, "Save a summary")
        # Write asks on every call (the hardened tools' floor), even this idempotent one.
        interrupt = await wait_for_agent_snapshot(
            sessions, key, pending, description="Write to need approval"
        )
        assert (interrupt.tool_call_id, interrupt.tool_name) == ("c1", "Write")
        assert await sessions.resolve_interrupt(key, interrupt.interrupt_id, approved=True)
        await FileGate(stack.state_dir, "write").wait_until_reached(timeout=60)
        assert target.read_text() == "# Summary\n"
        first.kill()
        second = await stack.start_worker()
        snapshot = await wait_for_agent_snapshot(
            sessions, key, idle_after(1), description="the turn to end", timeout=90
        )
        steps = await stack.read_step_history(key)

    runs = log.entries("tool", "Write")
    assert [(r["attempt"], r["pid"]) for r in runs] == [(1, first.pid), (2, second.pid)]
    assert {r["key"] for r in runs} == {f"{key}/turn-1/c1"}
    assert target.read_text() == "# Summary\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["summary.md"]
    result, is_error = tool_results_of(model_server.requests(key)[1])["c1"]
    # Claude Code's words for a Write; the retried attempt found the file the first one wrote.
    assert result == (
        f"The file {target} has been updated successfully."
        " (file state is current in your context \u2014 no need to Read it back)"
    )
    assert not is_error
    assert [(s.step_type.removeprefix("sessionflow."), s.final_attempt) for s in steps] == [
        ("RunModel", 1),
        ("CallTool", 2),
        ("RunModel", 1),
    ]
    assert snapshot.messages[-1].message.text == "Saved the summary."
    assert_nothing_written_outside(tmp_path)
    tool_message = snapshot.messages[-2].message
    assert json.loads(json.dumps(tool_message.framework_item))["results"][0]["tool_use_id"] == "c1"
