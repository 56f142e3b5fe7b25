"""The errors of the OpenAI Agents SDK adapter, within sessionflow's hierarchy."""

from __future__ import annotations

from sessionflow.session import UserError

__all__ = ["AgentGraphError"]


class AgentGraphError(UserError, ValueError):
    """The agent graph cannot run as a durable session (duplicate names, unsupported tools).

    Also a `ValueError`, which it was before it joined the hierarchy.
    """
