"""Pydantic AI adapter for sessionflow: an ordinary `pydantic_ai.Agent` as a durable session.

    flow = pydantic_ai_session_flow(agent, flow_type="Support")

Every model request is one durable step and every tool call its own step; see the
package README for effects, deps, overrides and what is stored.

Names load on first use, so discovering the plugin does not import Pydantic AI.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sessionflow_pydantic_ai._effects import EFFECT_METADATA_KEY
    from sessionflow_pydantic_ai._errors import OutputRejectedError
    from sessionflow_pydantic_ai._execution import current_tool_invocation
    from sessionflow_pydantic_ai._flow import pydantic_ai_session_flow, with_tool_source_policies
    from sessionflow_pydantic_ai._messages import RUN_STATE_VERSION
    from sessionflow_pydantic_ai._models import build_model, model_for_api
    from sessionflow_pydantic_ai._runner import (
        AgentSource,
        DepsFactory,
        InstructionsOverride,
        ModelOverride,
        PydanticAIRunner,
    )

_MODULES = {
    "EFFECT_METADATA_KEY": "_effects",
    "current_tool_invocation": "_execution",
    "pydantic_ai_session_flow": "_flow",
    "with_tool_source_policies": "_flow",
    "RUN_STATE_VERSION": "_messages",
    "OutputRejectedError": "_errors",
    "build_model": "_models",
    "model_for_api": "_models",
    "AgentSource": "_runner",
    "DepsFactory": "_runner",
    "InstructionsOverride": "_runner",
    "ModelOverride": "_runner",
    "PydanticAIRunner": "_runner",
}


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "EFFECT_METADATA_KEY",
    "RUN_STATE_VERSION",
    "AgentSource",
    "DepsFactory",
    "InstructionsOverride",
    "ModelOverride",
    "OutputRejectedError",
    "PydanticAIRunner",
    "build_model",
    "current_tool_invocation",
    "model_for_api",
    "pydantic_ai_session_flow",
    "with_tool_source_policies",
]
