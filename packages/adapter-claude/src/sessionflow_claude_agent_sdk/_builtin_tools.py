"""Claude Code's own tools, re-implemented in Python for the tool step.

The CLI cannot run one tool outside a model turn, so a deferred call of `Read`, `Grep`,
`Glob`, `Write`, `Edit`, `Bash` or `WebFetch` runs here, on the worker that runs the
tool step, in the session's working directory. The file tools are careful: every path
is resolved (symlinks included) and must lie inside the working directory. `Bash` runs
``/bin/bash -c`` in the working directory and is not confined (it asks for approval by
default: its effect is a non-idempotent write). `WebFetch` fetches the page over HTTP(S)
and returns its text; it does not apply the call's ``prompt`` with a second model, as
Claude Code does.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import os
import re
import signal
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping
from html.parser import HTMLParser
from pathlib import Path
from types import MappingProxyType
from typing import Any

import httpx

from sessionflow.session import ToolEffect, ToolExecutionError

__all__ = [
    "BUILTIN_TOOL_EFFECTS",
    "BUILTIN_TOOL_NAMES",
    "run_builtin_tool",
]

BUILTIN_TOOL_EFFECTS: Mapping[str, ToolEffect] = MappingProxyType(
    {
        "Read": ToolEffect.READ,
        "Grep": ToolEffect.READ,
        "Glob": ToolEffect.READ,
        "WebFetch": ToolEffect.READ,
        "Write": ToolEffect.IDEMPOTENT_WRITE,
        "Edit": ToolEffect.NON_IDEMPOTENT_WRITE,
        "Bash": ToolEffect.NON_IDEMPOTENT_WRITE,
    }
)
"""Claude Code tools the adapter can run in a tool step, and their effects."""

BUILTIN_TOOL_NAMES: tuple[str, ...] = tuple(BUILTIN_TOOL_EFFECTS)

MAX_OUTPUT_CHARS = 30_000
"""Bash output beyond this is cut, as Claude Code does."""
READ_DEFAULT_LIMIT = 2000
READ_MAX_LINE_CHARS = 2000
GLOB_MAX_RESULTS = 100
GREP_MAX_FILE_BYTES = 10 * 1024 * 1024
FETCH_MAX_BYTES = 5 * 1024 * 1024
FETCH_MAX_CHARS = 100_000
BASH_DEFAULT_TIMEOUT_MS = 120_000
BASH_MAX_TIMEOUT_MS = 600_000

Json = dict[str, Any]
_Tool = Callable[[Json, Path], Awaitable[str]]


async def run_builtin_tool(name: str, arguments: Json, cwd: Path) -> str:
    """Run one Claude Code tool call in `cwd` and return the text the model sees.

    Raises:
        ToolExecutionError: The call failed in a way the model should see (bad arguments,
            a path outside `cwd`, a missing file, a non-zero exit code).
    """
    tool = _TOOLS.get(name)
    if tool is None:
        raise ToolExecutionError(f"sessionflow cannot run Claude Code's tool {name!r}")
    root = await asyncio.to_thread(cwd.resolve, True)
    return await tool(arguments, root)


# --------------------------------------------------------------------------- arguments


def _string(arguments: Json, key: str, *, required: bool = True, default: str = "") -> str:
    value = arguments.get(key)
    if value is None:
        if required:
            raise ToolExecutionError(f"the required parameter `{key}` is missing")
        return default
    if not isinstance(value, str):
        raise ToolExecutionError(f"the parameter `{key}` must be a string")
    return value


def _integer(arguments: Json, key: str, default: int | None = None) -> int | None:
    value = arguments.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise ToolExecutionError(f"the parameter `{key}` must be an integer")
    return int(value)


def _flag(arguments: Json, key: str, default: bool = False) -> bool:
    value = arguments.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ToolExecutionError(f"the parameter `{key}` must be true or false")
    return value


def inside(root: Path, raw: str) -> Path:
    """`raw` resolved against `root` (symlinks followed); refused unless it lies inside `root`."""
    if not raw.strip():
        raise ToolExecutionError("the path is empty")
    if "\x00" in raw:
        raise ToolExecutionError("the path contains a NUL character")
    candidate = Path(raw)
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = candidate.resolve(strict=False)
    if resolved != root and root not in resolved.parents:
        raise ToolExecutionError(f"{raw} is outside the working directory {root}; sessionflow refuses it")
    return resolved


def _display(path: Path) -> str:
    return str(path)


# --------------------------------------------------------------------------- Read


async def _read(arguments: Json, root: Path) -> str:
    path = inside(root, _string(arguments, "file_path"))
    offset = _integer(arguments, "offset", 1) or 1
    limit = _integer(arguments, "limit", READ_DEFAULT_LIMIT) or READ_DEFAULT_LIMIT
    if offset < 1 or limit < 1:
        raise ToolExecutionError("offset and limit must be positive")
    if not path.exists():
        raise ToolExecutionError(f"File does not exist: {_display(path)}")
    if path.is_dir():
        raise ToolExecutionError(f"{_display(path)} is a directory; use Glob or Bash `ls` to list it")
    data = await asyncio.to_thread(path.read_bytes)
    if b"\x00" in data[:8192]:
        raise ToolExecutionError(f"{_display(path)} is a binary file; sessionflow's Read returns text only")
    lines = data.decode("utf-8", errors="replace").splitlines()
    if not lines:
        return "(the file exists but is empty)"
    chosen = lines[offset - 1 : offset - 1 + limit]
    if not chosen:
        raise ToolExecutionError(f"the file has {len(lines)} lines; offset {offset} is past its end")
    numbered = [
        f"{number:>6}\t{line[:READ_MAX_LINE_CHARS]}" for number, line in enumerate(chosen, start=offset)
    ]
    return "\n".join(numbered)


# --------------------------------------------------------------------------- Write and Edit


def _write_atomically(path: Path, text: str) -> None:
    """Write through a temporary file in the same folder, then rename: never a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.sessionflow-{uuid.uuid4().hex}.tmp")
    try:
        with temporary.open("w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            with contextlib.suppress(OSError):
                os.chmod(temporary, path.stat().st_mode & 0o7777)
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()


async def _write(arguments: Json, root: Path) -> str:
    path = inside(root, _string(arguments, "file_path"))
    content = _string(arguments, "content")
    if path.is_dir():
        raise ToolExecutionError(f"{_display(path)} is a directory")
    existed = path.exists()
    await asyncio.to_thread(_write_atomically, path, content)
    if existed:
        return f"The file {_display(path)} has been updated successfully."
    return f"File created successfully at: {_display(path)}"


async def _edit(arguments: Json, root: Path) -> str:
    path = inside(root, _string(arguments, "file_path"))
    old = _string(arguments, "old_string")
    new = _string(arguments, "new_string")
    replace_all = _flag(arguments, "replace_all")
    if old == new:
        raise ToolExecutionError("old_string and new_string are the same; nothing to change")
    if not path.is_file():
        raise ToolExecutionError(f"File does not exist: {_display(path)}")
    text = await asyncio.to_thread(path.read_text, encoding="utf-8")
    count = text.count(old) if old else 0
    if count == 0:
        raise ToolExecutionError(f"String to replace not found in file.\nString: {old}")
    if count > 1 and not replace_all:
        raise ToolExecutionError(
            f"Found {count} matches of the string to replace, but replace_all is false. "
            "Give more context to make it unique, or set replace_all to true."
        )
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    await asyncio.to_thread(_write_atomically, path, updated)
    return f"The file {_display(path)} has been updated successfully."


# --------------------------------------------------------------------------- Glob and Grep


def _is_hidden(path: Path, base: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(base).parts)


def _newest_first(paths: list[Path]) -> list[Path]:
    def mtime(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:
            return 0.0

    return sorted(paths, key=lambda p: (-mtime(p), str(p)))


def _glob_files(base: Path, pattern: str, root: Path) -> list[Path]:
    if Path(pattern).is_absolute():
        raise ToolExecutionError("the glob pattern must be relative to `path`")
    found: list[Path] = []
    for match in base.glob(pattern):
        if match.is_file() and not _is_hidden(match, base):
            resolved = match.resolve()
            if resolved == root or root in resolved.parents:
                found.append(match)
    return _newest_first(found)


async def _glob(arguments: Json, root: Path) -> str:
    pattern = _string(arguments, "pattern")
    base = inside(root, _string(arguments, "path", required=False) or str(root))
    if not base.is_dir():
        raise ToolExecutionError(f"{_display(base)} is not a directory")
    files = await asyncio.to_thread(_glob_files, base, pattern, root)
    if not files:
        return "No files found"
    lines = [str(f) for f in files[:GLOB_MAX_RESULTS]]
    if len(files) > GLOB_MAX_RESULTS:
        lines.append("(Results are truncated. Consider using a more specific path or pattern.)")
    return "\n".join(lines)


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


def _walk_files(base: Path) -> Iterator[Path]:
    if base.is_file():
        yield base
        return
    for directory, folders, files in os.walk(base):
        folders[:] = sorted(f for f in folders if not f.startswith(".") and f != "node_modules")
        for name in sorted(files):
            if not name.startswith("."):
                yield Path(directory) / name


def _matches_filters(path: Path, globs: list[str], types: tuple[str, ...]) -> bool:
    name = path.name
    if globs and not any(fnmatch.fnmatch(name, g) or fnmatch.fnmatch(str(path), g) for g in globs):
        return False
    return not types or any(fnmatch.fnmatch(name, t) for t in types)


def _text_of(path: Path) -> str | None:
    try:
        if path.stat().st_size > GREP_MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\x00" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def _grep_sync(arguments: Json, root: Path) -> str:
    pattern = _string(arguments, "pattern")
    base = inside(root, _string(arguments, "path", required=False) or str(root))
    if not base.exists():
        raise ToolExecutionError(f"Path does not exist: {_display(base)}")
    mode = _string(arguments, "output_mode", required=False, default="files_with_matches")
    if mode not in ("content", "files_with_matches", "count"):
        raise ToolExecutionError("output_mode must be content, files_with_matches or count")
    flags = re.IGNORECASE if _flag(arguments, "-i") else 0
    multiline = _flag(arguments, "multiline")
    if multiline:
        flags |= re.DOTALL | re.MULTILINE
    try:
        regex = re.compile(pattern, flags)
    except re.error as error:
        raise ToolExecutionError(f"invalid regular expression: {error}") from None
    glob_value = _string(arguments, "glob", required=False)
    globs = [g.strip() for g in re.split(r"[\s,]+", glob_value) if g.strip()] if glob_value else []
    type_name = _string(arguments, "type", required=False)
    types = _TYPE_GLOBS.get(type_name, (f"*.{type_name}",)) if type_name else ()
    numbers = _flag(arguments, "-n", default=True)
    context = _integer(arguments, "-C") or _integer(arguments, "context") or 0
    before = _integer(arguments, "-B") or context
    after = _integer(arguments, "-A") or context
    head_limit = _integer(arguments, "head_limit")
    skip = _integer(arguments, "offset", 0) or 0

    matched_files: list[Path] = []
    counts: dict[Path, int] = {}
    content: list[str] = []
    for path in _walk_files(base):
        resolved = path.resolve()
        if resolved != root and root not in resolved.parents:
            continue
        if not _matches_filters(path, globs, types):
            continue
        text = _text_of(path)
        if text is None:
            continue
        if multiline:
            hits = list(regex.finditer(text))
            if not hits:
                continue
            matched_files.append(path)
            counts[path] = len(hits)
            for hit in hits:
                line_number = text.count("\n", 0, hit.start()) + 1
                prefix = f"{path}:{line_number}:" if numbers else f"{path}:"
                content.append(prefix + hit.group(0))
            continue
        lines = text.splitlines()
        hit_lines = [i for i, line in enumerate(lines) if regex.search(line)]
        if not hit_lines:
            continue
        matched_files.append(path)
        counts[path] = len(hit_lines)
        if mode == "content":
            shown: set[int] = set()
            for index in hit_lines:
                window = range(max(0, index - before), min(len(lines), index + after + 1))
                if (
                    content
                    and window.start not in shown
                    and (before or after)
                    and window.start - 1 not in shown
                ):
                    content.append("--")
                for i in window:
                    if i in shown:
                        continue
                    shown.add(i)
                    separator = ":" if i == index or i in hit_lines else "-"
                    number = f"{i + 1}{separator}" if numbers else ""
                    content.append(f"{path}{separator}{number}{lines[i]}")

    def limited(items: list[str]) -> list[str]:
        items = items[skip:]
        return items[:head_limit] if head_limit is not None and head_limit > 0 else items

    if mode == "content":
        shown_lines = limited(content)
        return "\n".join(shown_lines) if shown_lines else "No matches found"
    if mode == "count":
        rows = limited([f"{path}:{counts[path]}" for path in matched_files])
        return "\n".join(rows) if rows else "No matches found"
    ordered = limited([str(p) for p in _newest_first(matched_files)])
    if not ordered:
        return "No files found"
    return f"Found {len(ordered)} file{'s' if len(ordered) != 1 else ''}\n" + "\n".join(ordered)


async def _grep(arguments: Json, root: Path) -> str:
    return await asyncio.to_thread(_grep_sync, arguments, root)


# --------------------------------------------------------------------------- Bash


def _truncated(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    cut = len(text) - MAX_OUTPUT_CHARS
    return f"{text[:MAX_OUTPUT_CHARS]}\n\n... [{cut} characters truncated] ..."


def _kill_group(process: asyncio.subprocess.Process) -> None:
    # The shell may have exited already while something it started still runs in its group.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _bash(arguments: Json, root: Path) -> str:
    command = _string(arguments, "command")
    if _flag(arguments, "run_in_background"):
        raise ToolExecutionError(
            "run_in_background is not supported: sessionflow runs each command to its end in one tool step"
        )
    timeout_ms = _integer(arguments, "timeout", BASH_DEFAULT_TIMEOUT_MS) or BASH_DEFAULT_TIMEOUT_MS
    timeout = min(max(timeout_ms, 1), BASH_MAX_TIMEOUT_MS) / 1000
    process = await asyncio.create_subprocess_exec(
        "/bin/bash",
        "-c",
        command,
        cwd=root,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        _kill_group(process)
        await process.wait()
        raise ToolExecutionError(f"Command timed out after {timeout:g} s and was killed") from None
    except BaseException:
        # Cancelled (the step timed out or the worker is shutting down): leave nothing running.
        _kill_group(process)
        raise
    finally:
        # A command that left children behind in its group must not outlive the step.
        _kill_group(process)
    out = stdout.decode("utf-8", errors="replace").rstrip("\n")
    err = stderr.decode("utf-8", errors="replace").rstrip("\n")
    text = "\n".join(part for part in (out, err) if part)
    if process.returncode != 0:
        raise ToolExecutionError(_truncated(f"Exit code {process.returncode}\n{text}".rstrip()))
    return _truncated(text)


# --------------------------------------------------------------------------- WebFetch


class _TextExtractor(HTMLParser):
    _SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "head"})
    _BLOCKS = frozenset(
        {
            "p",
            "div",
            "br",
            "li",
            "tr",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "section",
            "article",
            "pre",
            "table",
        }
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIPPED:
            self._skipping += 1
        elif tag in self._BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIPPED and self._skipping:
            self._skipping -= 1
        elif tag in self._BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)

    def text(self) -> str:
        joined = "".join(self.parts)
        lines = (" ".join(line.split()) for line in joined.splitlines())
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def html_to_text(html: str) -> str:
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    return parser.text()


async def _web_fetch(arguments: Json, root: Path) -> str:
    url = _string(arguments, "url")
    prompt = _string(arguments, "prompt", required=False)
    if not url.startswith(("http://", "https://")):
        raise ToolExecutionError("the url must start with http:// or https://")
    try:
        async with (
            httpx.AsyncClient(follow_redirects=True, timeout=30.0) as client,
            client.stream("GET", url, headers={"User-Agent": "sessionflow-webfetch/1"}) as response,
        ):
            if response.status_code >= 400:
                raise ToolExecutionError(f"{url} answered HTTP {response.status_code}")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > FETCH_MAX_BYTES:
                    raise ToolExecutionError(f"{url} is larger than {FETCH_MAX_BYTES} bytes")
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            encoding = response.encoding or "utf-8"
    except httpx.HTTPError as error:
        raise ToolExecutionError(f"could not fetch {url}: {error}") from None
    text = bytes(body).decode(encoding, errors="replace")
    if kind in ("text/html", "application/xhtml+xml") or (not kind and "<html" in text[:1000].lower()):
        text = html_to_text(text)
    elif not (kind.startswith("text/") or kind.endswith(("json", "xml", "javascript")) or not kind):
        raise ToolExecutionError(f"{url} is {kind}, not text; sessionflow's WebFetch returns text only")
    if len(text) > FETCH_MAX_CHARS:
        text = f"{text[:FETCH_MAX_CHARS]}\n\n... [truncated]"
    header = f"Content of {url}"
    if prompt:
        header += f" (fetched as is; apply the request yourself: {prompt})"
    return f"{header}:\n\n{text}"


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
