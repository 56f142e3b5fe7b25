# pyright: basic, reportMissingImports=false, reportMissingModuleSource=false, reportUnknownMemberType=false
"""Peer of `bench.long_turn`: one long turn through the temporalio OpenAI Agents plugin.

Runs in an isolated env (`uv run --isolated --with temporalio-openai-agents ...`, never the
workspace lock), as `bench/_peer_openai.py` does. Arguments: `address workflow_id rounds
output_bytes timeout_s`. The model is `OPENAI_BASE_URL` (the parent's scripted server, which
asks for one or more calls of `lookup` per round, `rounds` rounds, then answers); each call
returns `output_bytes` characters unique to it (0: a short text).
One workflow runs the agent with `max_turns` above the rounds, so only the server's limits can
stop it. Prints one JSON line: the outcome, how long it ran and how many tool calls ran (each
call ID counted, so a repeat shows). The parent reads the history itself.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import Counter
from datetime import timedelta

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():
    from agents import Agent, Runner

from temporalio.openai_agents import workflow as oa_workflow

TASK_QUEUE = "long-turn-openai"
CALLS: Counter[str] = Counter()
"""Tool call IDs this worker ran (activities run in this process)."""
OUTPUT_BYTES = [0]


@activity.defn
async def lookup(n: int) -> str:
    """Look up record n."""
    CALLS[str(n)] += 1
    if OUTPUT_BYTES[0] > 0:
        seed = f"{n}|{activity.info().workflow_id}|"
        return (seed * (OUTPUT_BYTES[0] // len(seed) + 1))[: OUTPUT_BYTES[0]]
    return f"found {n}"


@workflow.defn
class LongTurnWorkflow:
    @workflow.run
    async def run(self, prompt: str, max_turns: int) -> str:
        agent = Agent(
            name="bench",
            instructions="You look records up.",
            model="bench-model",
            tools=[oa_workflow.activity_as_tool(lookup, start_to_close_timeout=timedelta(seconds=120))],
        )
        result = await Runner.run(agent, prompt, max_turns=max_turns)
        return str(result.final_output)


async def main(address: str, workflow_id: str, rounds: int, output_bytes: int, timeout: float) -> None:
    import importlib.metadata

    from temporalio.client import Client
    from temporalio.openai_agents import ModelActivityParameters, OpenAIAgentsPlugin
    from temporalio.worker import Worker

    OUTPUT_BYTES[0] = output_bytes
    plugin = OpenAIAgentsPlugin(
        model_params=ModelActivityParameters(start_to_close_timeout=timedelta(seconds=300))
    )
    client = await Client.connect(address, plugins=[plugin])
    versions = {
        name: importlib.metadata.version(name)
        for name in ("temporalio-openai-agents", "temporalio", "openai-agents", "openai")
    }
    print(json.dumps({"ready": True, "versions": versions}), flush=True)
    worker = Worker(client, task_queue=TASK_QUEUE, workflows=[LongTurnWorkflow], activities=[lookup])
    outcome = "completed"
    answer = ""
    started = time.monotonic()
    async with worker:
        handle = await client.start_workflow(
            LongTurnWorkflow.run,
            args=["look records up until done", rounds + 10],
            id=workflow_id,
            task_queue=TASK_QUEUE,
        )
        try:
            answer = await asyncio.wait_for(handle.result(), timeout)
        except TimeoutError:
            # Stuck (e.g. a workflow task failing over and over): stop it at the bound.
            outcome = f"no result after {timeout:.0f} s; terminated by the bench"
            await handle.terminate(reason="long_turn bench bound")
        except Exception as error:  # the server terminated or failed it: that is the finding
            cause = error.__cause__
            outcome = f"{type(error).__name__}: {error}" + (
                f" <- {type(cause).__name__}: {cause}" if cause else ""
            )
    seconds = time.monotonic() - started
    print(
        json.dumps(
            {
                "outcome": outcome,
                "answer": answer,
                "seconds": seconds,
                "tool_calls": sum(CALLS.values()),
                "distinct_tool_calls": len(CALLS),
                "versions": versions,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    # Import through the module name so the workflow sandbox can re-import it (not __main__).
    import _long_turn_openai  # pyright: ignore[reportMissingImports]

    address, workflow_id, rounds, output_bytes, timeout = sys.argv[1:6]
    asyncio.run(_long_turn_openai.main(address, workflow_id, int(rounds), int(output_bytes), float(timeout)))
