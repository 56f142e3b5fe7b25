"""Pydantic AI adapter for sessionflow: an ordinary `pydantic_ai.Agent` as a durable session.

    flow = pydantic_ai_session_flow(agent, flow_type="Support")

Every model request is one durable step and every tool call its own step; see the
package README for effects, deps, overrides and what is stored.

Names load on first use, so discovering the plugin does not import Pydantic AI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessionflow.kit import lazy_exports

if TYPE_CHECKING:
    from sessionflow_pydantic_ai._deps import DepsFactory, DepsResources
    from sessionflow_pydantic_ai._effects import EFFECT_METADATA_KEY
    from sessionflow_pydantic_ai._flow import pydantic_ai_session_flow
    from sessionflow_pydantic_ai._history import export_history, export_history_json, history_messages
    from sessionflow_pydantic_ai._messages import RUN_STATE_VERSION
    from sessionflow_pydantic_ai._models import build_model, model_for_api
    from sessionflow_pydantic_ai._runner import (
        AgentSource,
        InstructionsOverride,
        ModelOverride,
        PydanticAIRunner,
    )
    from sessionflow_pydantic_ai._typed_output import read_output

__getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "EFFECT_METADATA_KEY",
    "RUN_STATE_VERSION",
    "AgentSource",
    "DepsFactory",
    "DepsResources",
    "InstructionsOverride",
    "ModelOverride",
    "PydanticAIRunner",
    "build_model",
    "export_history",
    "export_history_json",
    "history_messages",
    "model_for_api",
    "pydantic_ai_session_flow",
    "read_output",
]
