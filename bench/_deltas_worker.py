"""The worker process of `bench.deltas`: `python -m bench._deltas_worker ADDRESS REDIS_URL`.

Serves the two sessionflow flows (`FLOW_PLAIN` on this process's own in-process bus, which
nobody here subscribes to, so deltas take the fallback; `FLOW_REDIS` on Redis) and the
workflow_streams prototype. Prints "ready" once its workers run; stops when its stdin closes.
"""

from __future__ import annotations

import asyncio
import sys

from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from bench._deltas_common import (
    FLOW_PLAIN,
    FLOW_REDIS,
    STREAMS_TASK_QUEUE,
    StreamsWorkflow,
    WallClockRunner,
    stream_model,
)
from sessionflow import AgentSessionFlow, RedisDeltaTransport, connect, serve_agent_flows


async def serve(address: str, redis_url: str) -> None:
    client = await connect(address)
    runner = WallClockRunner()
    redis = RedisDeltaTransport(redis_url)
    flows = [
        AgentSessionFlow(runner, flow_type=FLOW_PLAIN),
        AgentSessionFlow(runner, flow_type=FLOW_REDIS, delta_transport=redis),
    ]
    stop = asyncio.Event()
    serving = asyncio.create_task(serve_agent_flows(client, flows, stop=stop))
    streams = Worker(
        client,
        task_queue=STREAMS_TASK_QUEUE,
        workflows=[StreamsWorkflow],
        activities=[stream_model],
        workflow_runner=SandboxedWorkflowRunner(
            restrictions=SandboxRestrictions.default.with_passthrough_modules("sessionflow", "bench")
        ),
    )
    streams_serving = asyncio.create_task(streams.run())
    await asyncio.sleep(0.5)
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until the parent closes it
    stop.set()
    await serving
    await streams.shutdown()
    await streams_serving
    redis.close()


def main() -> None:
    address, redis_url = sys.argv[1:3]
    asyncio.run(serve(address, redis_url))


if __name__ == "__main__":
    main()
