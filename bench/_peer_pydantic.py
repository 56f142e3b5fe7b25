"""Peers: Pydantic AI's own Temporal durability (`pydantic_ai.durable_exec.temporal`), two ways.

- `temporal-agent`: the deprecated `TemporalAgent` wrapper, with `AgentPlugin` on the worker.
- `durability`: the `TemporalDurability` capability that replaces it (pydantic-ai-slim 2.68),
  as the Temporal docs set it up: `Agent(..., capabilities=[TemporalDurability()])`, the agent
  listed in the workflow's `__pydantic_ai_agents__`, and `PydanticAIPlugin` on the client
  registering its activities on the worker.

Runs in the workspace env (pydantic-ai-slim and temporalio from our lock), as
`python -c "import bench._peer_pydantic as p; p.run()" ADDRESS` with `BENCH_PYDANTIC_PEER`
naming the peer (default `temporal-agent`). Line protocol: `bench._peer_loop`. The model is
`BENCH_MODEL_URL` (Chat Completions on the scripted server). Each peer has its own task queue
and workflow type, so two of them on one server never take each other's tasks.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import sys
import warnings
from typing import Any

from temporalio import workflow

# TemporalAgent is deprecated in 2.68 in favour of the TemporalDurability capability; it still works.
warnings.filterwarnings("ignore", message=".*TemporalAgent.*deprecated")

with workflow.unsafe.imports_passed_through():
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.durable_exec.temporal import AgentPlugin, PydanticAIPlugin, TemporalAgent  # pyright: ignore[reportDeprecated]
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

PEER_ENV = "BENCH_PYDANTIC_PEER"
TEMPORAL_AGENT = "temporal-agent"
DURABILITY = "durability"
TASK_QUEUES = {TEMPORAL_AGENT: "peer-temporal-pydantic", DURABILITY: "peer-temporal-pydantic-durability"}
WORKFLOW_ID_PREFIXES = {TEMPORAL_AGENT: "peer-pa", DURABILITY: "peer-pa-durability"}

# Temporal's sandbox runs this module's body again for every workflow run (it is not passed
# through), and building the agent takes ~25 ms of CPU here (model, provider, toolset), so the
# module builds only the agent of the peer this process serves: neither peer's turns pay for
# the other's agent. A process-wide constant, so every run and replay reads the same value.
PEER = os.environ.get(PEER_ENV, TEMPORAL_AGENT)


def _agent(*, durable: bool = False) -> Agent[None, str]:
    """The agent every Pydantic AI variant runs (as `bench.peers` builds it), durable or not."""
    model = OpenAIChatModel(
        "bench-model",
        provider=OpenAIProvider(
            base_url=os.environ.get("BENCH_MODEL_URL", "http://127.0.0.1:1/v1"), api_key="x"
        ),
    )
    capabilities: list[AbstractCapability[Any]] = []
    if durable:
        # Imported here, not above: `bench.peers` starts this peer only when the installed
        # Pydantic AI has the capability, and the TemporalAgent peer must load without it.
        with workflow.unsafe.imports_passed_through():
            from pydantic_ai.durable_exec.temporal import TemporalDurability

        capabilities = [TemporalDurability()]
    agent = Agent(model, name="bench", instructions="You read records.", capabilities=capabilities)

    @agent.tool_plain
    async def read_a(key: str) -> str:
        """Read record A."""
        return f"a:{key}"

    @agent.tool_plain
    async def read_b(key: str) -> str:
        """Read record B."""
        return f"b:{key}"

    return agent


temporal_agent = TemporalAgent(_agent()) if PEER == TEMPORAL_AGENT else None  # pyright: ignore[reportDeprecated]
durable_agent = _agent(durable=True) if PEER == DURABILITY else None


@workflow.defn
class PeerPydanticWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> str:
        assert temporal_agent is not None, f"this worker serves {PEER}"
        result = await temporal_agent.run(prompt)
        return result.output


@workflow.defn
class PeerPydanticDurabilityWorkflow:
    # `PydanticAIPlugin` registers the activities of the agents a workflow lists here (the docs'
    # way; subclassing `PydanticAIWorkflow` would only add a type for this attribute).
    __pydantic_ai_agents__ = [durable_agent] if durable_agent is not None else []

    @workflow.run
    async def run(self, prompt: str) -> str:
        assert durable_agent is not None, f"this worker serves {PEER}"
        result = await durable_agent.run(prompt)
        return result.output


async def main(address: str) -> None:
    from temporalio.client import Client
    from temporalio.worker import Worker

    from bench import _peer_loop

    client = await Client.connect(address, plugins=[PydanticAIPlugin()])
    task_queue = TASK_QUEUES[PEER]
    if temporal_agent is not None:
        worker = Worker(
            client,
            task_queue=task_queue,
            workflows=[PeerPydanticWorkflow],
            plugins=[AgentPlugin(temporal_agent)],
        )
        workflow_run = PeerPydanticWorkflow.run
    else:
        worker = Worker(client, task_queue=task_queue, workflows=[PeerPydanticDurabilityWorkflow])
        workflow_run = PeerPydanticDurabilityWorkflow.run
    versions = {
        name: importlib.metadata.version(name) for name in ("pydantic-ai-slim", "temporalio", "openai")
    }
    async with worker:

        async def run(workflow_id: str) -> str:
            return await client.execute_workflow(
                workflow_run, "read a and b", id=workflow_id, task_queue=task_queue
            )

        await _peer_loop.serve(client, run, WORKFLOW_ID_PREFIXES[PEER], versions)


def run() -> None:
    asyncio.run(main(sys.argv[1]))
