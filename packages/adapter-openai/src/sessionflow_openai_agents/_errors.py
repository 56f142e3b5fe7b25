"""The errors of the OpenAI Agents SDK adapter, within sessionflow's hierarchy."""

from __future__ import annotations

from sessionflow import UnsupportedOptionError, UserError

__all__ = ["AgentGraphError", "UnsupportedAgentOptionError"]


class AgentGraphError(UserError, ValueError):
    """The agent graph cannot run as a durable session (duplicate names, unsupported tools).

    Also a `ValueError`, which it was before it joined the hierarchy.
    """


class UnsupportedAgentOptionError(AgentGraphError, UnsupportedOptionError):
    """A tool, handoff or model of the agent graph the adapter cannot honour, by option name.

    An `AgentGraphError` as before, and the `UnsupportedOptionError` every adapter raises.
    """
