"""The built-in, framework-free runner for OpenAI-compatible Chat Completions endpoints."""

from sessionflow.builtin._runner import ChatCompletionsRunner, ModelHTTPError
from sessionflow.builtin._tool_state import tool_state
from sessionflow.builtin._tools import tool
from sessionflow.tool_asks import question_tool

__all__ = ["ChatCompletionsRunner", "ModelHTTPError", "question_tool", "tool", "tool_state"]
