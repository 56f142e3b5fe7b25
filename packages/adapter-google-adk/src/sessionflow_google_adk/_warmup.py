"""One offline run of ADK's pipeline when a worker starts, not during its first step.

ADK and google-genai import modules and build pydantic schemas on first use. The first
model step of a process then holds the event loop for seconds (far more on a busy
machine), misses heartbeats and is timed out and retried. A run of a throwaway agent whose
model call is replaced by a plugin (no network, none of the user's callbacks or tools)
moves that cost to start-up.
"""

from __future__ import annotations

import contextlib

from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig
from google.adk.events.event import Event
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from sessionflow_google_adk._adk_session import run_step
from sessionflow_google_adk._step_plugin import StepPlugin

__all__ = ["warm_up"]


async def warm_up(agent: LlmAgent, run_config: RunConfig) -> None:
    model = agent.canonical_model
    with contextlib.suppress(Exception):
        # The model's HTTP client (google-genai's, with its transport); it may lack a key here.
        _ = getattr(model, "api_client", None)
    throwaway = LlmAgent(name="sessionflow_warmup", model=model, instruction="warm-up")
    answer = types.Content(role="model", parts=[types.Part(text="ready")])
    user = Event(
        author="user",
        invocation_id="e-warmup",
        content=types.Content(role="user", parts=[types.Part(text="hi")]),
    )
    await run_step(
        throwaway,
        app_name="sessionflow-warmup",
        session_id="warmup",
        events=[user],
        invocation_id="e-warmup",
        plugin=StepPlugin(replay=LlmResponse(content=answer)),
        run_config=run_config,
    )
