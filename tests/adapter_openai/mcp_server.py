"""A local MCP server over stdio for the adapter tests: ``python -m tests.adapter_openai.mcp_server``.

Its tools carry MCP annotations and log each real run to ``$MCP_TEST_LOG``.
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from sessionflow.testing import InvocationLog

server = MCPServer("notes")
log = InvocationLog(os.environ.get("MCP_TEST_LOG", os.devnull))


@server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
def read_note(name: str) -> str:
    """Read a note."""
    log.record("mcp", "read_note", note=name)
    return f"note {name}: buy milk"


@server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=False))
def delete_note(name: str) -> str:
    """Delete a note."""
    log.record("mcp", "delete_note", note=name)
    return f"deleted {name}"


if __name__ == "__main__":
    server.run("stdio")
