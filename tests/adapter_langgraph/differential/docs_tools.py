"""Tools from LangGraph's and LangChain's docs, each logging its every real run.

The bodies are the docs' (``get_weather`` of the agents quickstart, ``book_hotel`` of the
human-in-the-loop guide, ...); the only addition is one `InvocationLog` line per run, so a
test can say how often a tool really ran in each run.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from sessionflow.testing import InvocationLog

__all__ = ["book_hotel", "divide", "get_weather", "search", "search_flights"]


def _logged(log: InvocationLog, name: str, **arguments: Any) -> None:
    log.record("tool", name, **arguments)


def get_weather(log: InvocationLog) -> BaseTool:
    def get_weather(city: str) -> str:
        """Get weather for a given city."""
        _logged(log, "get_weather", city=city)
        return f"It's always sunny in {city}!"

    return StructuredTool.from_function(get_weather)


def book_hotel(log: InvocationLog) -> BaseTool:
    def book_hotel(hotel_name: str) -> str:
        """Book a hotel."""
        _logged(log, "book_hotel", hotel_name=hotel_name)
        return f"Successfully booked a stay at {hotel_name}."

    return StructuredTool.from_function(book_hotel)


def search(log: InvocationLog) -> BaseTool:
    """The ``search`` tool of LangChain's middleware docs ("Tool call limit")."""

    def search(query: str) -> str:
        """Search the web for a query."""
        _logged(log, "search", query=query)
        return f"Results for: {query}"

    return StructuredTool.from_function(search)


def search_flights(log: InvocationLog) -> BaseTool:
    """A tool whose result is structured (a dict), as a search API answers."""

    def search_flights(destination: str) -> dict[str, Any]:
        """Search flights to a destination."""
        _logged(log, "search_flights", destination=destination)
        return {"destination": destination, "flights": [{"number": "SF101", "price": 120}]}

    return StructuredTool.from_function(search_flights)


def divide(log: InvocationLog) -> BaseTool:
    """Raises on a zero divisor: a plain error, then a `ToolException` for a negative one."""

    def divide(a: float, b: float) -> float:
        """Divide a by b."""
        _logged(log, "divide", a=a, b=b)
        if b < 0:
            raise ToolException("negative divisors are not supported")
        if b == 0:
            raise ValueError("division by zero")
        return a / b

    return StructuredTool.from_function(divide)
