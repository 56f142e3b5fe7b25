"""Model settings for one turn: what `agent.run(..., model_settings=...)` gives one plain run.

Pydantic AI merges a request's settings from layers, later ones winning: the model's own
settings, the agent's `model_settings` (static, or a function of the `RunContext`), the
capabilities', and the run's. A session runs each request in a model step of its own and
cannot pass a run's settings there, so the turn's settings go in through
`Agent.override(model_settings=...)`, which replaces the agent's layer (and drops the run's):
the override is the agent's layer with the turn's merged over it, so the agent's settings
still apply where the turn does not say otherwise. One difference remains: a capability's
settings now come after the turn's, where Pydantic AI puts them before a run's.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeAlias

from pydantic_ai import Agent, RunContext
from pydantic_ai.agent import AbstractAgent, AgentModelSettings, WrapperAgent
from pydantic_ai.settings import ModelSettings, merge_model_settings

from sessionflow.kit import AgentTurnContext

__all__ = ["ModelSettingsOption", "model_settings_for", "turn_model_settings"]

ModelSettingsOption: TypeAlias = "ModelSettings | Callable[[AgentTurnContext], ModelSettings | None]"
"""Settings for every turn, or a function choosing them per turn (None or empty: the agent's)."""


def model_settings_for(option: ModelSettingsOption | None, turn: AgentTurnContext) -> ModelSettings | None:
    """The settings of `turn`: the run's `model_settings` of the plain run it stands for."""
    settings = option(turn) if callable(option) else option
    return settings or None


def turn_model_settings(
    agent: AbstractAgent[Any, Any], option: ModelSettingsOption | None, turn: AgentTurnContext
) -> AbstractContextManager[None]:
    """Apply the turn's settings to the model step run inside the block.

    `Agent.override` is context-local, so concurrent steps of other sessions keep their own.
    """
    settings = model_settings_for(option, turn)
    if settings is None:
        return nullcontext()
    return agent.override(model_settings=over_agent_settings(_agent_layer(agent), settings))


def over_agent_settings(
    agent_settings: AgentModelSettings[Any] | None, turn_settings: ModelSettings
) -> AgentModelSettings[Any]:
    """The agent's layer with the turn's merged over it.

    Static when the agent's is static, so Pydantic AI validates it up front as it validates
    a run's static settings (a forcing `tool_choice`, for one); a function of the
    `RunContext` when the agent's is one, called per request as the agent's would be.
    """
    if not callable(agent_settings):
        merged = merge_model_settings(agent_settings, turn_settings)
        return merged if merged is not None else turn_settings
    dynamic = agent_settings

    def per_request(ctx: RunContext[Any]) -> ModelSettings:
        merged = merge_model_settings(dynamic(ctx), turn_settings)
        return merged if merged is not None else turn_settings

    return per_request


def _agent_layer(agent: AbstractAgent[Any, Any]) -> AgentModelSettings[Any] | None:
    """The agent's own `model_settings`, through any wrappers (which have none of their own)."""
    while isinstance(agent, WrapperAgent):
        agent = agent.wrapped
    return agent.model_settings if isinstance(agent, Agent) else None
