"""The hardened local tool runtime: workspace files, shell commands and web pages.

Every function here is a coroutine that keeps the event loop free: file work runs in a
thread that stops when the call is cancelled or runs out of time, the shell runs in a
subprocess tree that is killed whole, and searches use a linear-time regex engine. Every
bad input raises `sessionflow.kit.ToolExecutionError` with a message for the model.
The CLI's local tools and the Claude Agent SDK adapter's built-in tools are argument
mappings onto these functions.
"""

from sessionflow_local_tools._args import Arguments
from sessionflow_local_tools._files import DEFAULT_READ_LINES, MAX_READ_LINES
from sessionflow_local_tools._floors import (
    CLAUDE_CODE_TOOL_FLOORS,
    EDIT_FLOOR,
    READ_FLOOR,
    SHELL_FLOOR,
    SHELL_TOOL_NAMES,
    WRITE_FLOOR,
    with_floor,
)
from sessionflow_local_tools._runtime import (
    edit_file,
    glob_files,
    list_directory,
    read_file,
    search_files,
    write_file,
)
from sessionflow_local_tools._search import DEFAULT_MAX_RESULTS, MAX_RESULTS, SearchMode
from sessionflow_local_tools._shell import (
    MAX_SHELL_TIMEOUT,
    ShellRun,
    effective_timeout,
    run_shell,
    run_shell_command,
)
from sessionflow_local_tools._text import cap_text, clean_text, show_name, terminal_safe
from sessionflow_local_tools._verify import edit_basis, file_sha256, verify_edit, verify_write, write_basis
from sessionflow_local_tools._web import MAX_BODY_BYTES, MAX_REDIRECTS, check_web_url, fetch_web_page
from sessionflow_local_tools._writes import MAX_EDIT_BYTES

__all__ = [
    "CLAUDE_CODE_TOOL_FLOORS",
    "DEFAULT_MAX_RESULTS",
    "DEFAULT_READ_LINES",
    "EDIT_FLOOR",
    "MAX_BODY_BYTES",
    "MAX_EDIT_BYTES",
    "MAX_READ_LINES",
    "MAX_REDIRECTS",
    "MAX_RESULTS",
    "MAX_SHELL_TIMEOUT",
    "READ_FLOOR",
    "SHELL_FLOOR",
    "SHELL_TOOL_NAMES",
    "WRITE_FLOOR",
    "Arguments",
    "SearchMode",
    "ShellRun",
    "cap_text",
    "check_web_url",
    "clean_text",
    "edit_basis",
    "edit_file",
    "effective_timeout",
    "fetch_web_page",
    "file_sha256",
    "glob_files",
    "list_directory",
    "read_file",
    "run_shell",
    "run_shell_command",
    "search_files",
    "show_name",
    "terminal_safe",
    "verify_edit",
    "verify_write",
    "with_floor",
    "write_basis",
    "write_file",
]
