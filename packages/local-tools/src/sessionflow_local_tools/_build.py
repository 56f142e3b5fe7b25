"""`build_local_tools`: the ToolSpecs of every local tool, each authorizing its call again.

Every handler first resolves the call's session settings with the resolver its caller
(the CLI) passes (the worker's configuration narrowed by the turn's settings) and refuses to run
when its group is switched off. Approval is not checked here: a handler cannot see
whether the session asked a person, so approval rests on the session's policies (the
floors in `LOCAL_TOOL_FLOORS`, and the CLI's call policy for the shell allow list).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessionflow.kit import ToolExecutionError, ToolInvocation, ToolSpec
from sessionflow_local_tools import _runtime as runtime
from sessionflow_local_tools._args import Arguments
from sessionflow_local_tools._files import DEFAULT_READ_LINES, MAX_READ_LINES
from sessionflow_local_tools._sandbox import sandbox_status
from sessionflow_local_tools._schemas import DESCRIPTIONS, PARAMETERS, shell_description
from sessionflow_local_tools._search import DEFAULT_MAX_RESULTS, MAX_RESULTS
from sessionflow_local_tools._settings import LocalToolSettings, ShellSandbox
from sessionflow_local_tools._shell import effective_timeout, run_shell_command
from sessionflow_local_tools._text import clean_text
from sessionflow_local_tools._tool_floors import LOCAL_TOOL_FLOORS, LOCAL_TOOL_GROUPS, SHELL_TOOL
from sessionflow_local_tools._verify_hooks import verify_hooks
from sessionflow_local_tools._web import fetch_web_page

if TYPE_CHECKING:
    from sessionflow_local_tools._browser import BrowserTarget

__all__ = ["build_local_tools"]

SettingsResolver = Callable[[Mapping[str, Any]], LocalToolSettings]


@dataclass(frozen=True)
class _Call:
    """One authorized call: its arguments, settings and invocation, and the workspace."""

    args: Arguments
    settings: LocalToolSettings
    invocation: ToolInvocation
    workspace: Path


Runner = Callable[[_Call], Awaitable[str]]


def build_local_tools(
    workspace: Path, resolve_settings: SettingsResolver, shell_sandbox: ShellSandbox | None = None
) -> list[ToolSpec]:
    """A ToolSpec for every tool of every group, with its floor as effect and policy.

    ``shell_sandbox`` (the worker's configuration; default `ShellSandbox()`) decides what
    the shell tool's description says: sandboxed, or not and why. Each command runs under
    the sandbox settings of its own call.

    The caller decides which to offer. Each handler resolves ``invocation.session_settings``
    with ``resolve_settings`` when it runs, and a tool whose group is switched off raises
    `ToolExecutionError` ("tool <name> is switched off for this session") without doing
    anything.
    """
    root = Path(workspace).absolute()
    found = sandbox_status(shell_sandbox or ShellSandbox())
    descriptions = {**DESCRIPTIONS, SHELL_TOOL: shell_description(found)}
    return [
        _spec(name, runner, root, resolve_settings, descriptions[name]) for name, runner in _RUNNERS.items()
    ]


def _spec(
    name: str, runner: Runner, workspace: Path, resolve_settings: SettingsResolver, description: str
) -> ToolSpec:
    group = LOCAL_TOOL_GROUPS[name]
    parameters = PARAMETERS[name]
    known = frozenset(parameters["properties"])

    async def handler(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
        settings = resolve_settings(invocation.session_settings)
        if group not in settings.groups:
            raise ToolExecutionError(f"tool {name} is switched off for this session")
        call = _Call(Arguments(arguments, known), settings, invocation, workspace)
        try:
            return clean_text(await runner(call))
        except ToolExecutionError as error:
            raise ToolExecutionError(clean_text(error.message)) from None
        except OSError as error:  # e.g. a directory we may not read; only the reason, no path
            reason = error.strerror or type(error).__name__
            raise ToolExecutionError(f"{name} failed: {reason}") from None

    floor = LOCAL_TOOL_FLOORS[name]
    verify, verify_basis = verify_hooks(name, workspace, known)
    return ToolSpec(
        name=name,
        description=description,
        parameters=parameters,
        effect=floor.effect,
        policy=floor,
        handler=handler,
        verify=verify,
        verify_basis=verify_basis,
    )


# --------------------------------------------------------------------------- files


async def _read_file(call: _Call) -> str:
    a = call.args
    path = a.text("path")
    offset = a.integer("offset", 1, minimum=1, maximum=2**31)
    limit = a.integer("limit", DEFAULT_READ_LINES, minimum=1, maximum=MAX_READ_LINES)
    return await runtime.read_file(call.workspace, path, offset, limit)


async def _list_directory(call: _Call) -> str:
    return await runtime.list_directory(call.workspace, call.args.text("path", "."))


async def _search_files(call: _Call) -> str:
    a = call.args
    return await runtime.search_files(
        call.workspace,
        a.text("pattern"),
        a.text("path", "."),
        regex=a.flag("regex"),
        ignore_case=a.flag("ignore_case"),
        include=a.optional_text("include"),
        max_results=a.integer("max_results", DEFAULT_MAX_RESULTS, minimum=1, maximum=MAX_RESULTS),
    )


async def _write_file(call: _Call) -> str:
    return await runtime.write_file(call.workspace, call.args.text("path"), call.args.text("content"))


async def _edit_file(call: _Call) -> str:
    a = call.args
    return await runtime.edit_file(
        call.workspace,
        a.text("path"),
        a.text("old_string"),
        a.text("new_string"),
        replace_all=a.flag("replace_all"),
    )


# --------------------------------------------------------------------------- shell and web


async def _run_shell_command(call: _Call) -> str:
    command = call.args.text("command")
    if not command.strip():
        raise ToolExecutionError("the command is empty")
    timeout = effective_timeout(call.args.number("timeout_seconds"), call.settings.shell_timeout)
    return await run_shell_command(command, call.workspace, timeout, call.settings.shell_sandbox)


async def _fetch_web_page(call: _Call) -> str:
    return await fetch_web_page(call.args.text("url"))


# --------------------------------------------------------------------------- browser
# Playwright is imported when a browser tool first runs: it is slow to import.


def _target(args: Arguments) -> BrowserTarget:
    from sessionflow_local_tools._browser import BrowserTarget

    return BrowserTarget(
        role=args.optional_text("role"),
        name=args.optional_text("name"),
        selector=args.optional_text("selector"),
    )


async def _browser_navigate(call: _Call) -> str:
    from sessionflow_local_tools import _browser

    return await _browser.navigate(call.invocation.session_id, call.args.text("url"))


async def _browser_snapshot(call: _Call) -> str:
    from sessionflow_local_tools import _browser

    return await _browser.snapshot(call.invocation.session_id)


async def _browser_click(call: _Call) -> str:
    from sessionflow_local_tools import _browser

    return await _browser.act(call.invocation.session_id, "click", _target(call.args))


async def _browser_fill(call: _Call) -> str:
    from sessionflow_local_tools import _browser

    value = call.args.text("value")
    return await _browser.act(call.invocation.session_id, "fill", _target(call.args), value)


async def _browser_submit_form(call: _Call) -> str:
    from sessionflow_local_tools import _browser

    return await _browser.act(call.invocation.session_id, "submit", _target(call.args))


_RUNNERS: dict[str, Runner] = {
    "read_file": _read_file,
    "list_directory": _list_directory,
    "search_files": _search_files,
    "write_file": _write_file,
    "edit_file": _edit_file,
    SHELL_TOOL: _run_shell_command,
    "fetch_web_page": _fetch_web_page,
    "browser_navigate": _browser_navigate,
    "browser_snapshot": _browser_snapshot,
    "browser_click": _browser_click,
    "browser_fill": _browser_fill,
    "browser_submit_form": _browser_submit_form,
}
