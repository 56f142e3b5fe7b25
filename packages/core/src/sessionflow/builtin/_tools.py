"""Plain Python callables as tools: a pydantic model of the parameters, plus an effect and a policy."""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import pydantic

from sessionflow.builtin._schema import tool_arguments
from sessionflow.kit._effect_marks import declared_effect, declared_policy
from sessionflow.kit._tool_output import ToolOutput
from sessionflow.kit._tool_specs import ToolSpec
from sessionflow.session.invocation import ToolInvocation
from sessionflow.session.tools import ToolEffect, ToolExecutionError, ToolPolicy

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

    The parameters' type hints give the JSON schema the model sees, and the model's
    arguments are validated and converted to them before the call (pydantic): str, int,
    float, bool, Enum, Literal, dataclasses, TypedDict, pydantic models, `X | None`,
    unions, lists, tuples, sets and dicts of these, and more. A default makes a parameter
    optional; `Annotated[x, "text"]` or `Annotated[x, pydantic.Field(description="text")]`
    describes it. Arguments that do not fit reach the model as a tool error
    (`ToolExecutionError`) naming each wrong field; the function is not called.

    The function may be sync (it runs in a thread, `asyncio.to_thread`, so it never
    blocks the worker's event loop) or async, and must return text (or something `str()`
    renders), or a `ToolOutput` to also set keys of the tool state.
    `needs_approval` and `pre_approved` are the tool's own approval rule
    (`ToolSpec.needs_approval`, `ToolSpec.pre_approved`); the session's floor still decides.

    Raises:
        TypeError: A parameter's type has no JSON schema.
    """
    tool_name = name or function.__name__
    wants_invocation = "invocation" in inspect.signature(function).parameters
    parameters = tool_arguments(function, skip=frozenset({"invocation"}))
    is_async = inspect.iscoroutinefunction(function)

    async def handler(arguments: dict[str, Any], invocation: ToolInvocation) -> str | ToolOutput:
        try:
            kwargs = parameters.validate(arguments)
        except pydantic.ValidationError as error:
            raise ToolExecutionError(_invalid_arguments(tool_name, error)) from None
        if wants_invocation:
            kwargs["invocation"] = invocation
        if is_async:
            result = await function(**kwargs)
        else:
            result = await asyncio.to_thread(functools.partial(function, **kwargs))
            if inspect.isawaitable(result):  # a sync function that returns an awaitable
                result = await result
        return result if isinstance(result, str | ToolOutput) else str(result)

    return ToolSpec(
        name=tool_name,
        description=description or inspect.getdoc(function) or "",
        parameters=parameters.schema,
        # Unset here: the function's own mark (`sessionflow.effect`, `@sessionflow.tool_effect`).
        effect=effect if effect is not None else declared_effect(function),
        policy=policy if policy is not None else declared_policy(function),
        handler=handler,
        needs_approval=needs_approval,
        pre_approved=pre_approved,
    )


def _invalid_arguments(tool_name: str, error: pydantic.ValidationError) -> str:
    """One line per wrong field: where, what is wrong, and what was given."""
    lines = [f"invalid arguments for tool {tool_name!r}:"]
    for problem in error.errors(include_url=False):
        where = ".".join(str(part) for part in problem["loc"]) or "(arguments)"
        given = "" if problem["type"] == "missing" else f" (got {problem['input']!r:.200})"
        lines.append(f"- {where}: {problem['msg']}{given}")
    return "\n".join(lines)
