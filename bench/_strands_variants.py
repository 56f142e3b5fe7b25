# pyright: basic, reportMissingImports=false, reportMissingModuleSource=false, reportUnknownMemberType=false
"""The Strands variants of `bench.peers`: sessionflow and plain Strands, one agent.

Apart from `bench/peers.py` because they run in the Strands environment
(`.sessionflow-test/strands-venv`, see `ci/strands.sh`): the workspace env, which pyright
checks the rest of `bench/` in, has no Strands.
"""

from __future__ import annotations

import importlib.metadata
import time
from typing import Any

from strands import Agent, tool
from strands.models.openai import OpenAIModel


def _agent(model_url: str) -> Agent:
    @tool
    async def read_a(key: str) -> str:
        """Read record A."""
        return f"a:{key}"

    @tool
    async def read_b(key: str) -> str:
        """Read record B."""
        return f"b:{key}"

    model = OpenAIModel(
        client_args={"base_url": model_url, "api_key": "x", "max_retries": 0}, model_id="bench-model"
    )
    return Agent(
        model=model, tools=[read_a, read_b], system_prompt="You read records.", callback_handler=None
    )


async def strands_variant(
    kind: str, model_url: str, flow_type: str, local_options: Any, address: str
) -> tuple[dict[str, str], Any, Any]:
    """(versions, run_turn, burst) for `plain-strands` or `sf-strands`."""
    from bench.peers import _gather_burst, _sessionflow_turns  # pyright: ignore[reportPrivateUsage]

    versions = {n: importlib.metadata.version(n) for n in ("strands-agents", "openai", "temporalio")}
    if kind == "plain-strands":

        async def plain_strands() -> dict[str, Any]:
            # A new agent per turn: a Strands agent holds its conversation, and one turn must
            # not see another's (a durable variant starts one session per turn).
            agent = _agent(model_url)
            start = time.perf_counter_ns()
            result = await agent.invoke_async("read a and b")
            return {"ms": (time.perf_counter_ns() - start) / 1e6, "answer": str(result)}

        return versions, plain_strands, _gather_burst(plain_strands)
    from sessionflow import AgentSessionOptions, ToolEffect, ToolPolicy
    from sessionflow_strands import strands_session_flow

    read = ToolPolicy(effect=ToolEffect.READ)
    flow = strands_session_flow(
        lambda: _agent(model_url),
        flow_type=flow_type,
        options=local_options or AgentSessionOptions(tool_policies={"read_a": read, "read_b": read}),
    )
    return (versions, *await _sessionflow_turns(flow, address))
