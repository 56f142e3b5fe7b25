"""Hosted MCP output items in the Responses wire format, for ``ModelReply.output_items``.

The provider runs a hosted MCP server itself: it lists the server's tools, asks for an
approval, or reports the call it made, each as an output item shaped as the OpenAI API
sends it (``openai.types.responses.response_output_item``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["mcp_approval_request", "mcp_call", "mcp_list_tools", "mcp_tool"]


def mcp_tool(
    name: str,
    *,
    description: str | None = None,
    input_schema: Mapping[str, Any] | None = None,
    annotations: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One tool of an ``mcp_list_tools`` item (``annotations`` as MCP's camelCase hints)."""
    return {
        "name": name,
        "description": description,
        "input_schema": dict(input_schema) if input_schema is not None else {"type": "object"},
        "annotations": None if annotations is None else dict(annotations),
    }


def mcp_list_tools(item_id: str, server_label: str, tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The provider's listing of the server's tools."""
    return {
        "id": item_id,
        "type": "mcp_list_tools",
        "server_label": server_label,
        "tools": [dict(tool) for tool in tools],
        "error": None,
    }


def mcp_approval_request(
    item_id: str, server_label: str, name: str, arguments: Mapping[str, Any] | str
) -> dict[str, Any]:
    """The provider asking whether it may call ``name``; answered by ``mcp_approval_response``."""
    return {
        "id": item_id,
        "type": "mcp_approval_request",
        "server_label": server_label,
        "name": name,
        "arguments": _arguments(arguments),
    }


def mcp_call(
    item_id: str,
    server_label: str,
    name: str,
    arguments: Mapping[str, Any] | str,
    *,
    output: str | None = None,
    error: str | None = None,
    approval_request_id: str | None = None,
) -> dict[str, Any]:
    """A call the provider made to the server, with its output (or error)."""
    return {
        "id": item_id,
        "type": "mcp_call",
        "server_label": server_label,
        "name": name,
        "arguments": _arguments(arguments),
        "output": output,
        "error": error,
        "approval_request_id": approval_request_id,
        "status": "failed" if error is not None else "completed",
    }


def _arguments(arguments: Mapping[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(dict(arguments), separators=(",", ":"))
