# pyright: basic, reportMissingImports=false, reportMissingModuleSource=false, reportUnknownMemberType=false
"""Peer: the official Temporal plugin for the OpenAI Agents SDK (`temporalio-openai-agents`).

Runs in an isolated env made by `bench.peers` (never the workspace lock). Line protocol on
stdin/stdout: `bench/_peer_loop.py`, imported from this script's folder. The model is `OPENAI_BASE_URL` (the scripted server).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import sys
from datetime import timedelta

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():
    from agents import Agent, Runner

from temporalio.openai_agents import workflow as oa_workflow

TASK_QUEUE = "peer-temporal-openai"


@activity.defn
async def read_a(key: str) -> str:
    """Read record A."""
    return f"a:{key}"


@activity.defn
async def read_b(key: str) -> str:
    """Read record B."""
    return f"b:{key}"


@workflow.defn
class PeerOpenAIWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> str:
        agent = Agent(
            name="bench",
            instructions="You read records.",
            model="bench-model",
            tools=[
                oa_workflow.activity_as_tool(read_a, start_to_close_timeout=timedelta(seconds=30)),
                oa_workflow.activity_as_tool(read_b, start_to_close_timeout=timedelta(seconds=30)),
            ],
        )
        result = await Runner.run(agent, prompt)
        return str(result.final_output)


async def main(address: str) -> None:
    import _peer_loop  # pyright: ignore[reportMissingImports]  # the script's own folder
    from temporalio.client import Client
    from temporalio.openai_agents import ModelActivityParameters, OpenAIAgentsPlugin
    from temporalio.worker import Worker

    plugin = OpenAIAgentsPlugin(
        model_params=ModelActivityParameters(start_to_close_timeout=timedelta(seconds=60))
    )
    client = await Client.connect(address, plugins=[plugin])
    worker = Worker(
        client, task_queue=TASK_QUEUE, workflows=[PeerOpenAIWorkflow], activities=[read_a, read_b]
    )
    versions = {
        name: importlib.metadata.version(name)
        for name in ("temporalio-openai-agents", "temporalio", "openai-agents", "openai")
    }
    async with worker:

        async def run(workflow_id: str) -> str:
            return await client.execute_workflow(
                PeerOpenAIWorkflow.run, "read a and b", id=workflow_id, task_queue=TASK_QUEUE
            )

        await _peer_loop.serve(client, run, "peer-oa", versions)


if __name__ == "__main__":
    # Import through the module name so the workflow sandbox can re-import it (not __main__).
    import _peer_openai  # pyright: ignore[reportMissingImports]

    asyncio.run(_peer_openai.main(sys.argv[1]))
