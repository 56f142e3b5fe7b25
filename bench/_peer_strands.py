# pyright: basic, reportMissingImports=false, reportMissingModuleSource=false, reportUnknownMemberType=false
"""Peer: Temporal's own Strands Agents integration (`temporalio-strands-agents`,
`temporalio.strands_agents`).

Runs in an isolated env made by `bench.peers` (never the workspace lock), with the
strands-agents version of the Strands environment (`ci/strands.sh`) and its `[openai]`
extra (which pins openai below 3, so this env's openai is 2.x where the others' is 3.x).
Line protocol: `bench/_peer_loop.py`, imported from this script's folder. The model is
Strands' `OpenAIModel` on the scripted server (`BENCH_MODEL_URL`, Chat Completions).

The agent is the one the other Strands variants run (`read_a`, `read_b`, same system prompt),
laid out as the integration's README does it: `TemporalAgent` runs each model call as an
activity through the plugin's model registry, and each tool is an activity wrapped with
`workflow.activity_as_tool`, so a turn has the shape of the other durable variants: model
activity -> two parallel tool activities -> model activity. The client's retries are off, as
the README asks, so that Temporal owns them.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import sys
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.strands_agents import TemporalAgent
from temporalio.strands_agents import workflow as strands_workflow

TASK_QUEUE = "peer-temporal-strands"


@activity.defn
async def read_a(key: str) -> str:
    """Read record A."""
    return f"a:{key}"


@activity.defn
async def read_b(key: str) -> str:
    """Read record B."""
    return f"b:{key}"


@workflow.defn
class PeerStrandsWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> str:
        agent = TemporalAgent(
            model="bench",
            start_to_close_timeout=timedelta(seconds=60),
            tools=[
                strands_workflow.activity_as_tool(read_a, start_to_close_timeout=timedelta(seconds=30)),
                strands_workflow.activity_as_tool(read_b, start_to_close_timeout=timedelta(seconds=30)),
            ],
            system_prompt="You read records.",
            callback_handler=None,
        )
        result = await agent.invoke_async(prompt)
        return str(result)


async def main(address: str) -> None:
    import _peer_loop  # pyright: ignore[reportMissingImports]  # the script's own folder
    from strands.models.openai import OpenAIModel
    from temporalio.client import Client
    from temporalio.strands_agents import StrandsPlugin
    from temporalio.worker import Worker

    model_url = os.environ["BENCH_MODEL_URL"]

    def bench_model() -> OpenAIModel:
        return OpenAIModel(
            client_args={"base_url": model_url, "api_key": "x", "max_retries": 0}, model_id="bench-model"
        )

    client = await Client.connect(address)
    worker = Worker(
        client,
        task_queue=TASK_QUEUE,
        workflows=[PeerStrandsWorkflow],
        activities=[read_a, read_b],
        plugins=[StrandsPlugin(models={"bench": bench_model})],
    )
    versions = {
        name: importlib.metadata.version(name)
        for name in ("temporalio-strands-agents", "temporalio", "strands-agents", "openai")
    }
    async with worker:

        async def run(workflow_id: str) -> str:
            return await client.execute_workflow(
                PeerStrandsWorkflow.run, "read a and b", id=workflow_id, task_queue=TASK_QUEUE
            )

        await _peer_loop.serve(client, run, "peer-strands", versions)


if __name__ == "__main__":
    # Import through the module name so the workflow sandbox can re-import it (not __main__).
    import _peer_strands  # pyright: ignore[reportMissingImports]

    asyncio.run(_peer_strands.main(sys.argv[1]))
