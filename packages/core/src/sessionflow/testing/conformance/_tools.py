"""Tool behaviours of the cases, as neutral `ToolSpec`s whose every real run is logged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessionflow.plugins import ToolInvocation, ToolSpec
from sessionflow.session import SessionRunError, ToolExecutionError
from sessionflow.testing._gates import FileGate, InvocationLog
from sessionflow.testing.conformance._cases import CaseTool

__all__ = ["INVOCATIONS_FILE", "ScriptedCrash", "build_tool", "invocation_log"]

INVOCATIONS_FILE = "invocations.jsonl"


class ScriptedCrash(SessionRunError, RuntimeError):
    """A plain exception a ``crash`` tool raises: the session must treat it as a crash, not a tool error."""


def invocation_log(state_dir: Path) -> InvocationLog:
    """The log every tool run of one case is recorded in (kind ``tool``)."""
    return InvocationLog(state_dir / INVOCATIONS_FILE)


def build_tool(tool: CaseTool, state_dir: Path) -> ToolSpec:
    """The `ToolSpec` for ``tool``; its handler logs the run, then plays the behaviour."""
    log = invocation_log(state_dir)
    behaviour = tool.behaviour

    async def handler(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
        log.record(
            "tool",
            tool.name,
            tool_call_id=invocation.tool_call_id,
            idempotency_key=invocation.idempotency_key,
            attempt=invocation.attempt,
            arguments=arguments,
        )
        match behaviour.kind:
            case "error":
                raise ToolExecutionError(behaviour.message)
            case "crash":
                if invocation.attempt <= behaviour.times:
                    raise ScriptedCrash(f"scripted crash of {tool.name!r} on attempt {invocation.attempt}")
            case "block":
                if invocation.attempt <= behaviour.attempts:
                    await FileGate(state_dir, behaviour.gate).wait_for_release()
            case "return":
                pass
        return behaviour.output()

    return ToolSpec(
        name=tool.name,
        description=tool.description,
        parameters=tool.parameters,
        effect=tool.effect,
        policy=tool.policy,
        handler=handler,
        mcp_annotations=tool.mcp_annotations,
    )
