"""An ADK session rebuilt from its events, and one step of ADK's own `Runner` over it.

The durable record is the list of ADK events (the session's own history); the state is
what ADK's session service makes of them (``state_delta`` of each event, ``temp:`` keys
dropped, ``app:``/``user:`` kept by ADK's rules). Each step rebuilds an in-memory session
from the events and resumes the turn's invocation, so nothing lives in a worker.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

from google.adk.agents.base_agent import BaseAgent

# ADK's documented import path; the module does not list it in an `__all__`.
from google.adk.agents.run_config import (
    RunConfig,
    StreamingMode,  # pyright: ignore[reportPrivateImportUsage]
    ToolThreadPoolConfig,
)
from google.adk.apps import App, ResumabilityConfig
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session

from sessionflow_google_adk._step_plugin import StepPlugin

__all__ = ["USER_ID", "dump_event", "load_event", "run_step", "step_run_config"]

USER_ID = "user"


def step_run_config(run_config: RunConfig | None) -> RunConfig:
    """``run_config`` with what a durable step needs, unless it says otherwise:

    - a tool thread pool: ADK runs a sync tool on the event loop by default, which would
      stop the worker's heartbeats (and every other step of the worker) for as long as
      the tool runs;
    - SSE streaming, so the model's partial responses become live text deltas (plain ADK
      does not stream by default).
    """
    config = (run_config or RunConfig()).model_copy()
    # Assigned, not `model_copy(update=...)`: ADK copies a run config by its set fields.
    if config.tool_thread_pool_config is None:
        config.tool_thread_pool_config = ToolThreadPoolConfig()
    if "streaming_mode" not in config.model_fields_set:
        config.streaming_mode = StreamingMode.SSE
    return config


def dump_event(event: Event) -> dict[str, Any]:
    return event.model_dump(mode="json", exclude_none=True, by_alias=True)


def load_event(item: Any) -> Event:
    return Event.model_validate(item)


async def _next_event(run: AsyncGenerator[Event], plugin: StepPlugin) -> Event | None:
    """The run's next event; None when the run ends, or when the plugin cut the step (ADK
    asked for a model call that is the next step's, and waits there: it is cancelled)."""
    following = asyncio.ensure_future(anext(run))
    cut = asyncio.ensure_future(plugin.cut.wait())
    try:
        await asyncio.wait([following, cut], return_when=asyncio.FIRST_COMPLETED)
    finally:
        cut.cancel()
        if not following.done():
            # Cut (or the step itself cancelled): the run stops where it waits, so that
            # closing it afterwards finds it suspended, not running.
            following.cancel()
            await asyncio.wait([following])
    if following.cancelled():
        return None
    try:
        return following.result()
    except StopAsyncIteration:
        return None


async def run_step(
    agent: BaseAgent,
    *,
    app_name: str,
    session_id: str,
    events: Sequence[Event],
    invocation_id: str,
    plugin: StepPlugin,
    run_config: RunConfig,
    on_partial: Callable[[Event], None] | None = None,
) -> tuple[list[Event], Session]:
    """Resume ``invocation_id`` over a session of ``events``; the events ADK yielded (whole
    ones: each partial event goes to ``on_partial``) up to the end of the step (the plugin's
    `StepPlugin.step_done`, or its cut before a model call that is the next step's), and
    the session after them."""
    service = InMemorySessionService()
    session = await service.create_session(app_name=app_name, user_id=USER_ID, session_id=session_id)
    for event in events:
        await service.append_event(session, event.model_copy(deep=True))
    with warnings.catch_warnings():
        # ADK marks resumability experimental; it is how ADK itself resumes an invocation.
        warnings.simplefilter("ignore", UserWarning)
        app = App(
            name=app_name,
            root_agent=agent,
            plugins=[plugin],
            resumability_config=ResumabilityConfig(is_resumable=True),
        )
    runner = Runner(app=app, session_service=service)
    yielded: list[Event] = []
    run = runner.run_async(
        user_id=USER_ID, session_id=session_id, invocation_id=invocation_id, run_config=run_config
    )
    try:
        while (event := await _next_event(run, plugin)) is not None:
            if event.partial:
                if on_partial is not None:
                    on_partial(event)
                continue
            yielded.append(event)
            if plugin.step_done(event):
                break
    finally:
        await run.aclose()
        await runner.close()
    after = await service.get_session(app_name=app_name, user_id=USER_ID, session_id=session_id)
    assert after is not None
    return yielded, after
