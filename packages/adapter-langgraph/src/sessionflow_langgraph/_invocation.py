"""The tool invocation running now, for tools that need their idempotency key.

The core keeps the one current invocation (the tool activity sets it); this module keeps
the adapter's old import path. LangChain runs sync tools in a thread with a copy of the
context, so they see it too::

    @tool
    def upsert(doc: str) -> str:
        invocation = current_tool_invocation()
        key = invocation.idempotency_key if invocation else None
        ...
"""

from __future__ import annotations

from sessionflow.kit import current_tool_invocation

__all__ = ["current_tool_invocation"]
