# pyright: basic, reportMissingImports=false, reportMissingModuleSource=false, reportUnknownMemberType=false
"""Peer: Temporal's own Google ADK integration (`temporalio-google-adk`, `temporalio.google_adk`).

Runs in an isolated env made by `bench.peers` (never the workspace lock), with the same
google-adk, google-genai and temporalio versions as the workspace. Line protocol:
`bench/_peer_loop.py`, imported from this script's folder. The model is Gemini on the
scripted server: the plugin's model activity builds its client from ADK's model registry,
which reads `GOOGLE_GEMINI_BASE_URL` and `GOOGLE_API_KEY` (set by `bench.peers`).

The agent is the one the other ADK variants run (`read_a`, `read_b`, same instruction), laid
out as the integration's README does it: `TemporalModel` runs each model call as an activity,
and each tool is an activity wrapped with `activity_as_tool`, so a turn has the shape of the
other durable variants: model activity -> two parallel tool activities -> model activity.
The ADK `Runner` and its in-memory session run inside the workflow, as the README shows.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import sys
from datetime import timedelta

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner
    from google.genai import types

from temporalio.google_adk import TemporalModel
from temporalio.google_adk.workflow import activity_as_tool

TASK_QUEUE = "peer-temporal-adk"
MODEL = "gemini-2.5-flash"


@activity.defn
async def read_a(key: str) -> str:
    """Read record A."""
    return f"a:{key}"


@activity.defn
async def read_b(key: str) -> str:
    """Read record B."""
    return f"b:{key}"


@workflow.defn
class PeerAdkWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> str:
        agent = LlmAgent(
            name="bench",
            model=TemporalModel(MODEL),
            instruction="You read records.",
            tools=[
                activity_as_tool(read_a, start_to_close_timeout=timedelta(seconds=30)),
                activity_as_tool(read_b, start_to_close_timeout=timedelta(seconds=30)),
            ],
        )
        runner = InMemoryRunner(agent=agent, app_name="bench")
        session = await runner.session_service.create_session(app_name="bench", user_id="u")
        answer = ""
        message = types.Content(role="user", parts=[types.Part(text=prompt)])
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            if event.is_final_response() and event.content and event.content.parts:
                answer = "".join(part.text or "" for part in event.content.parts)
        return answer


async def main(address: str) -> None:
    import _peer_loop  # pyright: ignore[reportMissingImports]  # the script's own folder
    from temporalio.client import Client
    from temporalio.google_adk import GoogleAdkPlugin
    from temporalio.worker import Worker

    client = await Client.connect(address, plugins=[GoogleAdkPlugin()])
    worker = Worker(client, task_queue=TASK_QUEUE, workflows=[PeerAdkWorkflow], activities=[read_a, read_b])
    versions = {
        name: importlib.metadata.version(name)
        for name in ("temporalio-google-adk", "temporalio", "google-adk", "google-genai")
    }
    async with worker:

        async def run(workflow_id: str) -> str:
            return await client.execute_workflow(
                PeerAdkWorkflow.run, "read a and b", id=workflow_id, task_queue=TASK_QUEUE
            )

        await _peer_loop.serve(client, run, "peer-adk", versions)


if __name__ == "__main__":
    # Import through the module name so the workflow sandbox can re-import it (not __main__).
    import _peer_adk  # pyright: ignore[reportMissingImports]

    asyncio.run(_peer_adk.main(sys.argv[1]))
