"""The adapter to the local tools (files, shell, web fetch, browser) of `sessionflow_local_tools`.

This module is the one place that builds them, so a missing package fails with one clear
error, and only when a local tool group is on. Their tools resolve each call's session
settings into `LocalToolSettings`; this adapter derives those from the command's
`TurnConfig` (the configuration file's ``local_tools`` section, narrowed by the turn).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessionflow.kit import FrameworkSpec, ToolSpec
from sessionflow_cli._errors import RuntimeFailure
from sessionflow_cli.config import CliConfig, LocalToolsConfig, SandboxConfig, TurnConfig

if TYPE_CHECKING:
    from sessionflow_local_tools import ShellSandbox

__all__ = [
    "LOCAL_TOOLS_MODULE",
    "ResolveSettings",
    "build_local_tools",
    "close_local_tools",
    "shell_sandbox",
    "shell_sandbox_note",
    "shell_sandbox_of",
    "shell_tool_names",
]

LOCAL_TOOLS_MODULE = "sessionflow_local_tools"

ResolveSettings = Callable[[Mapping[str, Any]], TurnConfig]
"""Turns a call's session settings into its turn's configuration; raises `ConfigError`."""


def build_local_tools(
    workspace: Path,
    resolve_settings: ResolveSettings,
    offered: LocalToolsConfig,
    replaced: frozenset[str] = frozenset(),
) -> list[ToolSpec]:
    """The local tools of the groups `offered` switches on, except the `replaced` groups
    (the framework's own tools do their work). Each tool checks its group's switch and the
    shell settings of its own turn, through `resolve_settings`, when it runs.

    Raises:
        RuntimeFailure: The local tools package is not installed, or the browser group is
            on and the `browser` extra (Playwright) is not.
    """
    if offered.is_enabled("browser") and "browser" not in replaced:
        _require_browser_extra()
    try:
        import sessionflow_local_tools as local_tools
    except ModuleNotFoundError as error:
        if error.name is not None and LOCAL_TOOLS_MODULE.startswith(error.name):
            raise RuntimeFailure(
                f"the local tools ({LOCAL_TOOLS_MODULE}) are not installed in this environment; "
                "switch them off in the configuration file (local_tools: files, shell, web_fetch "
                "and browser false) or install sessionflow-local-tools"
            ) from None
        raise

    def settings_of(session_settings: Mapping[str, Any]) -> local_tools.LocalToolSettings:
        turn = resolve_settings(session_settings)
        switches = turn.local_tools
        return local_tools.LocalToolSettings(
            groups=frozenset(g for g in local_tools.LocalToolGroup if switches.is_enabled(g.value)),
            shell_timeout=switches.shell.timeout,
            shell_sandbox=shell_sandbox(switches.shell.sandbox),
        )

    groups = local_tools.LOCAL_TOOL_GROUPS
    return [
        spec
        for spec in local_tools.build_local_tools(
            workspace, settings_of, shell_sandbox(offered.shell.sandbox)
        )
        if spec.name not in groups
        or (offered.is_enabled(groups[spec.name].value) and groups[spec.name].value not in replaced)
    ]


def shell_sandbox(config: SandboxConfig) -> ShellSandbox:
    """The local tools' `ShellSandbox` of the configuration's ``local_tools.shell.sandbox``.

    sessionflow's own folders (``$SESSIONFLOW_HOME``, or the XDG ones) are hidden like
    ``~/.sessionflow``: they hold whole conversations and token stores. A folder that holds
    the current folder is left alone, since hiding it would hide the workspace too.
    """
    from sessionflow.home import home_layout
    from sessionflow_local_tools import ShellSandbox

    here = Path.cwd()
    hidden_anyway = {*config.hidden, Path.home() / ".sessionflow"}  # HIDDEN_IN_HOME has that one
    own = tuple(
        folder
        for folder in home_layout().folders
        if folder not in hidden_anyway and not here.is_relative_to(folder)
    )
    return ShellSandbox(
        network=config.network,
        writable=config.writable,
        read_only=config.read_only,
        hidden=(*config.hidden, *own),
        hide_home=config.hide_home,
        bwrap=config.bwrap,
        backend=config.backend,
    )


SHELL_TOOL_NAME = "run_shell_command"


def shell_tool_names(spec: FrameworkSpec) -> frozenset[str]:
    """`run_shell_command` and the framework's own twins of it (Claude Code's ``Bash``):
    the tools that run in the shell sandbox, whose approval prompt says which."""
    twins = (name for name, twin in spec.local_tool_twins.items() if twin == SHELL_TOOL_NAME)
    return frozenset({SHELL_TOOL_NAME, *twins})


def shell_sandbox_of(config: CliConfig) -> ShellSandbox | None:
    """The sandbox of a framework's own shell tool (Claude Code's ``Bash``): the file's
    ``local_tools.shell.sandbox``; None when the local tools are not installed."""
    if importlib.util.find_spec(LOCAL_TOOLS_MODULE) is None:
        return None
    return shell_sandbox(config.local_tools.shell.sandbox)


def shell_sandbox_note(config: SandboxConfig) -> str | None:
    """The line under a shell command's approval prompt: which sandbox (``sandboxed
    (bubblewrap)``, ``sandboxed (landlock)``) and what it leaves unconfined, or not
    sandboxed and why; None when the local tools are not installed."""
    if importlib.util.find_spec(LOCAL_TOOLS_MODULE) is None:
        return None
    from sessionflow_local_tools import sandbox_status

    found = sandbox_status(shell_sandbox(config))
    if not found.available:
        return f"(runs NOT sandboxed: {found.reason})"
    widened = [
        what
        for what, on in (
            ("network on", config.network),
            ("extra writable paths", bool(config.writable)),
            ("home shown", not config.hide_home),
        )
        if on
    ]
    if found.backend == "bubblewrap":
        narrow = ", home hidden, no network)"
    elif found.network_confined:
        narrow = ", home and /tmp hidden, no TCP)"
    else:  # Landlock before ABI 4: what is not confined follows
        narrow = ", home and /tmp hidden)"
    note = f"(runs {found.label}: workspace writable, the rest read-only" + (
        f"; {', '.join(widened)})" if widened else narrow
    )
    if found.unconfined:
        note = f"{note[:-1]}; not confined: {'; '.join(found.unconfined)})"
    return note


def _require_browser_extra() -> None:
    # Playwright is the `sessionflow-cli[browser]` extra (a third of the command's install,
    # for a group that is off by default). Checked when the tools are built, so the
    # command stops at startup instead of failing the agent's first browser call.
    if importlib.util.find_spec("playwright") is None:
        raise RuntimeFailure(
            "local_tools.browser is on, but the browser tools' extra is not installed: "
            'pip install "sessionflow-cli[browser]" (or switch local_tools.browser off)'
        )


async def close_local_tools() -> None:
    """Close what the local tools keep open in this process (the browser), if they were loaded."""
    if LOCAL_TOOLS_MODULE not in sys.modules:
        return
    import sessionflow_local_tools as local_tools

    await local_tools.close_browser_sessions()
