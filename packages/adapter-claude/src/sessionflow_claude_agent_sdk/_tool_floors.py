"""The floors of Claude Code's own tools: those of the sessionflow local tools they stand for.

`Read`, `Grep`, `Glob`, `Write`, `Edit`, `Bash` and `WebFetch` run as arguments mapped
onto the hardened tool runtime (`_builtin_tools`), so each gets the floor of its local
tool twin (`sessionflow_local_tools.LOCAL_TOOL_FLOORS`): reads run freely, `Write` and
`Edit` ask on every call, `Bash` asks unless a shell allow list lifts it.

Only standard library imports: the plugin registers the twins with the framework
(`FrameworkSpec.local_tool_twins`, which the CLI's call policy reads) in every process
that loads sessionflow's plugins.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["LOCAL_TOOL_TWINS"]

LOCAL_TOOL_TWINS: Mapping[str, str] = MappingProxyType(
    {
        "Read": "read_file",
        "Grep": "search_files",
        "Glob": "list_directory",
        "WebFetch": "fetch_web_page",
        "Write": "write_file",
        "Edit": "edit_file",
        "Bash": "run_shell_command",
    }
)
"""Claude Code's tool name -> the sessionflow local tool whose floor it gets."""
