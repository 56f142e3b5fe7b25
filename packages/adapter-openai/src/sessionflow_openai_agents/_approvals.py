"""A function tool's own ``needs_approval`` as the framework's approval of a deferred call.

The gated clone asks for every call (so the session can run each in its own step); the
real tool's setting decides whether the SDK would have stopped this call for a person.
"""

from __future__ import annotations

import inspect
import json
from typing import Any, cast

from agents import FunctionTool, RunContextWrapper

from sessionflow.session import FrameworkApproval

__all__ = ["framework_approval"]


async def framework_approval(
    tool: FunctionTool, context: RunContextWrapper[Any], arguments: str, call_id: str
) -> FrameworkApproval | None:
    """``"required"`` when the tool's ``needs_approval`` asks for this call, else None.

    The callable gets the run context, the parsed arguments and the call ID, as the SDK
    calls it. Arguments that are not a JSON object cannot be shown to it, and the SDK then
    asks for approval; so does this.
    """
    setting = tool.needs_approval
    if isinstance(setting, bool):
        return "required" if setting else None
    parsed = _parsed(arguments)
    if parsed is None:
        return "required"
    answer: Any = setting(context, parsed, call_id)
    if inspect.isawaitable(answer):
        answer = await answer
    return "required" if answer else None


def _parsed(arguments: str) -> dict[str, Any] | None:
    try:
        value: Any = json.loads(arguments) if arguments.strip() else None
    except ValueError:
        return None
    return cast(dict[str, Any], value) if isinstance(value, dict) else None
