# pyright: basic, reportMissingImports=false, reportMissingModuleSource=false, reportUnknownMemberType=false
"""Peer: the official Temporal plugin for the OpenAI Agents SDK (`temporalio-openai-agents`).

Runs in an isolated env made by `bench.peers` (never the workspace lock). Line protocol on
stdin/stdout: prints one JSON `ready` line (versions), then answers each `turn` line with one
JSON line {"ms", "events", "bytes"}, and each `burst N` line with {"seconds", "turns", "ok", "rss_kib"}. The model is `OPENAI_BASE_URL` (the scripted server).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sys
import time
import uuid
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
    from temporalio.client import Client
    from temporalio.openai_agents import ModelActivityParameters, OpenAIAgentsPlugin
    from temporalio.worker import Worker

    plugin = OpenAIAgentsPlugin(model_params=ModelActivityParameters(start_to_close_timeout=timedelta(seconds=60)))
    client = await Client.connect(address, plugins=[plugin])
    worker = Worker(client, task_queue=TASK_QUEUE, workflows=[PeerOpenAIWorkflow], activities=[read_a, read_b])
    versions = {
        name: importlib.metadata.version(name) for name in ("temporalio-openai-agents", "temporalio", "openai-agents", "openai")
    }
    async with worker:
        print(json.dumps({"ready": True, "versions": versions}), flush=True)
        loop = asyncio.get_running_loop()
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line or line.strip() == "quit":
                return
            if line.startswith("burst "):
                print(json.dumps(await burst(client, int(line.split()[1]))), flush=True)
                continue
            workflow_id = f"peer-oa-{uuid.uuid4().hex[:12]}"
            start = time.perf_counter_ns()
            answer = await client.execute_workflow(
                PeerOpenAIWorkflow.run, "read a and b", id=workflow_id, task_queue=TASK_QUEUE
            )
            ms = (time.perf_counter_ns() - start) / 1e6
            info = (await client.get_workflow_handle(workflow_id).describe()).raw_description.workflow_execution_info
            out = {"ms": ms, "events": info.history_length, "bytes": info.history_size_bytes, "answer": answer}
            print(json.dumps(out), flush=True)


async def burst(client, count: int) -> dict:
    """`count` turns at once on this process's worker (throughput); answers checked after."""
    start = time.perf_counter()
    answers = await asyncio.gather(
        *(
            client.execute_workflow(PeerOpenAIWorkflow.run, "read a and b", id=f"peer-oa-burst-{uuid.uuid4().hex[:12]}", task_queue=TASK_QUEUE)
            for _ in range(count)
        )
    )
    seconds = time.perf_counter() - start
    ok = sum("a:1" in str(answer) for answer in answers)
    return {"seconds": seconds, "turns": count, "ok": ok, "rss_kib": _rss_kib()}


def _rss_kib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


if __name__ == "__main__":
    # Import through the module name so the workflow sandbox can re-import it (not __main__).
    import _peer_openai  # pyright: ignore[reportMissingImports]

    asyncio.run(_peer_openai.main(sys.argv[1]))
