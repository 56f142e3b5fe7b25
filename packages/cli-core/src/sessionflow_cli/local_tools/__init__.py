"""Local tools for the agent: files in the workspace, shell commands, web pages, a browser.

``build_local_tools(workspace, resolve_settings)`` returns a `ToolSpec` for every tool of
every group; the CLI decides which to offer. When a tool runs it resolves the call's
session settings with ``resolve_settings`` and refuses to run if its group is switched
off, so the call is authorized again on the worker that runs it.

| group       | tools                                                  | effect (floor)       | approval (floor)         |
| ----------- | ------------------------------------------------------ | -------------------- | ------------------------ |
| files       | read_file, list_directory, search_files                | read                 | no                       |
| files       | write_file                                             | idempotent write     | every call               |
| files       | edit_file                                              | non-idempotent write | every call               |
| shell       | run_shell_command                                      | non-idempotent write | unless on the allow list |
| web_fetch   | fetch_web_page                                         | read                 | no                       |
| browser     | browser_navigate, browser_snapshot                     | read                 | no                       |
| browser     | browser_click, browser_fill, browser_submit_form       | non-idempotent write | every call               |

Approval is the session's business, not the handler's: a handler cannot see whether a
person approved its call. Each spec carries its floor as its ``policy``; the CLI puts
those into `AgentSessionOptions.tool_policies` and uses its one call-policy engine,
`sessionflow_cli._policy.build_call_policy`, as the session's ``call_policy``, so the
shell allow list and ``approval.always`` are applied per call and no policy goes below
a floor. How a call's approval is decided, end to end, is told there.
"""

from sessionflow_cli.local_tools._build import build_local_tools
from sessionflow_cli.local_tools._floors import LOCAL_TOOL_FLOORS, LOCAL_TOOL_GROUPS
from sessionflow_cli.local_tools._lifecycle import close_browser_sessions
from sessionflow_cli.local_tools._settings import MAX_SHELL_TIMEOUT, LocalToolGroup, LocalToolSettings

__all__ = [
    "LOCAL_TOOL_FLOORS",
    "LOCAL_TOOL_GROUPS",
    "MAX_SHELL_TIMEOUT",
    "LocalToolGroup",
    "LocalToolSettings",
    "build_local_tools",
    "close_browser_sessions",
]
