"""A support agent as a durable session: one turn with an approval, and its transcript.

    OPENAI_API_KEY=... uv run python packages/adapter-openai/examples/support_agent.py

It serves an ordinary `agents.Agent` from a plain Temporal worker (the Temporal server at
``TEMPORAL_ADDRESS``, by default ``localhost:7233``) and plays one turn: the model looks
the order up, asks to refund it, the session holds the call until we approve, the tool runs
once, and the model answers. ``OPENAI_BASE_URL`` points the agent at any Responses server.
"""

from __future__ import annotations

import asyncio
import os
import uuid

from agents import Agent, function_tool
from temporalio.client import Client
from temporalio.worker import Worker

from sessionflow import AgentInterrupt, AgentSessionClient, AgentSessionOptions, ToolEffect, ToolPolicy
from sessionflow.kit import current_tool_invocation
from sessionflow.temporal import SessionflowPlugin
from sessionflow_openai_agents import openai_agents_session_flow


@function_tool
async def order_status(order_id: int) -> str:
    """Look up an order."""
    return f"order {order_id}: delivered, damaged"


@function_tool
async def refund(order_id: int) -> str:
    """Refund an order."""
    invocation = current_tool_invocation()  # the same key on every attempt of this call
    key = invocation.idempotency_key if invocation else "none"
    return f"refunded order {order_id} (idempotency key {key})"


agent = Agent(
    name="support", instructions="You help customers with their orders.", tools=[order_status, refund]
)
options = AgentSessionOptions(
    tool_policies={
        "order_status": ToolPolicy(effect=ToolEffect.READ),  # retried, no approval
        "refund": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE),  # once, approved
    }
)


def approve(interrupt: AgentInterrupt) -> bool:
    print(f"approving {interrupt.tool_name} {interrupt.arguments}")
    return True


async def main() -> None:
    flow = openai_agents_session_flow(agent, flow_type="SupportAgent", options=options)
    plugin = SessionflowPlugin(flows=[flow])
    client = await Client.connect(os.environ.get("TEMPORAL_ADDRESS", "localhost:7233"), plugins=[plugin])
    async with Worker(client, task_queue="SupportAgent"):
        sessions = AgentSessionClient(client, "SupportAgent")
        session_id = f"support-{uuid.uuid4().hex[:8]}"
        await sessions.run_turn(session_id, "My order 7 arrived broken.", on_interrupt=approve)
        for stored in await sessions.export_messages(session_id):
            print(f"{stored.message.role.value:>9}: {stored.message.text or stored.message.framework_item}")


if __name__ == "__main__":
    asyncio.run(main())
