"""Claude Code's own tools as argument mappings onto sessionflow's hardened tool runtime.

The CLI cannot run one tool outside a model turn, so a deferred call of `Read`, `Grep`,
`Glob`, `Write`, `Edit`, `Bash` or `WebFetch` runs here, on the worker that runs the
tool step, in the session's working directory. Each maps its arguments onto the same
functions the sessionflow CLI's local tools use (`sessionflow_local_tools`): paths are
resolved inside the working directory without following links out of it, every open
stays below it, searches are linear-time (RE2), reads are bounded and cancellable,
writes report any move of a directory on their way, and `Bash` runs as one process tree
that is killed whole. The floors are the same too (`BUILTIN_TOOL_POLICIES`): `Write`
and `Edit` ask on every call; `Bash` asks unless an allow list lifts it. `WebFetch`
returns the page's text; it does not apply the call's ``prompt`` with a second model,
as Claude Code does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import sessionflow_local_tools as runtime
from sessionflow import ToolEffect, ToolPolicy
from sessionflow.kit import ToolExecutionError
from sessionflow_claude_agent_sdk._tool_floors import LOCAL_TOOL_TWINS
from sessionflow_local_tools import LOCAL_TOOL_FLOORS, Arguments

__all__ = [
    "BUILTIN_TOOL_EFFECTS",
    "BUILTIN_TOOL_NAMES",
    "BUILTIN_TOOL_POLICIES",
    "run_builtin_tool",
]

BUILTIN_TOOL_POLICIES: Mapping[str, ToolPolicy] = MappingProxyType(
    {name: LOCAL_TOOL_FLOORS[twin] for name, twin in LOCAL_TOOL_TWINS.items()}
)
"""Claude Code tools the adapter can run in a tool step, and their floors (see `_tool_floors`)."""

BUILTIN_TOOL_EFFECTS: Mapping[str, ToolEffect] = MappingProxyType(
    {name: policy.effect for name, policy in BUILTIN_TOOL_POLICIES.items()}
)
"""Claude Code tools the adapter can run in a tool step, and their effects."""

BUILTIN_TOOL_NAMES: tuple[str, ...] = tuple(BUILTIN_TOOL_EFFECTS)

BASH_DEFAULT_TIMEOUT_MS = 120_000
_BASH = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
"""Claude Code's Bash runs bash: commands may use its syntax (``[[ ]]``, arrays, ``source``)."""
BASH_MAX_TIMEOUT_MS = int(runtime.MAX_SHELL_TIMEOUT * 1000)

Json = dict[str, Any]
_Tool = Callable[[Json, Path], Awaitable[str]]


async def run_builtin_tool(
    name: str, arguments: Json, cwd: Path, *, sandbox: runtime.ShellSandbox | None = None
) -> str:
    """Run one Claude Code tool call in `cwd` and return the text the model sees.

    A ``sandbox`` confines `Bash` as it confines the local tools' ``run_shell_command``
    (bubblewrap, else Landlock, else unconfined and said so); without one it runs with
    the worker's permissions.

    Raises:
        ToolExecutionError: The call failed in a way the model should see (bad arguments,
            a path outside `cwd`, a missing file, a command that timed out).
    """
    tool = _TOOLS.get(name)
    if tool is None:
        raise ToolExecutionError(f"sessionflow cannot run Claude Code's tool {name!r}")
    try:
        if name == "Bash":
            return runtime.clean_text(await _bash(arguments, cwd, sandbox))
        return runtime.clean_text(await tool(arguments, cwd))
    except ToolExecutionError as error:
        raise ToolExecutionError(runtime.clean_text(error.message)) from None
    except OSError as error:  # e.g. a directory we may not read; only the reason, no path
        raise ToolExecutionError(f"{name} failed: {error.strerror or type(error).__name__}") from None


def _args(arguments: Json, *known: str) -> Arguments:
    return Arguments(arguments, frozenset(known))


_PADDED_NUMBER = re.compile(r"(?m)^ +(\d+)\t")
_LINE_NUMBER = re.compile(r"(?m)^(\d+)\t")


async def _read(arguments: Json, root: Path) -> str:
    a = _args(arguments, "file_path", "offset", "limit")
    text = await runtime.read_file(
        root,
        a.text("file_path"),
        a.integer("offset", 1, minimum=1, maximum=2**31),
        a.integer("limit", runtime.DEFAULT_READ_LINES, minimum=1, maximum=runtime.MAX_READ_LINES),
        numbered=True,
    )
    # Claude Code's numbering: no padding, and a file that ends with a newline shows the
    # empty line after it ("2\t" below "1\tlast line").
    text = _PADDED_NUMBER.sub(r"\1\t", text)
    numbers = _LINE_NUMBER.findall(text)
    if text.endswith("\n") and numbers:
        text += f"{int(numbers[-1]) + 1}\t"
    return text


_FILE_STATE_NOTE = " (file state is current in your context \u2014 no need to Read it back)"
"""Claude Code ends Write's answer with this note."""


async def _write(arguments: Json, root: Path) -> str:
    a = _args(arguments, "file_path", "content")
    path = a.text("file_path")
    done = await runtime.write_file(root, path, a.text("content"))
    # Claude Code's own words, with the path as the model gave it.
    if done.endswith("(created)."):
        return f"File created successfully at: {path}{_FILE_STATE_NOTE}"
    return f"The file {path} has been updated successfully.{_FILE_STATE_NOTE}"


async def _edit(arguments: Json, root: Path) -> str:
    a = _args(arguments, "file_path", "old_string", "new_string", "replace_all")
    path = a.text("file_path")
    replace_all = a.flag("replace_all")
    await runtime.edit_file(root, path, a.text("old_string"), a.text("new_string"), replace_all=replace_all)
    if replace_all:
        return f"The file {path} has been updated. All occurrences were successfully replaced."
    return f"The file {path} has been updated successfully."


