"""The tools a framework's own agent tours the workspace with in the CLI's offline demo.

The demo (`sessionflow chat --model demo`) lists the workspace, reads a file and proposes
a write that waits for approval. It calls the CLI's file tools (`list_directory`,
`read_file`, `write_file`) unless the framework replaces them with its own
(`FrameworkSpec.replaced_local_tool_groups`); such a framework names its own tools here
(`FrameworkSpec.demo_tour`), so the demo calls the tools the model really sees.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["DemoTool", "DemoTour"]


@dataclass(frozen=True, kw_only=True)
class DemoTool:
    """One call of the tour, as a tool the framework's model sees.

    Attributes:
        name: The tool's name.
        path_argument: The argument that gets the path (of the workspace for the listing).
        content_argument: The argument that gets the text to write, for the write.
        fixed_arguments: Further arguments sent as they are (such as a glob pattern).
        absolute_paths: Send absolute paths (the workspace joined with the file's name)
            instead of paths relative to the workspace.
    """

    name: str
    path_argument: str
    content_argument: str | None = None
    fixed_arguments: Mapping[str, Any] = field(default_factory=dict[str, Any])
    absolute_paths: bool = False

    def arguments(self, workspace: Path, path: str, content: str | None = None) -> dict[str, Any]:
        """The call's arguments for `path` (relative to `workspace`, `.` for the workspace)."""
        where = str(workspace.joinpath(path)) if self.absolute_paths else path
        arguments: dict[str, Any] = {**self.fixed_arguments, self.path_argument: where}
        if content is not None and self.content_argument is not None:
            arguments[self.content_argument] = content
        return arguments


@dataclass(frozen=True, kw_only=True)
class DemoTour:
    """The three calls of the tour. The demo asks for approval of `write` whatever the
    tool's own policy, so the tour shows an approval on every framework."""

    list: DemoTool
    read: DemoTool
    write: DemoTool
