"""`--model demo` tours the workspace on every framework, with that framework's own tool names.

The tour: list the workspace, read a file, and a write that waits for approval. A
framework that replaces the CLI's file tools (Claude Code's Glob, Read and Write) tours
with its own (`FrameworkSpec.demo_tour`); the others with `list_directory`, `read_file`
and `write_file`. Each run is the real command as a process, with the real adapter.
"""

from __future__ import annotations

import pytest

from tests.cli.conftest import Cli

# framework -> (list tool, read tool, write tool); the adapters this workspace installs
# (builtin's tour, and the refusal of an unapproved write, are in test_oneshot.py).
TOURS = {
    "pydantic-ai": ("list_directory", "read_file", "write_file"),
    "openai-agents": ("list_directory", "read_file", "write_file"),
    "langgraph": ("list_directory", "read_file", "write_file"),
    "claude-agent-sdk": ("Glob", "Read", "Write"),
}


@pytest.mark.parametrize("framework", sorted(TOURS))
def test_the_demo_tours_the_workspace_with_the_frameworks_own_tools(cli: Cli, framework: str) -> None:
    listing, read, write = TOURS[framework]
    (cli.workspace / "README.md").write_text("Shopping list\nmilk\n")
    # The real adapter through its entry point (the fixture loads only the test plugin).
    env = {"SESSIONFLOW_SERVER_PORT": str(cli.server_port), "SESSIONFLOW_LOAD_PLUGINS": framework}

    result = cli.run(
        "-f", framework, "-p", "show me around", "--model", "demo", "--approve", write, extra_env=env
    )

    assert result.returncode == 0, result.stderr
    assert f"[tool] {listing} " in result.stderr
    assert f"[tool] {read} " in result.stderr and "README.md" in result.stderr
    # The write waits for approval even where the framework's own write tool would not ask.
    assert f"[approval] {write} " in result.stderr
    assert f"approved by --approve {write}" in result.stderr
    assert 'I read a file that starts with "Shopping list".' in result.stdout
    assert "You approved the write" in result.stdout
    assert "README.md starts with: Shopping list" in (cli.workspace / "sessionflow-demo.md").read_text()
