"""Verified outcomes for MCP tools: a tool names a verify tool of its own server in its ``_meta``.

The protocol (documented in docs/runner-contract.md, section 6):

- A tool lists ``_meta: {"io.sessionflow/verifyTool": "<tool name>"}``, naming a tool of
  the same server (its MCP name, without any ``tool_prefix``).
- When a call's step died mid-call, the session calls that tool with the write's own
  arguments, and ``_meta`` carrying ``io.sessionflow/idempotencyKey`` (the write's key, the
  one its call carried) and ``io.sessionflow/verifies`` (the write tool's name).
- It answers a JSON object ``{"outcome": "succeeded" | "failed" | "unknown", "output":
  "...", "message": "..."}`` as its ``structuredContent`` or as its text: ``succeeded``
  with ``output`` for the model, ``failed`` with ``message`` (the write did not take
  effect), ``unknown`` with ``message`` as the reason. An error result, a refused call or
  an answer of another shape is ``unknown``; a connection that fails retries the step.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from mcp.types import CallToolResult, TextContent

from sessionflow.session.verify import EffectUnknown, NoEffect, TookEffect, VerifyResult

__all__ = ["META_VERIFIES", "META_VERIFY_TOOL", "verify_result", "verify_tool_name"]

META_VERIFY_TOOL = "io.sessionflow/verifyTool"
"""A tool's ``_meta`` key: the name of the tool of the same server that verifies its calls."""

META_VERIFIES = "io.sessionflow/verifies"
"""The verify call's ``_meta`` key: the name of the tool whose call it checks."""


def verify_tool_name(meta: Mapping[str, Any] | None) -> str | None:
    """The verify tool a tool's ``_meta`` names; None when it names none (or not as text)."""
    name = (meta or {}).get(META_VERIFY_TOOL)
    return name if isinstance(name, str) and name.strip() else None


def verify_result(result: CallToolResult, verify_tool: str, server: str) -> VerifyResult:
    """What the verify tool's answer means (see the module docstring)."""
    what = f"verify tool {verify_tool!r} of MCP server {server!r}"
    text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
    if result.is_error:
        return EffectUnknown(reason=f"{what} reported an error: {text or 'no detail'}")
    answer = _answer(result.structured_content) or _answer(_json(text))
    if answer is None:
        return EffectUnknown(reason=f"{what} did not answer an outcome of succeeded, failed or unknown")
    outcome, output, message = answer
    if outcome == "succeeded":
        return TookEffect(output=output)
    if outcome == "failed":
        return NoEffect(message=message or f"{what} found that the call did not take effect")
    return EffectUnknown(reason=message)


def _json(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _answer(value: object) -> tuple[str, str, str] | None:
    if not isinstance(value, dict):
        return None
    answer = cast(dict[str, Any], value)
    outcome = answer.get("outcome")
    if outcome not in ("succeeded", "failed", "unknown"):
        return None
    return str(outcome), str(answer.get("output") or ""), str(answer.get("message") or "")
