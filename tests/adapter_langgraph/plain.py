"""The plain LangGraph run a session is compared with: one thread, one ``ainvoke`` per message."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph

from sessionflow.demo import RecordedRequest

__all__ = ["SETTINGS", "conversation", "plain_run"]

SETTINGS = {"langgraph": {"configurable": {"user_id": "user_123"}, "context": {"user_name": "Ada"}}}


async def plain_run(
    builder: StateGraph[Any, Any, Any, Any], turns: Sequence[str], settings: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Run the graph as LangGraph's docs do: one thread, one ``ainvoke`` per user message."""
    section: Mapping[str, Any] = (settings or {}).get("langgraph", {})
    graph = builder.compile(checkpointer=InMemorySaver())  # pyright: ignore[reportUnknownMemberType]
    config: Any = {"configurable": {**section.get("configurable", {}), "thread_id": "plain"}}
    for text in turns:
        turn_input = {"messages": [HumanMessage(content=text)]}
        await graph.ainvoke(turn_input, config, context=section.get("context"))  # pyright: ignore[reportUnknownMemberType]
    return dict((await graph.aget_state(config)).values)


def conversation(request: RecordedRequest) -> tuple[Any, Any]:
    """What the model saw: the messages (without IDs the wire does not carry) and the tools offered."""
    return request.body.get("messages"), request.body.get("tools")
