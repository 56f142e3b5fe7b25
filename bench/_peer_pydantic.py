"""Peer: Pydantic AI's own Temporal durability (`pydantic_ai.durable_exec.temporal`).

Runs in the workspace env (pydantic-ai-slim and temporalio from our lock), as
`python -c "import bench._peer_pydantic as p; p.run()" ADDRESS`. Line protocol: `bench._peer_loop`. The model is `BENCH_MODEL_URL` (Chat Completions on the scripted server).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import sys
import warnings

from temporalio import workflow

# TemporalAgent is deprecated in 2.68 in favour of the TemporalDurability capability; it still works.
warnings.filterwarnings("ignore", message=".*TemporalAgent.*deprecated")

with workflow.unsafe.imports_passed_through():
    from pydantic_ai import Agent
    from pydantic_ai.durable_exec.temporal import AgentPlugin, PydanticAIPlugin, TemporalAgent  # pyright: ignore[reportDeprecated]
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

TASK_QUEUE = "peer-temporal-pydantic"


def _agent() -> Agent[None, str]:
    model = OpenAIChatModel(
        "bench-model",
        provider=OpenAIProvider(
            base_url=os.environ.get("BENCH_MODEL_URL", "http://127.0.0.1:1/v1"), api_key="x"
        ),
    )
    agent = Agent(model, name="bench", instructions="You read records.")

    @agent.tool_plain
    async def read_a(key: str) -> str:
        """Read record A."""
        return f"a:{key}"

    @agent.tool_plain
    async def read_b(key: str) -> str:
        """Read record B."""
        return f"b:{key}"

    return agent


temporal_agent = TemporalAgent(_agent())  # pyright: ignore[reportDeprecated]


@workflow.defn
class PeerPydanticWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> str:
        result = await temporal_agent.run(prompt)
        return result.output


async def main(address: str) -> None:
    from temporalio.client import Client
    from temporalio.worker import Worker

    from bench import _peer_loop

    client = await Client.connect(address, plugins=[PydanticAIPlugin()])
    worker = Worker(
        client, task_queue=TASK_QUEUE, workflows=[PeerPydanticWorkflow], plugins=[AgentPlugin(temporal_agent)]
    )
    versions = {
        name: importlib.metadata.version(name) for name in ("pydantic-ai-slim", "temporalio", "openai")
    }
    async with worker:

        async def run(workflow_id: str) -> str:
            return await client.execute_workflow(
                PeerPydanticWorkflow.run, "read a and b", id=workflow_id, task_queue=TASK_QUEUE
            )

        await _peer_loop.serve(client, run, "peer-pa", versions)


def run() -> None:
    asyncio.run(main(sys.argv[1]))
