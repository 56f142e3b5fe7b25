"""Peer: Pydantic AI's own Temporal durability (`pydantic_ai.durable_exec.temporal`).

Runs in the workspace env (pydantic-ai-slim and temporalio from our lock), as
`python -c "import bench._peer_pydantic as p; p.run()" ADDRESS`. Same line protocol as
`bench._peer_openai`. The model is `BENCH_MODEL_URL` (Chat Completions on the scripted server).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import sys
import time
import uuid
import warnings
from typing import TYPE_CHECKING

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
        "bench-model", provider=OpenAIProvider(base_url=os.environ.get("BENCH_MODEL_URL", "http://127.0.0.1:1/v1"), api_key="x")
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


if TYPE_CHECKING:
    from temporalio.client import Client


@workflow.defn
class PeerPydanticWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> str:
        result = await temporal_agent.run(prompt)
        return result.output


async def main(address: str) -> None:
    from temporalio.client import Client
    from temporalio.worker import Worker

    client = await Client.connect(address, plugins=[PydanticAIPlugin()])
    worker = Worker(
        client, task_queue=TASK_QUEUE, workflows=[PeerPydanticWorkflow], plugins=[AgentPlugin(temporal_agent)]
    )
    versions = {name: importlib.metadata.version(name) for name in ("pydantic-ai-slim", "temporalio", "openai")}
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
            workflow_id = f"peer-pa-{uuid.uuid4().hex[:12]}"
            start = time.perf_counter_ns()
            answer = await client.execute_workflow(
                PeerPydanticWorkflow.run, "read a and b", id=workflow_id, task_queue=TASK_QUEUE
            )
            ms = (time.perf_counter_ns() - start) / 1e6
            info = (await client.get_workflow_handle(workflow_id).describe()).raw_description.workflow_execution_info
            out = {"ms": ms, "events": info.history_length, "bytes": info.history_size_bytes, "answer": answer}
            print(json.dumps(out), flush=True)


async def burst(client: Client, count: int) -> dict[str, float | int]:
    """`count` turns at once on this process's worker (throughput); answers checked after."""
    start = time.perf_counter()
    answers: list[str] = await asyncio.gather(
        *(
            client.execute_workflow(PeerPydanticWorkflow.run, "read a and b", id=f"peer-pa-burst-{uuid.uuid4().hex[:12]}", task_queue=TASK_QUEUE)
            for _ in range(count)
        )
    )
    seconds = time.perf_counter() - start
    ok = sum("a:1" in str(answer) for answer in answers)
    return {"seconds": seconds, "turns": count, "ok": ok, "rss_kib": _rss_kib()}


def _rss_kib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def run() -> None:
    asyncio.run(main(sys.argv[1]))
