"""A local MCP server over stdio for the Strands tests: ``python -m tests.adapter_strands.mcp_server``.

Its tools carry MCP annotations (a read, an idempotent write, a destructive write) and log
each real run to ``$MCP_TEST_LOG`` (`InvocationLog`), so a test counts what really ran.
It runs in the Strands environment (mcp 2.1).
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from sessionflow.testing import InvocationLog

server = MCPServer("notes")
log = InvocationLog(os.environ.get("MCP_TEST_LOG", os.devnull))


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def read_note(name: str) -> str:
    """Read a note."""
    log.record("tool", "read_note", note=name)
    return f"note {name}: buy milk"


@server.tool(annotations=ToolAnnotations(idempotent_hint=True, destructive_hint=False))
def tag_note(name: str, tag: str) -> str:
    """Tag a note (tagging twice changes nothing)."""
    log.record("tool", "tag_note", note=name, tag=tag)
    return f"tagged {name} {tag}"


@server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=False))
def delete_note(name: str) -> str:
    """Delete a note."""
    log.record("tool", "delete_note", note=name)
    return f"deleted {name}"


if __name__ == "__main__":
    server.run("stdio")
