"""The tool step's guard: a LangChain tool runs only the arguments a person approved.

A ``wrap_tool_call`` middleware (or any wrapper around the tool node) may rewrite a call
after the session approved it. LangChain tells callbacks ``on_tool_start`` with the exact
input the tool is about to run, after every wrapper and before the tool's own code; this
handler checks that input against the approval (`check_run_arguments`) and, raising, stops
the tool. The tool step then asks the person again, showing the rewrite as a diff.

Arguments LangGraph injects (``InjectedState``, ``InjectedStore``, ``ToolRuntime``...) are
not the model's and no person saw them, so they are left out of the comparison.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tools import BaseTool

from sessionflow.kit import check_run_arguments, current_tool_invocation
from sessionflow_langgraph._effects import tool_schema

__all__ = ["ApprovedArgumentsGuard"]


class ApprovedArgumentsGuard(BaseCallbackHandler):
    """Refuses, from ``on_tool_start``, a tool input that is not the approved one."""

    raise_error = True  # LangChain swallows a handler's error unless it says so
    run_inline = True  # in the tool's own context, where the current invocation is set

    def __init__(self, tools: Mapping[str, BaseTool]) -> None:
        self._tools = tools
        self._injected: dict[str, set[str]] = {}
        """Per tool name, the arguments LangGraph injects: a tool's schema is read once."""

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        invocation = current_tool_invocation()
        if invocation is None or invocation.approved_digest is None:
            return  # nothing was approved: every tool start but an approved call's is free
        name = str(serialized.get("name") or "")
        arguments: Any = inputs if inputs is not None else input_str
        if isinstance(arguments, Mapping):
            injected = self._injected_into(name)
            arguments = {k: v for k, v in cast(Mapping[str, Any], arguments).items() if k not in injected}
        check_run_arguments(arguments, tool_name=name or None)

    def _injected_into(self, name: str) -> set[str]:
        """The arguments LangGraph injects into the tool ``name`` (none for an unknown tool)."""
        injected = self._injected.get(name)
        if injected is None:
            tool = self._tools.get(name)
            injected = set(tool.args) - set(_model_visible(tool)) if tool is not None else set[str]()
            self._injected[name] = injected
        return injected


def _model_visible(tool: BaseTool) -> list[str]:
    """The argument names the model is offered (injected ones are not)."""
    return list(cast(Mapping[str, Any], tool_schema(tool).get("properties") or {}))
