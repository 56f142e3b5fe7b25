"""What a session's settings give the graph: ``config["configurable"]`` and the runtime context.

Settings travel with the message that starts a turn (`AgentTurnContext.session_settings`,
and the same on each of that turn's tool steps)::

    {"langgraph": {"configurable": {"user_id": "u-1"}, "context": {"user_name": "Ada"}}}

``configurable`` is merged into the config of every run of the graph (the thread keys
are sessionflow's), and ``context`` is the run's ``context=`` (LangGraph coerces it to the
graph's ``context_schema``), so ``runtime.context`` and ``config["configurable"]`` are
what they would be in ``graph.ainvoke(..., config, context=...)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from sessionflow import UserError

__all__ = ["CARRY_CONFIG_KEY", "SETTINGS_KEY", "GraphSettings"]

SETTINGS_KEY = "langgraph"
CARRY_CONFIG_KEY = "sessionflow_carry"
"""``config["configurable"]`` key holding the carry a turn started with, under a carry hook."""


@dataclass(frozen=True, kw_only=True)
class GraphSettings:
    configurable: dict[str, Any] = field(default_factory=lambda: {})
    context: Any = None

    @classmethod
    def of(cls, settings: Mapping[str, Any]) -> GraphSettings:
        """The ``langgraph`` section of a turn's settings.

        Raises:
            UserError: The section, or its ``configurable``, is not an object.
        """
        section: object = settings.get(SETTINGS_KEY)
        if section is None:
            return cls()
        if not isinstance(section, Mapping):
            raise UserError(f"settings[{SETTINGS_KEY!r}] must be an object with 'configurable' and 'context'")
        values = cast(Mapping[str, Any], section)
        configurable: object = values.get("configurable") or {}
        if not isinstance(configurable, Mapping):
            raise UserError(f"settings[{SETTINGS_KEY!r}]['configurable'] must be an object")
        return cls(configurable=dict(cast(Mapping[str, Any], configurable)), context=values.get("context"))
