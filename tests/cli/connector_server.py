"""An MCP server (stdio) whose tools name a connector, connection and operation in ``_meta``.

``python -m tests.cli.connector_server``: GitHub-like and Slack-like tools on two
connections, and one tool without those keys, for the ``enabled`` filter of the CLI.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)


def _meta(connector: str, connection: str, operation: str) -> dict[str, Any]:
    return {
        "io.sessionflow/connector": connector,
        "io.sessionflow/connection": connection,
        "io.sessionflow/operation": operation,
    }


def build() -> MCPServer:
    server = MCPServer("sessionflow-connector-fixture", version="1.0")

    @server.tool(annotations=READ_ONLY, meta=_meta("github", "work", "list_issues"))
    def list_work_issues(repo: str) -> str:
        """List the open issues of a repository (work account)."""
        return f"no open issues in {repo}"

    @server.tool(meta=_meta("github", "work", "create_issue"))
    def create_work_issue(repo: str, title: str) -> str:
        """Open an issue (work account)."""
        return f"opened {title!r} in {repo}"

    @server.tool(annotations=READ_ONLY, meta=_meta("github", "personal", "list_issues"))
    def list_personal_issues(repo: str) -> str:
        """List the open issues of a repository (personal account)."""
        return f"no open issues in {repo}"

    @server.tool(annotations=READ_ONLY, meta=_meta("slack", "team", "read_channel"))
    def read_channel(channel: str) -> str:
        """Read the latest messages of a channel."""
        return f"nothing new in {channel}"

    @server.tool(annotations=READ_ONLY)
    def ping() -> str:
        """Answer pong."""
        return "pong"

    return server


if __name__ == "__main__":
    build().run("stdio")
