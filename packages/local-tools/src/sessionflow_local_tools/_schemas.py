"""What the model sees of each local tool: its description and JSON schema parameters."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from sessionflow_local_tools._files import DEFAULT_READ_LINES, MAX_READ_LINES
from sessionflow_local_tools._sandbox import SandboxStatus
from sessionflow_local_tools._search import DEFAULT_MAX_RESULTS, MAX_RESULTS
from sessionflow_local_tools._settings import BROWSER_IDLE_SECONDS
from sessionflow_local_tools._shell import MAX_SHELL_TIMEOUT
from sessionflow_local_tools._web import MAX_BODY_BYTES, MAX_REDIRECTS
from sessionflow_local_tools._writes import MAX_EDIT_BYTES

__all__ = [
    "DESCRIPTIONS",
    "PARAMETERS",
    "SHELL_LANDLOCK",
    "SHELL_SANDBOXED",
    "SHELL_UNSANDBOXED",
    "shell_description",
]

Schema = dict[str, Any]

_PATH_RULES = (
    "Paths are relative to the workspace, or absolute inside it. Symbolic links are followed only while "
    "they stay inside the workspace; '..' cannot climb above it; files with more than one hard link and "
    "special files (FIFOs, devices, sockets) are refused."
)


def _object(properties: Mapping[str, Schema], required: tuple[str, ...] = ()) -> Schema:
    return {
        "type": "object",
        "properties": dict(properties),
        "required": list(required),
        "additionalProperties": False,
    }


def _text(description: str, **extra: Any) -> Schema:
    return {"type": "string", "description": description, **extra}


_PATH = _text("File path, relative to the workspace (or absolute inside it).")
_TARGET: dict[str, Schema] = {
    "role": _text(
        "ARIA role of the target element as the snapshot shows it (button, link, textbox, checkbox, "
        "combobox, form, ...). Use with 'name', or use 'selector' instead."
    ),
    "name": _text("Accessible name of the target, matched exactly (the quoted text in the snapshot)."),
    "selector": _text("CSS selector of the target, instead of role and name."),
}
_TARGET_RULE = (
    "Give the target as an ARIA 'role' plus its accessible 'name' from the snapshot, or as a CSS "
    "'selector'; it must match exactly one element."
)

DESCRIPTIONS: Mapping[str, str] = MappingProxyType(
    {
        "read_file": (
            f"Read a text file from the workspace. Returns up to 'limit' lines (default {DEFAULT_READ_LINES}) "
            "starting at line 'offset' (1-based), exactly as stored; a marker at the end says when more lines "
            f"follow and which offset reads on. Binary files are described, not shown. {_PATH_RULES}"
        ),
        "list_directory": (
            "List one directory of the workspace: sub-directories end with '/', files show their size, "
            "symbolic links show their target. Names holding control characters or backslashes are "
            f"shown escaped (\\n, \\x1b, \\\\). {_PATH_RULES}"
        ),
        "search_files": (
            "Search the text files under a directory (or one file) of the workspace for lines containing "
            "'pattern' (a plain substring, or an RE2 regular expression when 'regex' is true: no "
            "backreferences or lookaround, matched in linear time). Returns "
            "'path:line: text' lines. Symbolic links are not followed; .git is skipped; binary files, files "
            f"over 4 MiB and files with several hard links are skipped. {_PATH_RULES}"
        ),
        "write_file": (
            "Create a file, or replace a whole file, with 'content' (UTF-8 text). Missing parent directories "
            "are created. Writing the same content again is harmless. Refuses to write through a symbolic "
            f"link. Every call is approved by the user first. {_PATH_RULES}"
        ),
        "edit_file": (
            "Change part of a text file: replace 'old_string' with 'new_string'. 'old_string' must match the "
            "file exactly (whitespace included) and occur exactly once, unless 'replace_all' is true. Read "
            f"the file first. Files over {MAX_EDIT_BYTES} bytes are refused. If the file changed since it was "
            "read, nothing is written and you must read it again. Every call is approved by the user first. "
            f"{_PATH_RULES}"
        ),
        "run_shell_command": (
            "Run a command with /bin/sh -c in the workspace directory and return its exit code, stdout and "
            "stderr (long output keeps its start and end). {confinement} It is killed, with every process "
            "it started, after "
            f"'timeout_seconds' (at most {MAX_SHELL_TIMEOUT:g}). It runs at most once: if the worker dies "
            "meanwhile the outcome is reported unknown. {approval}"
        ),
        "fetch_web_page": (
            "Fetch an http or https URL and return its readable text (main content of an HTML page as "
            f"markdown; text types as they are; other types are only described). Follows at most "
            f"{MAX_REDIRECTS} redirects, reads at most {MAX_BODY_BYTES} bytes. Does not run JavaScript; use "
            "the browser tools for pages that need it."
        ),
        "browser_navigate": (
            "Open an http or https URL in this session's headless browser page (opening the page if needed) "
            "and return the URL, the title and the page's accessibility snapshot. The page is kept on this "
            f"worker and closed after {BROWSER_IDLE_SECONDS / 60:g} idle minutes or when the worker restarts."
        ),
        "browser_snapshot": (
            "Return the URL, title and accessibility snapshot of this session's browser page (roles, "
            "accessible names and values of its elements). Fails if no page is open: call browser_navigate."
        ),
        "browser_click": (
            f"Click an element of the browser page, then return the page's snapshot. {_TARGET_RULE} Every "
            "call is approved by the user first."
        ),
        "browser_fill": (
            f"Type 'value' into a text field of the browser page (replacing its content), then return the "
            f"page's snapshot. {_TARGET_RULE} Every call is approved by the user first."
        ),
        "browser_submit_form": (
            "Submit a form of the browser page, then return the page's snapshot after it loads. The target is "
            "the form itself, a field in it, or its submit button (whose name and value are then sent). "
            f"{_TARGET_RULE} Every call is approved by the user first."
        ),
    }
)

PARAMETERS: Mapping[str, Schema] = MappingProxyType(
    {
        "read_file": _object(
            {
                "path": _PATH,
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "default": 1,
                    "description": "First line to read (1-based).",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_READ_LINES,
                    "default": DEFAULT_READ_LINES,
                    "description": "How many lines to read at most.",
                },
            },
            ("path",),
        ),
        "list_directory": _object(
            {"path": _text("Directory path, relative to the workspace; '.' is the workspace.", default=".")}
        ),
        "search_files": _object(
            {
                "pattern": _text("Text to find (a substring, or a regular expression when 'regex' is true)."),
                "path": _text("Directory or file to search, relative to the workspace.", default="."),
                "regex": {"type": "boolean", "default": False, "description": "Treat 'pattern' as a regex."},
                "ignore_case": {
                    "type": "boolean",
                    "default": False,
                    "description": "Match case-insensitively.",
                },
                "include": _text("Only search files whose name matches this glob, such as '*.py'."),
                "max_results": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_RESULTS,
                    "default": DEFAULT_MAX_RESULTS,
                    "description": "Stop after this many matching lines.",
                },
            },
            ("pattern",),
        ),
        "write_file": _object(
            {"path": _PATH, "content": _text("The whole new content of the file.")}, ("path", "content")
        ),
        "edit_file": _object(
            {
                "path": _PATH,
                "old_string": _text("Exact text to replace, as it appears in the file."),
                "new_string": _text("Text to put in its place."),
                "replace_all": {
                    "type": "boolean",
                    "default": False,
                    "description": "Replace every occurrence instead of requiring exactly one.",
                },
            },
            ("path", "old_string", "new_string"),
        ),
        "run_shell_command": _object(
            {
                "command": _text("The command line, run with /bin/sh -c in the workspace."),
                "timeout_seconds": {
                    # An integer, not a number: JSON schema has no way to refuse NaN for a
                    # number, but NaN and Infinity are no integers.
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_SHELL_TIMEOUT,
                    "description": "Seconds before the command is killed (default from the configuration, "
                    "usually 120).",
                },
            },
            ("command",),
        ),
        "fetch_web_page": _object({"url": _text("The http or https URL to fetch.")}, ("url",)),
        "browser_navigate": _object({"url": _text("The http or https URL to open.")}, ("url",)),
        "browser_snapshot": _object({}),
        "browser_click": _object(_TARGET),
        "browser_fill": _object({**_TARGET, "value": _text("The text to type into the field.")}, ("value",)),
        "browser_submit_form": _object(_TARGET),
    }
)


SHELL_SANDBOXED = (
    "It runs sandboxed (bubblewrap): the workspace is writable, the rest of the file system read-only, "
    "the user's home outside the workspace hidden, /tmp empty and private, and the network off, unless "
    "the configuration widens these."
)
SHELL_LANDLOCK = (
    "It runs sandboxed (landlock): the workspace is writable, the rest of the file system read-only, "
    "the user's home outside the workspace and /tmp hidden ($TMPDIR is a private folder), and TCP "
    "connections off, unless the configuration widens these. Not confined: {unconfined}."
)
SHELL_UNSANDBOXED = (
    "It runs NOT sandboxed ({reason}): with the user's permissions, not confined to the workspace."
)


def shell_description(status: SandboxStatus) -> str:
    """The shell tool's description: which sandbox, what it leaves unconfined, and when
    the user approves a command."""
    if status.backend == "bubblewrap":
        confinement = SHELL_SANDBOXED
    elif status.backend == "landlock":
        confinement = SHELL_LANDLOCK.format(unconfined="; ".join(status.unconfined))
    else:
        confinement = SHELL_UNSANDBOXED.format(reason=status.reason)
    if status.allow_list_applies:
        approval = "Commands not on the user's allow list are approved by the user first."
    else:
        approval = "Every command is approved by the user first."
    return DESCRIPTIONS["run_shell_command"].format(confinement=confinement, approval=approval)
