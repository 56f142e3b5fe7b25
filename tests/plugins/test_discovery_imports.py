"""Discovering the installed plugins, and ``sessionflow frameworks``, import no framework SDK.

Every process that loads plugins (each CLI command, each worker) imports every plugin
module and its package; an SDK imported there costs seconds (the Agents SDK alone made
``sessionflow frameworks`` take 4 s). Each probe runs in a fresh interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sessionflow.plugins import DISABLE_AUTOLOAD_ENV, DISABLED_PLUGINS_ENV, LOAD_PLUGINS_ENV

SDK_MODULES = (
    "agents",
    "openai",
    "pydantic_ai",
    "langgraph",
    "langchain_core",
    "claude_agent_sdk",
    "anthropic",
)

_REPORT = f"""
import sys
loaded = [name for name in {SDK_MODULES!r} if name in sys.modules]
print("SDKS", ",".join(loaded))
"""

_DISCOVERY = (
    """
from sessionflow.plugins import SessionflowPlugins
plugins = SessionflowPlugins()
plugins.load()
print("FRAMEWORKS", ",".join(sorted(plugins.frameworks())))
"""
    + _REPORT
)

_CLI = (
    """
# The command's own `main`: the console entry point leaves through os._exit.
from sessionflow_cli._main import main
print("EXIT", main(["frameworks"]))
"""
    + _REPORT
)

ADAPTER_FRAMEWORKS = {"builtin", "claude-agent-sdk", "langgraph", "openai-agents", "pydantic-ai"}


def _probe(code: str, cwd: Path) -> tuple[dict[str, str], str]:
    """Run ``code`` in a fresh interpreter with default discovery; its report lines and stdout."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in (LOAD_PLUGINS_ENV, DISABLED_PLUGINS_ENV, DISABLE_AUTOLOAD_ENV)
    }
    completed = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
        env=env,
    )
    assert completed.returncode == 0, completed.stderr
    report: dict[str, str] = {}
    for line in completed.stdout.splitlines():
        key, _, value = line.partition(" ")
        if key in ("SDKS", "FRAMEWORKS", "EXIT"):
            report[key] = value
    return report, completed.stdout


def test_plugin_discovery_imports_no_framework_sdk(tmp_path: Path) -> None:
    report, _ = _probe(_DISCOVERY, tmp_path)
    # The probe proves something only if every adapter's plugin was loaded.
    assert ADAPTER_FRAMEWORKS <= set(report["FRAMEWORKS"].split(","))
    assert report["SDKS"] == "", f"discovery imported {report['SDKS']}"


def test_sessionflow_frameworks_imports_no_framework_sdk(tmp_path: Path) -> None:
    report, stdout = _probe(_CLI, tmp_path)
    assert report["EXIT"] == "0", stdout
    assert all(name in stdout for name in ADAPTER_FRAMEWORKS), stdout
    assert report["SDKS"] == "", f"sessionflow frameworks imported {report['SDKS']}"
