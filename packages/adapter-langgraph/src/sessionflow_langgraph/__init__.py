"""LangGraph adapter for sessionflow."""

__all__: list[str] = []
