"""Claude Agent SDK adapter for sessionflow."""

__all__: list[str] = []
