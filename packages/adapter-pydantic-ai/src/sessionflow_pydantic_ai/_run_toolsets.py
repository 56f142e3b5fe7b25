"""Toolsets given at run time, as ``agent.run(toolsets=...)`` gives them, for a session flow.

Plain Pydantic AI adds run-time toolsets to the agent's own for one run. A session makes
one run per model step and per tool step, so the toolsets must reach every one of them,
in every worker: `with_toolsets` wraps the agent so that each of its runs gets them, and
the wrapped agent is what the flow is built from (`pydantic_ai_session_flow(with_toolsets(
agent, [extra]), ...)`). Until the flow takes ``toolsets=`` itself, this is the equivalent.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from pydantic_ai.agent import AbstractAgent, WrapperAgent
from pydantic_ai.run import AgentRun
from pydantic_ai.toolsets import AbstractToolset

__all__ = ["with_toolsets"]


class _WithToolsets(WrapperAgent[Any, Any]):
    """The wrapped agent, every run of it given ``toolsets`` after any the caller gives."""

    def __init__(self, wrapped: AbstractAgent[Any, Any], toolsets: Sequence[AbstractToolset[Any]]) -> None:
        super().__init__(wrapped)
        self._run_toolsets = tuple(toolsets)

    # Pydantic AI's `iter` has dozens of keywords and overloads; only `toolsets` changes here,
    # the rest go through unchanged, so the override takes them as they come.
    @asynccontextmanager
    async def iter(
        self,
        user_prompt: Any = None,
        *,
        toolsets: Sequence[AbstractToolset[Any]] | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[AgentRun[Any, Any]]:
        # The order of `agent.run(toolsets=[extra])`: the run's toolsets after the agent's,
        # the caller's (the adapter's tool sources) first among them.
        combined = [*(toolsets or ()), *self._run_toolsets]
        async with self.wrapped.iter(user_prompt, toolsets=combined, **kwargs) as run:
            yield run


def with_toolsets(
    agent: AbstractAgent[Any, Any], toolsets: Sequence[AbstractToolset[Any]]
) -> AbstractAgent[Any, Any]:
    """``agent`` with ``toolsets`` added to every run, as ``agent.run(toolsets=toolsets)`` adds them.

    Every worker must build the same toolsets, as with the agent's own; a toolset chosen per
    run belongs in a dynamic toolset (``@agent.toolset``), which reads the run's deps.
    """
    return _WithToolsets(agent, toolsets)
