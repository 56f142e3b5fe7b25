"""Neutral `ToolSpec`s (CLI local tools, MCP connector tools) as Pydantic AI tools.

What a spec says beyond its handler is said in Pydantic AI's terms where it has them: a
``needs_approval=True`` is the tool's ``requires_approval``, and the keys a handler sets
(`ToolOutput.state_update`) go into the run's deps when they are a mapping (as the harness
agent's are, `_plugin`), so the next model step and later tools see them through
``ctx.deps`` and the deps travel as they always do (`_deps`). The rest a runner reports on
the deferred call (`spec_asks`): a callable ``needs_approval``, ``pre_approved``, a
``question``, and ``verify``, with the basis it records at deferral.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import replace
from typing import Any, cast

from pydantic_ai import FunctionToolset, RunContext, Tool
from pydantic_core import SchemaValidator, core_schema

from sessionflow.kit import (
    DeferredToolCall,
    ToolSpec,
    current_tool_invocation,
    tool_arguments_object,
    with_tool_asks,
)
from sessionflow_pydantic_ai._effects import EFFECT_METADATA_KEY

__all__ = ["spec_asks", "spec_map", "tool_spec_toolset"]

_OBJECT = SchemaValidator(core_schema.dict_schema(keys_schema=core_schema.str_schema()))


def tool_spec_toolset(specs: Sequence[ToolSpec]) -> FunctionToolset[Any]:
    """One toolset holding every spec, its effect and MCP annotations kept in tool metadata."""
    return FunctionToolset([_tool(spec) for spec in specs])


async def spec_asks(call: DeferredToolCall, spec: ToolSpec | None) -> DeferredToolCall:
    """``call`` with what its spec says about it: the spec's approval rule and question
    (`with_tool_asks`), and, for a spec with a verify, deferred verifiable with its basis."""
    if spec is None:
        return call
    call = with_tool_asks(call, spec)
    if spec.verify is None:
        return call
    arguments = tool_arguments_object(call.arguments)
    basis = await spec.deferral_basis(arguments) if arguments is not None else None
    return replace(call, verifiable=True, verify_basis=basis)


def _tool(spec: ToolSpec) -> Tool[Any]:
    async def run(ctx: RunContext[Any], **arguments: Any) -> str:
        invocation = current_tool_invocation()
        if invocation is None:
            raise RuntimeError(f"tool {spec.name!r} runs only inside a sessionflow tool step")
        output = await spec.call_output(arguments, invocation)
        if output.state_update:
            deps: object = ctx.deps
            if not isinstance(deps, MutableMapping):
                raise TypeError(
                    f"tool {spec.name!r} returned a state update, and the agent's deps are "
                    f"{type(deps).__name__}, not a mapping to set its keys in: "
                    "give the runner a deps_factory that returns a dict"
                )
            # A shallow update, as the builtin runner's tool state; the deps' change reaches
            # the next model step and merges there in model order (`_step_update`).
            cast(MutableMapping[str, Any], deps).update(dict(output.state_update))
        return output.text

    tool: Tool[Any] = Tool.from_schema(
        run, name=spec.name, description=spec.description, json_schema=dict(spec.parameters), takes_ctx=True
    )
    # `from_schema` accepts any JSON; the handler takes an object, so anything else is an
    # argument error the model sees rather than a crash of the tool step.
    tool.function_schema = replace(tool.function_schema, validator=_OBJECT)
    # The spec's own rule, as Pydantic AI says it; a callable rule is decided per call (`spec_asks`).
    tool.requires_approval = spec.needs_approval is True
    metadata: dict[str, Any] = {}
    if spec.effect is not None:
        metadata[EFFECT_METADATA_KEY] = spec.effect.value
    if spec.mcp_annotations is not None:
        metadata["annotations"] = dict(spec.mcp_annotations)
    tool.metadata = metadata or None
    return tool


def spec_map(specs: Sequence[ToolSpec]) -> Mapping[str, ToolSpec]:
    """The specs by name; of two with one name, the first counts (as in the toolset)."""
    found: dict[str, ToolSpec] = {}
    for spec in specs:
        found.setdefault(spec.name, spec)
    return found