async def _glob(arguments: Json, root: Path) -> str:
    a = _args(arguments, "pattern", "path")
    return await runtime.glob_files(root, a.text("pattern"), a.text("path", "."), absolute=True)


_TYPE_GLOBS: Mapping[str, tuple[str, ...]] = {
    "py": ("*.py", "*.pyi"),
    "js": ("*.js", "*.mjs", "*.cjs", "*.jsx"),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "rust": ("*.rs",),
    "go": ("*.go",),
    "java": ("*.java",),
    "md": ("*.md", "*.markdown"),
    "json": ("*.json",),
    "yaml": ("*.yaml", "*.yml"),
    "toml": ("*.toml",),
    "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.h"),
    "sh": ("*.sh", "*.bash"),
    "html": ("*.html", "*.htm"),
    "css": ("*.css",),
}
_GREP_MODES: Mapping[str, runtime.SearchMode] = {
    "content": "content",
    "files_with_matches": "files",
    "count": "count",
}
_GREP_ARGUMENTS = (
    "pattern", "path", "glob", "type", "output_mode", "-i", "-n", "-A", "-B", "-C", "context",
    "head_limit", "offset", "multiline",
)  # fmt: skip


async def _grep(arguments: Json, root: Path) -> str:
    a = _args(arguments, *_GREP_ARGUMENTS)
    mode = _GREP_MODES.get(a.text("output_mode", "files_with_matches"))
    if mode is None:
        raise ToolExecutionError("output_mode must be content, files_with_matches or count")
    if a.flag("multiline"):
        raise ToolExecutionError("multiline is not supported by sessionflow's Grep; match within lines")
    for name in ("-A", "-B", "-C", "context", "offset"):
        if a.integer(name, 0, minimum=0, maximum=10_000):
            raise ToolExecutionError(f"{name} is not supported by sessionflow's Grep; leave it out")
    a.flag("-n", True)  # lines are always numbered
    globs: list[str] = []
    glob = a.optional_text("glob")
    if glob:
        # Only the file name is matched: "**/*.py" means "*.py"; "*.{ts,tsx}" both.
        for part in glob.split():
            globs.append(part.rsplit("/", 1)[-1])
    type_name = a.optional_text("type")
    if type_name:
        globs.extend(_TYPE_GLOBS.get(type_name, (f"*.{type_name}",)))
    limit = a.integer("head_limit", runtime.DEFAULT_MAX_RESULTS, minimum=0, maximum=runtime.MAX_RESULTS)
    return await runtime.search_files(
        root,
        a.text("pattern"),
        a.text("path", "."),
        regex=True,
        ignore_case=a.flag("-i"),
        include=_expand_braces(globs),
        max_results=limit or runtime.DEFAULT_MAX_RESULTS,
        mode=mode,
        absolute=True,
    )


def _expand_braces(globs: list[str]) -> list[str]:
    expanded: list[str] = []
    for glob in globs:
        start, end = glob.find("{"), glob.find("}")
        if 0 <= start < end:
            expanded += [
                f"{glob[:start]}{choice}{glob[end + 1 :]}" for choice in glob[start + 1 : end].split(",")
            ]
        else:
            expanded.append(glob)
    return expanded


async def _bash(arguments: Json, root: Path, sandbox: runtime.ShellSandbox | None = None) -> str:
    a = _args(arguments, "command", "timeout", "description", "run_in_background")
    command = a.text("command")
    a.optional_text("description")
    if a.flag("run_in_background"):
        raise ToolExecutionError(
            "run_in_background is not supported: sessionflow runs each command to its end in one tool step"
        )
    if not command.strip():
        raise ToolExecutionError("the command is empty")
    timeout_ms = a.integer("timeout", BASH_DEFAULT_TIMEOUT_MS, minimum=1, maximum=2**53)
    timeout = min(timeout_ms, BASH_MAX_TIMEOUT_MS) / 1000
    run = await runtime.run_shell(
        command, root, runtime.effective_timeout(timeout, timeout), shell=_BASH, sandbox=sandbox
    )
    # Like Claude Code's own Bash: the output, stdout then stderr; then, meant to be
    # sandboxed, a line when it was not or what the sandbox left unconfined.
    notice = ""
    if run.unsandboxed is not None:
        notice = f"[not sandboxed: {run.unsandboxed}; the command ran with the worker's permissions]"
    elif run.unconfined:
        notice = f"[{run.sandbox}; not confined: {'; '.join(run.unconfined)}]"
    output = "\n".join(part for part in (run.stdout.rstrip("\n"), run.stderr.rstrip("\n"), notice) if part)
    if not run.succeeded:  # Claude Code marks a failed command as an error result
        how, _, number = run.status.partition(" ")
        if how == "exit" and not run.timed_out:
            # In Claude Code's words: its exit code, then the output.
            raise ToolExecutionError(f"Exit code {number}" + (f"\n{output}" if output else ""))
        raise ToolExecutionError(run.describe())
    return output


async def _web_fetch(arguments: Json, root: Path) -> str:
    a = _args(arguments, "url", "prompt")
    url = a.text("url")
    prompt = a.optional_text("prompt")
    text = await runtime.fetch_web_page(url)
    if prompt:
        return f"(fetched as is; apply the request yourself: {prompt})\n{text}"
    return text


_TOOLS: Mapping[str, _Tool] = MappingProxyType(
    {
        "Read": _read,
        "Write": _write,
        "Edit": _edit,
        "Glob": _glob,
        "Grep": _grep,
        "Bash": _bash,
        "WebFetch": _web_fetch,
    }
)
