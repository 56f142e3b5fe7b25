"""Tools of LangGraph's multi-agent docs and of langgraph-supervisor's and langgraph-swarm's READMEs.

The bodies are the docs' (``add``, ``multiply`` and ``web_search`` of the supervisor README,
``book_flight`` and ``book_hotel`` of LangGraph's "Multi-agent systems" handoffs, and its
hand-written handoff tool); the only addition is one `InvocationLog` line per run of a tool
that does the work, so a test can say how often it really ran.
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool, tool
from langgraph.graph import MessagesState
from langgraph.prebuilt import InjectedState
from langgraph.types import Command

from sessionflow.testing import InvocationLog

__all__ = ["add", "book_flight", "book_hotel_for", "create_handoff_tool", "multiply", "web_search"]

FAANG_HEADCOUNTS = (
    "Here are the headcounts for each of the FAANG companies in 2024:\n"
    "1. **Facebook (Meta)**: 67,317 employees.\n"
    "2. **Apple**: 164,000 employees.\n"
    "3. **Amazon**: 1,551,000 employees.\n"
    "4. **Netflix**: 14,000 employees.\n"
    "5. **Google (Alphabet)**: 181,269 employees."
)


def add(log: InvocationLog) -> BaseTool:
    def add(a: float, b: float) -> float:
        """Add two numbers."""
        log.record("tool", "add", a=a, b=b)
        return a + b

    return StructuredTool.from_function(add)


def multiply(log: InvocationLog) -> BaseTool:
    def multiply(a: float, b: float) -> float:
        """Multiply two numbers."""
        log.record("tool", "multiply", a=a, b=b)
        return a * b

    return StructuredTool.from_function(multiply)


def web_search(log: InvocationLog) -> BaseTool:
    def web_search(query: str) -> str:
        """Search the web for information."""
        log.record("tool", "web_search", query=query)
        return FAANG_HEADCOUNTS

    return StructuredTool.from_function(web_search)


def book_flight(log: InvocationLog) -> BaseTool:
    def book_flight(from_airport: str, to_airport: str) -> str:
        """Book a flight"""
        log.record("tool", "book_flight", from_airport=from_airport, to_airport=to_airport)
        return f"Successfully booked a flight from {from_airport} to {to_airport}."

    return StructuredTool.from_function(book_flight)


def book_hotel_for(log: InvocationLog) -> BaseTool:
    def book_hotel(hotel_name: str) -> str:
        """Book a hotel"""
        log.record("tool", "book_hotel", hotel_name=hotel_name)
        return f"Successfully booked a stay at {hotel_name}."

    return StructuredTool.from_function(book_hotel)


def create_handoff_tool(*, agent_name: str, description: str | None = None) -> BaseTool:
    """LangGraph's "Multi-agent systems" handoff tool, as the docs write it."""
    name = f"transfer_to_{agent_name}"
    description = description or f"Transfer to {agent_name}"

    @tool(name, description=description)
    def handoff_tool(
        state: Annotated[MessagesState, InjectedState],
        tool_call_id: Annotated[str, InjectedToolCallId],
    ) -> Command[Any]:
        tool_message = {
            "role": "tool",
            "content": f"Successfully transferred to {agent_name}",
            "name": name,
            "tool_call_id": tool_call_id,
        }
        return Command(
            goto=agent_name,
            update={"messages": state["messages"] + [tool_message]},
            graph=Command.PARENT,
        )

    return handoff_tool
