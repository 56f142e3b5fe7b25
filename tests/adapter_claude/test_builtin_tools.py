"""Claude Code's tools as the tool step runs them: in the working directory, and no further."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

import pytest

from sessionflow import ToolEffect
from sessionflow.kit import ToolExecutionError
from sessionflow_claude_agent_sdk import BUILTIN_TOOL_EFFECTS, run_builtin_tool
from sessionflow_local_tools import SandboxBackend, ShellSandbox, sandbox_status


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def beta():\n    return 'Beta'\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("beta = hidden\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    return root


def run(name: str, arguments: Mapping[str, object], cwd: Path) -> str:
    return asyncio.run(run_builtin_tool(name, dict(arguments), cwd))


def test_effects_follow_the_issue() -> None:
    assert dict(BUILTIN_TOOL_EFFECTS) == {
        "Read": ToolEffect.READ,
        "Grep": ToolEffect.READ,
        "Glob": ToolEffect.READ,
        "WebFetch": ToolEffect.READ,
        "Write": ToolEffect.IDEMPOTENT_WRITE,
        "Edit": ToolEffect.NON_IDEMPOTENT_WRITE,
        "Bash": ToolEffect.NON_IDEMPOTENT_WRITE,
    }


def test_read_numbers_lines_and_honours_offset_and_limit(workspace: Path) -> None:
    # As Claude Code numbers: no padding, and the empty line after the final newline.
    assert run("Read", {"file_path": str(workspace / "notes.txt")}, workspace) == (
        "1\talpha\n2\tbeta\n3\tgamma\n4\t"
    )
    assert run("Read", {"file_path": "notes.txt", "offset": 2, "limit": 1}, workspace).startswith("2\tbeta\n")
    with pytest.raises(ToolExecutionError, match="no such file"):
        run("Read", {"file_path": "missing.txt"}, workspace)


@pytest.mark.parametrize(
    "path",
    ["../secret.txt", "{outside}", "src/../../secret.txt", "link/secret.txt", "escape"],
)
def test_file_tools_refuse_paths_outside_the_working_directory(workspace: Path, path: str) -> None:
    outside = workspace.parent
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    (workspace / "escape").symlink_to(outside / "secret.txt")
    raw = path.format(outside=outside / "secret.txt")
    for name, arguments in (
        ("Read", {"file_path": raw}),
        ("Write", {"file_path": raw, "content": "x"}),
        ("Edit", {"file_path": raw, "old_string": "outside", "new_string": "in"}),
        ("Grep", {"pattern": "outside", "path": raw}),
    ):
        with pytest.raises(
            ToolExecutionError, match=r"outside the workspace|climbs above the workspace|symbolic link"
        ):
            run(name, arguments, workspace)
    assert (outside / "secret.txt").read_text() == "outside\n"


def test_write_is_idempotent_and_atomic(workspace: Path) -> None:
    target = workspace / "out" / "new.md"
    first = run("Write", {"file_path": str(target), "content": "# Title\n"}, workspace)
    # Claude Code's own words, with the path as the model gave it.
    note = " (file state is current in your context \u2014 no need to Read it back)"
    assert first == f"File created successfully at: {target}{note}"
    again = run("Write", {"file_path": str(target), "content": "# Title\n"}, workspace)
    assert again == f"The file {target} has been updated successfully.{note}"
    assert target.read_text() == "# Title\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["new.md"]


def test_edit_replaces_exactly_one_match_unless_told(workspace: Path) -> None:
    path = str(workspace / "notes.txt")
    assert run("Edit", {"file_path": path, "old_string": "beta", "new_string": "BETA"}, workspace) == (
        f"The file {path} has been updated successfully."
    )
    assert (workspace / "notes.txt").read_text() == "alpha\nBETA\ngamma\n"
    with pytest.raises(ToolExecutionError, match="old_string was not found"):
        run("Edit", {"file_path": path, "old_string": "beta", "new_string": "x"}, workspace)
    (workspace / "twice.txt").write_text("a a\n")
    with pytest.raises(ToolExecutionError, match="occurs 2 times"):
        run("Edit", {"file_path": "twice.txt", "old_string": "a", "new_string": "b"}, workspace)
    run(
        "Edit",
        {"file_path": "twice.txt", "old_string": "a", "new_string": "b", "replace_all": True},
        workspace,
    )
    assert (workspace / "twice.txt").read_text() == "b b\n"


def test_glob_and_grep_skip_hidden_folders(workspace: Path) -> None:
    assert run("Glob", {"pattern": "**/*.py"}, workspace) == str(workspace / "src" / "app.py")
    assert run("Glob", {"pattern": "*.rs"}, workspace) == "No files found"
    found = run("Grep", {"pattern": "beta"}, workspace)
    assert found.splitlines()[:2] == [str(workspace / "notes.txt"), str(workspace / "src" / "app.py")]
    content = run(
        "Grep", {"pattern": "beta", "output_mode": "content", "-i": True, "glob": "**/*.py"}, workspace
    )
    app = workspace / "src" / "app.py"
    assert content.splitlines()[:2] == [f"{app}:1: def beta():", f"{app}:2:     return 'Beta'"]
    assert run("Grep", {"pattern": "beta", "output_mode": "count", "type": "py"}, workspace).startswith(
        f"{app}:1\n"
    )
    assert run("Grep", {"pattern": "x", "glob": "*.{txt,md}"}, workspace).startswith("no matches")


def test_bash_runs_in_the_working_directory_and_reports_failures(workspace: Path) -> None:
    assert run("Bash", {"command": "pwd && echo err >&2"}, workspace) == f"{workspace}\nerr"
    assert run("Bash", {"command": "[[ -n $BASH_VERSION ]] && echo bash"}, workspace) == "bash"
    with pytest.raises(ToolExecutionError) as failure:
        run("Bash", {"command": "echo partial; exit 3"}, workspace)
    # In Claude Code's words: the exit code, then the output.
    assert failure.value.message == "Exit code 3\npartial"
    with pytest.raises(ToolExecutionError, match="timed out"):
        run("Bash", {"command": "sleep 5", "timeout": 200}, workspace)
    with pytest.raises(ToolExecutionError, match="run_in_background"):
        run("Bash", {"command": "sleep 1", "run_in_background": True}, workspace)


@pytest.mark.parametrize("backend", ["bubblewrap", "landlock"])
def test_bash_in_a_sandbox_cannot_write_outside_the_working_directory(
    workspace: Path, backend: SandboxBackend
) -> None:
    status = sandbox_status(ShellSandbox(backend=backend))
    if status.backend != backend:
        pytest.skip(f"{backend} is not usable on this machine: {status.reason}")
    box = ShellSandbox(backend=backend)
    # On the host's file system (bubblewrap gives /tmp, where the workspace is, a tmpfs of its own).
    outside = Path("/var/tmp") / f"written-by-bash-{uuid.uuid4().hex[:8]}"
    with pytest.raises(ToolExecutionError) as failure:
        asyncio.run(
            run_builtin_tool("Bash", {"command": f"touch inside && touch {outside}"}, workspace, sandbox=box)
        )
    assert failure.value.message.startswith("Exit code 1\n")
    assert not outside.exists() and (workspace / "inside").exists()
    # Unconfined (no sandbox given, as before) the same command writes there.
    try:
        run("Bash", {"command": f"touch {outside}"}, workspace)
        assert outside.exists()
    finally:
        outside.unlink(missing_ok=True)
    # A sandbox that cannot be had is said, in the output the model sees.
    said = asyncio.run(
        run_builtin_tool("Bash", {"command": "true"}, workspace, sandbox=ShellSandbox(backend="none"))
    )
    assert (
        said
        == "[not sandboxed: the configuration switches the sandbox off (backend: none); the command ran with the worker's permissions]"
    )


def test_bash_leaves_no_background_process_behind(workspace: Path) -> None:
    run("Bash", {"command": "(sleep 30 > /dev/null 2>&1 & echo $! > pid.txt)"}, workspace)
    stat = Path(f"/proc/{int((workspace / 'pid.txt').read_text())}/stat")

    def ended() -> bool:
        # Gone, or a zombie waiting for its new parent to reap it.
        try:
            return stat.read_text().split(") ", 1)[1].startswith("Z")
        except FileNotFoundError:
            return True

    # Killed with its process group; a busy machine may take a moment to deliver SIGKILL,
    # but `sleep 30` never ends by itself within this wait.
    deadline = time.monotonic() + 10
    while not ended() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ended()


def test_web_fetch_refuses_other_schemes(workspace: Path) -> None:
    with pytest.raises(ToolExecutionError, match="http"):
        run("WebFetch", {"url": "file:///etc/passwd", "prompt": "read"}, workspace)


def test_unknown_tools_and_bad_arguments_are_errors_the_model_sees(workspace: Path) -> None:
    with pytest.raises(ToolExecutionError, match="cannot run Claude Code's tool 'NotebookEdit'"):
        run("NotebookEdit", {}, workspace)
    with pytest.raises(ToolExecutionError, match="'file_path' is required"):
        run("Read", {}, workspace)
    with pytest.raises(ToolExecutionError, match="must be an integer"):
        run("Read", {"file_path": "notes.txt", "limit": "ten"}, workspace)
