"""The local tools: workspace files, shell commands, web pages and a browser.

Two layers. The hardened functions: every one is a coroutine that keeps the event loop
free: file work runs in a thread that stops when the call is cancelled or runs out of
time, the shell runs in a subprocess tree that is killed whole, and searches use a
linear-time regex engine. Every bad input raises `sessionflow.kit.ToolExecutionError`
with a message for the model. The Claude Agent SDK adapter's built-in tools are argument
mappings onto these functions.

The tools: ``build_local_tools(workspace, resolve_settings)`` returns a `ToolSpec` for
every tool of every group, each with its description, JSON schema, floor and verify; its
caller (the CLI) decides which to offer. When a tool runs it resolves the call's session
settings with ``resolve_settings`` and refuses to run if its group is switched off, so the
call is authorized again on the worker that runs it.

| group       | tools                                                  | effect (floor)       | approval (floor)         |
| ----------- | ------------------------------------------------------ | -------------------- | ------------------------ |
| files       | read_file, list_directory, search_files                | read                 | no                       |
| files       | write_file                                             | idempotent write     | every call               |
| files       | edit_file                                              | non-idempotent write | every call               |
| shell       | run_shell_command                                      | non-idempotent write | unless on the allow list¹|
| web_fetch   | fetch_web_page                                         | read                 | no                       |
| browser     | browser_navigate, browser_snapshot                     | read                 | no                       |
| browser     | browser_click, browser_fill, browser_submit_form       | non-idempotent write | every call               |

Approval is the session's business, not the handler's: a handler cannot see whether a
person approved its call. Each spec carries its floor as its ``policy``; the CLI puts
those into `AgentSessionOptions.tool_policies` and uses its one call-policy engine,
`sessionflow_cli._policy.build_call_policy`, as the session's ``call_policy``, so the
shell allow list and ``approval.always`` are applied per call and no policy goes below
a floor. How a call's approval is decided, end to end, is told there.

¹ Shell commands run inside a bubblewrap sandbox (`ShellSandbox`, `_sandbox`): the
workspace writable, the rest read-only, the home hidden, no network. Where bubblewrap is
missing or cannot create namespaces they run under Landlock when the kernel has it (the
same rules for files; TCP refused from Landlock ABI 4; what it leaves unconfined is said).
Where neither works, or with ``backend="none"`` (`sandbox_status` says which and why),
they run unconfined, the tool's description and each result say so, and the CLI asks
approval for every command; it asks too under Landlock when the network should be off
and the kernel cannot refuse TCP (`SandboxStatus.allow_list_applies`).

The browser tools need the ``browser`` extra (Playwright), imported when one first runs.
"""

from sessionflow_local_tools._args import Arguments
from sessionflow_local_tools._build import build_local_tools
from sessionflow_local_tools._files import DEFAULT_READ_LINES, MAX_READ_LINES
from sessionflow_local_tools._floors import EDIT_FLOOR, READ_FLOOR, SHELL_FLOOR, WRITE_FLOOR, with_floor
from sessionflow_local_tools._lifecycle import close_browser_sessions
from sessionflow_local_tools._runtime import (
    edit_file,
    glob_files,
    list_directory,
    read_file,
    search_files,
    write_file,
)
from sessionflow_local_tools._sandbox import HIDDEN_IN_HOME, SandboxStatus, sandbox_status
from sessionflow_local_tools._search import DEFAULT_MAX_RESULTS, MAX_RESULTS, SearchMode
from sessionflow_local_tools._settings import (
    SANDBOX_BACKENDS,
    LocalToolGroup,
    LocalToolSettings,
    SandboxBackend,
    ShellSandbox,
)
from sessionflow_local_tools._shell import (
    MAX_SHELL_TIMEOUT,
    ShellRun,
    effective_timeout,
    run_shell,
    run_shell_command,
)
from sessionflow_local_tools._text import cap_text, clean_text, show_name, terminal_safe
from sessionflow_local_tools._tool_floors import LOCAL_TOOL_FLOORS, LOCAL_TOOL_GROUPS, SHELL_TOOL
from sessionflow_local_tools._verify import edit_basis, file_sha256, verify_edit, verify_write, write_basis
from sessionflow_local_tools._web import MAX_BODY_BYTES, MAX_REDIRECTS, check_web_url, fetch_web_page
from sessionflow_local_tools._writes import MAX_EDIT_BYTES

__all__ = [
    # The tools: their specs (schemas, floors, verify), settings and groups
    "LOCAL_TOOL_FLOORS",
    "LOCAL_TOOL_GROUPS",
    "SHELL_TOOL",
    "LocalToolGroup",
    "LocalToolSettings",
    "build_local_tools",
    "close_browser_sessions",
    # Floors
    "EDIT_FLOOR",
    "READ_FLOOR",
    "SHELL_FLOOR",
    "WRITE_FLOOR",
    "with_floor",
    # Files
    "DEFAULT_MAX_RESULTS",
    "DEFAULT_READ_LINES",
    "MAX_EDIT_BYTES",
    "MAX_READ_LINES",
    "MAX_RESULTS",
    "SearchMode",
    "edit_file",
    "glob_files",
    "list_directory",
    "read_file",
    "search_files",
    "write_file",
    # Verifying file writes
    "edit_basis",
    "file_sha256",
    "verify_edit",
    "verify_write",
    "write_basis",
    # Shell
    "HIDDEN_IN_HOME",
    "MAX_SHELL_TIMEOUT",
    "SANDBOX_BACKENDS",
    "SandboxBackend",
    "SandboxStatus",
    "ShellRun",
    "ShellSandbox",
    "effective_timeout",
    "run_shell",
    "run_shell_command",
    "sandbox_status",
    # Web
    "MAX_BODY_BYTES",
    "MAX_REDIRECTS",
    "check_web_url",
    "fetch_web_page",
    # Arguments and text
    "Arguments",
    "cap_text",
    "clean_text",
    "show_name",
    "terminal_safe",
]
