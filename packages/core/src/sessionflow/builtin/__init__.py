"""The built-in, framework-free runner for OpenAI-compatible Chat Completions endpoints.

The names below load on first use (`sessionflow.kit.lazy_exports`): plugin discovery
imports this package for `sessionflow.builtin._plugin`, and listing the framework needs
neither the runner nor httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessionflow.kit._lazy import lazy_exports

if TYPE_CHECKING:
    from sessionflow.builtin._runner import ChatCompletionsRunner, ModelHTTPError
    from sessionflow.builtin._tool_state import tool_state
    from sessionflow.builtin._tools import tool

__getattr__, __dir__ = lazy_exports(__name__)

# `question_tool` works with every runner: it is public in `sessionflow.kit`.
__all__ = ["ChatCompletionsRunner", "ModelHTTPError", "tool", "tool_state"]
