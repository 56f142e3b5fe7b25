"""The file tools as coroutines: each runs in a thread that stops with its call (`_blocking`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sessionflow_local_tools import _files, _glob, _search, _writes
from sessionflow_local_tools._blocking import Stop, in_thread

__all__ = ["edit_file", "glob_files", "list_directory", "read_file", "search_files", "write_file"]


async def read_file(
    workspace: Path,
    path: str,
    offset: int = 1,
    limit: int = _files.DEFAULT_READ_LINES,
    *,
    numbered: bool = False,
) -> str:
    """Lines ``offset`` (1-based) to ``offset + limit - 1`` of a text file in the workspace.

    ``numbered`` puts each line's number and a tab before it (``cat -n``).
    """
    return await in_thread(
        lambda stop: _files.read_file(stop, workspace, path, offset, limit, numbered=numbered)
    )


async def glob_files(workspace: Path, pattern: str, path: str = ".", *, absolute: bool = False) -> str:
    """Files below ``path`` whose path relative to it matches the glob ``pattern``."""
    return await in_thread(lambda stop: _glob.glob_files(stop, workspace, pattern, path, absolute=absolute))


async def list_directory(workspace: Path, path: str = ".") -> str:
    """The entries of one directory of the workspace, directories marked with a slash."""
    return await in_thread(lambda stop: _files.list_directory(stop, workspace, path))


async def search_files(
    workspace: Path,
    pattern: str,
    path: str = ".",
    *,
    regex: bool = False,
    ignore_case: bool = False,
    include: str | Sequence[str] | None = None,
    max_results: int = _search.DEFAULT_MAX_RESULTS,
    mode: _search.SearchMode = "content",
    absolute: bool = False,
) -> str:
    """Matching lines as ``path:line: text`` (RE2 syntax when ``regex``), then a summary.

    ``mode`` ``files`` or ``count`` lists matching files instead (with their counts).
    """

    def run(stop: Stop) -> str:
        return _search.search_files(
            stop,
            workspace,
            pattern,
            path,
            regex=regex,
            ignore_case=ignore_case,
            include=include,
            max_results=max_results,
            mode=mode,
            absolute=absolute,
        )

    return await in_thread(run)


async def write_file(workspace: Path, path: str, content: str) -> str:
    """Create or replace a file with ``content``, creating missing parent directories."""
    return await in_thread(lambda stop: _writes.write_file(stop, workspace, path, content))


async def edit_file(
    workspace: Path, path: str, old_string: str, new_string: str, *, replace_all: bool = False
) -> str:
    """Replace ``old_string`` with ``new_string`` (exactly once unless ``replace_all``)."""
    return await in_thread(
        lambda stop: _writes.edit_file(stop, workspace, path, old_string, new_string, replace_all=replace_all)
    )
