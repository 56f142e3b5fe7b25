"""Tools of MCP servers for every framework adapter: `McpToolSource`.

Install with ``pip install "sessionflow[mcp]"``. List the servers' tools as neutral
`ToolSpec`s and hand them to an adapter (or the built-in runner); each call then runs
as one durable tool step::

    source = McpToolSource([
        McpServerConfig(name="git", command="mcp-server-git"),
        McpServerConfig(name="docs", url="https://docs.example/mcp", headers={"Authorization": "Bearer ..."}),
    ])
    tools = await source.list_tools()
    runner = ChatCompletionsRunner(model="gpt-4.1", tools=tools)

Effects come from the tools' annotations: ``readOnlyHint`` is a read, ``idempotentHint``
an idempotent write, and a tool that promises neither gets the session's default effect.
A tool whose ``_meta`` names a verify tool of its server (`META_VERIFY_TOOL`) is verified
by it when its step dies mid-call (see `sessionflow.mcp._verify` for the protocol).
"""

try:
    import mcp  # noqa: F401  # pyright: ignore[reportUnusedImport]
except ImportError as _import_error:  # pragma: no cover - exercised in a subprocess without mcp
    raise ImportError(
        'sessionflow.mcp needs the MCP Python SDK (mcp>=2.3): pip install "sessionflow[mcp]"'
    ) from _import_error

from sessionflow.mcp._config import META_EXPECTED_TOOL, META_IDEMPOTENCY_KEY, McpServerConfig
from sessionflow.mcp._errors import McpTransportError, McpUnavailableError
from sessionflow.mcp._pool import McpConnectionPool, shared_pool
from sessionflow.mcp._results import MAX_MEDIA_BYTES, default_media_dir
from sessionflow.mcp._source import (
    AvailabilityListener,
    McpTool,
    McpToolSource,
    input_schema_hash,
)
from sessionflow.mcp._verify import META_VERIFIES, META_VERIFY_TOOL

__all__ = [
    "MAX_MEDIA_BYTES",
    "META_EXPECTED_TOOL",
    "META_IDEMPOTENCY_KEY",
    "META_VERIFIES",
    "META_VERIFY_TOOL",
    "AvailabilityListener",
    "McpConnectionPool",
    "McpServerConfig",
    "McpTool",
    "McpToolSource",
    "McpTransportError",
    "McpUnavailableError",
    "default_media_dir",
    "input_schema_hash",
    "shared_pool",
]
