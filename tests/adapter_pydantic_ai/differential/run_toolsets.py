"""toolsets.py from Pydantic AI's toolsets docs: a toolset on the agent, and one given at run time.

Copied from pydantic/pydantic-ai at commit 4fda38988f2939fa6ea9cdefcf120693e10ef491
(``docs/toolsets.md``), with the run's scripted model instead of ``TestModel`` and each tool
logging its run. The plain run passes the extra toolset as the docs do,
``agent.run(..., toolsets=[extra_toolset])``; the session's flow is given
``toolsets=[extra_toolset]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from pydantic_ai import Agent, FunctionToolset
from pydantic_ai.agent import AbstractAgent, WrapperAgent
from pydantic_ai.toolsets import AbstractToolset

from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import Built, Models

__all__ = ["plain_run_toolsets", "session_run_toolsets"]


def _agent_and_extra(models: Models, log: InvocationLog) -> tuple[Agent[None, str], FunctionToolset[Any]]:
    def agent_tool() -> str:
        log.record("tool", "agent_tool")
        return "I'm registered directly on the agent"

    def extra_tool() -> str:
        log.record("tool", "extra_tool")
        return "I'm passed as an extra tool for a specific run"

    agent_toolset = FunctionToolset[Any](tools=[agent_tool])
    extra_toolset = FunctionToolset[Any](tools=[extra_tool])
    return Agent(models.model(), toolsets=[agent_toolset]), extra_toolset


class _RunWithToolsets(WrapperAgent[Any, Any]):
    """What the harness's plain run calls ``run`` on: the docs' ``agent.run(..., toolsets=[...])``."""

    def __init__(self, wrapped: AbstractAgent[Any, Any], toolsets: Sequence[AbstractToolset[Any]]) -> None:
        super().__init__(wrapped)
        self._extra = list(toolsets)

    # Only the plain run's call changes; `run`'s many overloads are not repeated here.
    async def run(self, *args: Any, **kwargs: Any) -> Any:
        return await self.wrapped.run(*args, toolsets=self._extra, **kwargs)


def plain_run_toolsets(models: Models, log: InvocationLog) -> Built:
    """The docs' agent, its runs given the extra toolset by ``agent.run``."""
    agent, extra_toolset = _agent_and_extra(models, log)
    # `Built` names `Agent`; the harness only calls `run` and reads `output_type`, which a
    # wrapper agent has too.
    return Built(agent=cast(Agent[Any, Any], _RunWithToolsets(agent, [extra_toolset])))


def session_run_toolsets(models: Models, log: InvocationLog) -> Built:
    """The docs' agent, its session flow given the extra toolset (``toolsets=``)."""
    agent, extra_toolset = _agent_and_extra(models, log)
    return Built(agent=agent, flow_args={"toolsets": [extra_toolset]})
