"""The serializer of the run state and the carry: LangGraph's strict one, allowing the graph's own types.

The run state and the carry hold LangGraph checkpoints, serialized by `JsonPlusSerializer`.
sessionflow loads them strictly (``allowed_msgpack_modules=None``: LangChain, LangGraph
and standard types only), as LangGraph does with ``LANGGRAPH_STRICT_MSGPACK=true``. In
that mode LangGraph itself allows the types the graph's schemas name (its state, input,
output and context schemas, each node's input and each channel's value type:
``StateGraph.compile``), so a state key of a type of its own (``ModelRouterMiddleware``'s
``ChoiceAnswer``) loads back. The same list is allowed here, for the graph and each of its
subgraphs; a plain run's default serializer allows every type, with a warning.
"""

from __future__ import annotations

from typing import Any, cast

from langgraph._internal._serde import build_serde_allowlist  # LangGraph's strict-mode list; no public name
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph.state import CompiledStateGraph

__all__ = ["graph_serializer"]


def graph_serializer(compiled: CompiledStateGraph[Any, Any, Any, Any]) -> JsonPlusSerializer:
    """A strict serializer that also loads the types named by ``compiled``'s schemas (and its subgraphs')."""
    allowed: set[tuple[str, ...]] = set()
    # get_subgraphs yields Pregel without its type arguments in LangGraph's stubs.
    found: Any = compiled.get_subgraphs(recurse=True)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    subgraphs = cast(list[tuple[str, Any]], list(found))
    graphs: list[Any] = [compiled, *(graph for _, graph in subgraphs)]
    for graph in graphs:
        if isinstance(graph, CompiledStateGraph):
            allowed |= _allowlist(cast(CompiledStateGraph[Any, Any, Any, Any], graph))
    return JsonPlusSerializer(allowed_msgpack_modules=tuple(sorted(allowed)) or None)


def _allowlist(compiled: CompiledStateGraph[Any, Any, Any, Any]) -> set[tuple[str, ...]]:
    builder = compiled.builder
    schemas: list[Any] = [builder.state_schema, builder.input_schema, builder.output_schema]
    if builder.context_schema is not None:
        schemas.append(builder.context_schema)
    schemas += [node.input_schema for node in builder.nodes.values()]
    schemas += [
        branch.input_schema
        for branches in builder.branches.values()
        for branch in branches.values()
        if branch.input_schema is not None
    ]
    channels = cast(dict[str, Any], builder.channels)  # pyright: ignore[reportUnknownMemberType] - unparameterized channels
    return build_serde_allowlist(schemas=schemas, channels=channels)
