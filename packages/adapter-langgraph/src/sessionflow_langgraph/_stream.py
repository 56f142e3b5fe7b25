"""What a LangGraph run streams, as session events.

A step streams the graph with ``stream_mode=["messages", "custom"]`` and ``subgraphs=True``:
``messages`` chunks become text and reasoning deltas (`write_deltas`), and whatever a node
or tool hands to ``get_stream_writer()`` becomes one ``custom_event``. Subgraphs are
included because a session has one stream per step: a model inside a subgraph is that
step's model call, and its tokens are the step's text.

A tool call's tool step runs the graph's tool node, streamed with the same modes, so the
node and its tools write ``custom_event``s of that step (`run_in_tool_node`). A call run
directly, outside any graph (no tool node can take it), has no stream writer from
LangGraph (``get_stream_writer()`` raises ``KeyError: '__pregel_runtime'`` there);
`tool_stream_writer` gives it one that writes the same ``custom_event``s.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langgraph._internal._constants import CONFIG_KEY_RUNTIME  # no public name; get_stream_writer reads it
from langgraph.runtime import Runtime
from langgraph.types import StreamMode, StreamPart, StreamWriter

from sessionflow.kit import AgentEventWriter
from sessionflow_langgraph._deltas import write_deltas

__all__ = ["STREAM_MODES", "custom_writer", "tool_stream_writer", "write_stream_part"]

STREAM_MODES: list[StreamMode] = ["messages", "custom"]
"""The stream modes of a step (pass ``subgraphs=True`` and ``version="v2"`` too)."""


def write_stream_part(events: AgentEventWriter, part: StreamPart[Any, Any]) -> None:
    """Publish one part of ``astream(..., stream_mode=STREAM_MODES, version="v2")``."""
    if part["type"] == "messages":
        message, _metadata = part["data"]
        write_deltas(events, message)
    elif part["type"] == "custom":
        events.write_custom_event(part["data"], namespace=list(part["ns"]))


def custom_writer(events: AgentEventWriter, namespace: tuple[str, ...] = ()) -> StreamWriter:
    """A LangGraph `StreamWriter` whose every chunk becomes a ``custom_event``."""

    def write(chunk: Any) -> None:
        events.write_custom_event(chunk, namespace=list(namespace))

    return write


@contextmanager
def tool_stream_writer(events: AgentEventWriter) -> Generator[None]:
    """Let a tool running in its tool step call ``get_stream_writer()``.

    LangChain builds a tool's config on top of the context's, so a runtime placed here
    reaches the tool (sync tools too: they run in a thread with a copy of the context).
    A config passed to the tool with a ``configurable`` of its own replaces this one.
    """
    current: RunnableConfig = var_child_runnable_config.get() or {}
    configurable = {**(current.get("configurable") or {}), CONFIG_KEY_RUNTIME: _runtime(events)}
    token = var_child_runnable_config.set({**current, "configurable": configurable})
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)


def _runtime(events: AgentEventWriter) -> Runtime[Any]:
    return Runtime(stream_writer=custom_writer(events))
