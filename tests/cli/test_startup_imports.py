"""What the command imports before it answers (issue 25): each command loads only what it runs.

A framework SDK or the MCP SDK costs ~1 s to import, temporalio's client and worker ~0.6 s,
and rich's console ~50 ms; a command that does not use them must not pay for them. Each
probe runs the command's own `main` in a fresh interpreter with a private HOME, then prints
the modules it imported. The assertions name modules, never times.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.cli.conftest import Cli

MARKER = "SESSIONFLOW-MODULES "

# Runs `sessionflow <args>` as the console entry point does, then lists `sys.modules` (but
# the names marked missing there, as the CLI marks `httpx._main`).
# It leaves through os._exit, as the entry point does (Temporal's threads may still run).
RUNNER = f"""
import json, os, sys
from sessionflow_cli._main import main
try:
    code = main(sys.argv[1:])
except SystemExit as stop:
    code = stop.code
sys.stderr.flush()
print()
print({MARKER!r} + json.dumps({{"code": code, "modules": sorted(n for n, m in sys.modules.items() if m is not None)}}), flush=True)
os._exit(0)
"""

FRAMEWORK_SDKS = (
    "agents",
    "openai",
    "pydantic_ai",
    "langgraph",
    "langchain",
    "langchain_core",
    "claude_agent_sdk",
    "anthropic",
)
ADAPTER_FRAMEWORKS = ("builtin", "claude-agent-sdk", "langgraph", "openai-agents", "pydantic-ai")
# What a framework's runner brings, which listing the frameworks does not need: the built-in
# runner (httpx and its transports), each adapter's runner, and the engine's JSON Schema checks.
RUNNERS = (
    "sessionflow.builtin._runner",
    "sessionflow_claude_agent_sdk._runner",
    "sessionflow_langgraph._runner",
    "sessionflow_openai_agents._runner",
    "sessionflow_pydantic_ai._runner",
)
HTTP_CLIENT = ("httpx", "httpcore", "anyio", "h11")
# httpx's own command line (`httpx._main`), which `import httpx` loads when it can.
HTTPX_CLI = ("httpx._main", "click", "pygments")


def _imported(cli: Cli, *args: str) -> tuple[int, set[str], str]:
    """Run the command with every installed plugin discoverable: exit code, modules, output."""
    env = cli.environment()
    env.pop("SESSIONFLOW_LOAD_PLUGINS", None)  # the adapters' own entry points, not the test plugin
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, *args],
        cwd=cli.workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARKER)]
    assert done.returncode == 0 and lines, f"the probe failed: {done.stdout[-2000:]} {done.stderr[-3000:]}"
    report = json.loads(lines[-1].removeprefix(MARKER))
    printed = "\n".join(line for line in done.stdout.splitlines() if not line.startswith(MARKER))
    return int(report["code"]), set(report["modules"]), printed + done.stderr


def _loaded(modules: set[str], *names: str) -> list[str]:
    """Which of `names` (packages, with their submodules) were imported."""
    return [name for name in names if any(m == name or m.startswith(f"{name}.") for m in modules)]


def test_help_imports_neither_rich_nor_temporal_nor_any_sdk(cli: Cli) -> None:
    code, modules, output = _imported(cli, "--help")

    assert code == 0, output
    assert "usage: sessionflow" in output
    assert _loaded(modules, "temporalio", "rich.console", "mcp", *FRAMEWORK_SDKS) == []
    # Nothing of the engine either: `--help` is argparse alone.
    assert _loaded(modules, "sessionflow.temporal", "sessionflow_cli.commands._chat") == []


def test_frameworks_lists_every_plugin_without_temporal_or_any_sdk(cli: Cli) -> None:
    code, modules, output = _imported(cli, "frameworks")

    assert code == 0, output
    # The probe proves something only if every adapter's plugin was loaded.
    assert all(name in output for name in ADAPTER_FRAMEWORKS), output
    assert _loaded(modules, "temporalio", "mcp", *FRAMEWORK_SDKS) == []
    assert _loaded(modules, "sessionflow.temporal", "sessionflow_cli.commands._chat") == []
    # Plugins load with their names and capabilities only: no runner, no HTTP client, no
    # configuration (its JSON Schema).
    assert _loaded(modules, *RUNNERS, *HTTP_CLIENT, "jsonschema", "sessionflow_cli.config") == []


def test_sessions_runs_the_engine_without_mcp_or_any_sdk(cli: Cli) -> None:
    cli.write_config(framework="builtin")  # the test run's server, no connectors

    code, modules, output = _imported(cli, "sessions")

    assert code == 0, output
    assert "No sessions of flow type " in output, output
    # It did connect and serve the flow (so the probe saw a whole command run) ...
    assert _loaded(modules, "temporalio.client", "temporalio.worker") == [
        "temporalio.client",
        "temporalio.worker",
    ]
    # ... with no MCP SDK (no connector is configured), no framework SDK, no terminal chat.
    assert _loaded(modules, "mcp", "sessionflow.mcp", "prompt_toolkit", *FRAMEWORK_SDKS) == []
    # httpx (the built-in runner's client) loads without its own command line.
    assert _loaded(modules, *HTTPX_CLI) == []
    # The HTTP API (`sessionflow serve`) is imported by that command alone.
    assert _loaded(modules, "sessionflow_server", "starlette", "uvicorn", "sse_starlette") == []
