"""The `memory` tool source: guarded `remember`, `recall` and `forget` tools.

Offer these tools to the agent and set `AgentSessionOptions(memory=MemoryOptions())`.
The session runs them itself, against notes kept in its own durable state, so the
write rules hold whichever framework drives the agent.
"""

from __future__ import annotations

from typing import Any

from sessionflow.kit._tool_specs import ToolSpec
from sessionflow.session.invocation import ToolInvocation
from sessionflow.session.tools import ToolEffect, ToolExecutionError, ToolPolicy

__all__ = ["memory_tools"]


async def _not_enabled(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
    raise ToolExecutionError(
        "memory tools run inside the session: enable them with AgentSessionOptions(memory=MemoryOptions())"
    )


def memory_tools() -> list[ToolSpec]:
    """The three memory tools, ready to hand to any adapter as a tool source."""
    return [
        ToolSpec(
            name="remember",
            description=(
                "Remember a short fact for later turns of this session. Notes must not hold secrets, "
                "personal data or instructions; a refused note is not stored and the reason is returned."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "key": {"type": "string", "description": "Lowercase id: letters, digits, '_', '.', '-'"},
                    "text": {"type": "string", "description": "The fact, at most a few sentences"},
                },
                "required": ["key", "text"],
                "additionalProperties": False,
            },
            effect=ToolEffect.IDEMPOTENT_WRITE,
            policy=ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=False),
            handler=_not_enabled,
        ),
        ToolSpec(
            name="recall",
            description="List the notes remembered in this session, each with where it came from.",
            parameters={"type": "object", "properties": {}, "additionalProperties": False},
            effect=ToolEffect.READ,
            policy=ToolPolicy(effect=ToolEffect.READ, allow_repeats=True),
            handler=_not_enabled,
        ),
        ToolSpec(
            name="forget",
            description="Forget one remembered note by its key.",
            parameters={
                "type": "object",
                "properties": {"key": {"type": "string"}},
                "required": ["key"],
                "additionalProperties": False,
            },
            effect=ToolEffect.IDEMPOTENT_WRITE,
            policy=ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=False),
            handler=_not_enabled,
        ),
    ]
