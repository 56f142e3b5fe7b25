"""Plain Python callables as tools: schema from type hints, plus an effect and a policy."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from sessionflow.builtin._schema import parameters_schema
from sessionflow.kit._effect_marks import declared_effect, declared_policy
from sessionflow.kit._tool_output import ToolOutput
from sessionflow.kit._tool_specs import ToolSpec
from sessionflow.session.invocation import ToolInvocation
from sessionflow.session.tools import ToolEffect, ToolPolicy

__all__ = ["tool"]


def tool(
    function: Callable[..., Any],
    *,
    effect: ToolEffect | None = None,
    policy: ToolPolicy | None = None,
    name: str | None = None,
    description: str | None = None,
    needs_approval: bool | Callable[[Mapping[str, Any]], bool] = False,
    pre_approved: bool = False,
) -> ToolSpec:
    """Describe `function` as a tool. A parameter named `invocation` receives the ToolInvocation.

    The function may be sync or async and must return text (or something `str()` renders),
    or a `ToolOutput` to also set keys of the tool state.
    `needs_approval` and `pre_approved` are the tool's own approval rule
    (`ToolSpec.needs_approval`, `ToolSpec.pre_approved`); the session's floor still decides.
    """
    wants_invocation = "invocation" in inspect.signature(function).parameters

    async def handler(arguments: dict[str, Any], invocation: ToolInvocation) -> str | ToolOutput:
        kwargs = dict(arguments)
        if wants_invocation:
            kwargs["invocation"] = invocation
        result = function(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result if isinstance(result, str | ToolOutput) else str(result)

    return ToolSpec(
        name=name or function.__name__,
        description=description or inspect.getdoc(function) or "",
        parameters=parameters_schema(function, skip=frozenset({"invocation"})),
        # Unset here: the function's own mark (`sessionflow.effect`, `@sessionflow.tool_effect`).
        effect=effect if effect is not None else declared_effect(function),
        policy=policy if policy is not None else declared_policy(function),
        handler=handler,
        needs_approval=needs_approval,
        pre_approved=pre_approved,
    )
