"""A local MCP server over stdio for the adapter tests: ``python -m tests.adapter_openai.mcp_server``.

Its tools carry MCP annotations and log each real run to ``$MCP_TEST_LOG``, with the process
that started the server (``worker``: the one whose SIGKILL ends this server too). A crash
test holds one tool at its gate (`ToolLog.from_env`).
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from tests.crash_tool_log import ToolLog

server = MCPServer("notes")
log = ToolLog.from_env(os.environ.get("MCP_TEST_LOG", os.devnull), os.environ)


@server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
def read_note(name: str) -> str:
    """Read a note."""
    log.record("mcp", "read_note", note=name, worker=os.getppid())
    return f"note {name}: buy milk"


@server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=False))
def delete_note(name: str) -> str:
    """Delete a note."""
    log.record("mcp", "delete_note", note=name, worker=os.getppid())
    return f"deleted {name}"


if __name__ == "__main__":
    server.run("stdio")
