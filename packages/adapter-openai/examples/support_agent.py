"""A support agent as a durable session, end to end and offline.

    uv run python packages/adapter-openai/examples/support_agent.py

It starts the embedded Temporal dev server (or uses ``SESSIONFLOW_SERVER_ADDRESS``), serves
an ordinary `agents.Agent`, and plays one turn: the model asks to refund an order, the
session holds the call for approval, we approve, the tool runs once, and the model answers.
The model is the scripted test server; point the client at OpenAI to use a real model.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path
from typing import Any

from agents import Agent, OpenAIResponsesModel, function_tool
from openai import AsyncOpenAI
from temporalio.client import Client

from sessionflow import (
    AgentSessionClient,
    AgentSessionOptions,
    AgentSnapshot,
    AgentStatus,
    ToolEffect,
    ToolPolicy,
    connect,
    serve_agent_flows,
)
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import current_tool_invocation
from sessionflow.temporal import DevServer, DevServerConfig
from sessionflow.testing import wait_for_agent_snapshot
from sessionflow_openai_agents import openai_agents_session_flow


@function_tool
async def refund(order_id: int) -> str:
    """Refund an order."""
    invocation = current_tool_invocation()  # the same key on every attempt of this call
    key = invocation.idempotency_key if invocation else "none"
    return f"refunded order {order_id} (idempotency key {key})"


@function_tool
async def order_status(order_id: int) -> str:
    """Look up an order."""
    return f"order {order_id}: delivered, damaged"


async def temporal() -> Client:
    if os.environ.get("SESSIONFLOW_SERVER_ADDRESS"):
        return await connect()
    server = await DevServer.ensure_running(DevServerConfig(data_dir=Path.home() / ".sessionflow" / "server"))
    return await server.connect()


async def main() -> None:
    with ScriptedModelServer() as model:
        model.script(
            "support",
            [
                ModelReply.call(ScriptedToolCall("call_status", "order_status", {"order_id": 7})),
                ModelReply.call(ScriptedToolCall("call_refund", "refund", {"order_id": 7})),
                ModelReply.say("Order 7 arrived damaged, so I refunded it."),
            ],
        )
        client = AsyncOpenAI(base_url=model.base_url("support"), api_key="unused", max_retries=0)
        agent = Agent[Any](
            name="support",
            instructions="You help customers with their orders.",
            model=OpenAIResponsesModel(model="gpt-4.1", openai_client=client),
            tools=[order_status, refund],
        )
        flow = openai_agents_session_flow(
            agent,
            flow_type="SupportAgent",
            options=AgentSessionOptions(
                tool_policies={
                    "order_status": ToolPolicy(effect=ToolEffect.READ),  # retried, no approval
                    "refund": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE),  # once, approved
                }
            ),
        )
        engine = await temporal()
        stop = asyncio.Event()
        worker = asyncio.create_task(serve_agent_flows(engine, [flow], stop=stop))
        sessions = AgentSessionClient(engine, flow)
        session_id = f"support-{uuid.uuid4().hex[:8]}"
        try:
            await sessions.start_session(session_id, "My order 7 arrived broken.")
            waiting = await wait_for_agent_snapshot(
                sessions,
                session_id,
                lambda s: s.pending_interrupts or None,
                description="the refund approval",
            )
            print(f"approving {waiting[0].tool_name} {waiting[0].arguments}")
            await sessions.resolve_interrupt(session_id, waiting[0].interrupt_id, approved=True)

            def idle(s: AgentSnapshot) -> AgentSnapshot | None:
                done = s.state is not None and s.state.turn_count == 1
                return (
                    s if done and s.state and s.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE else None
                )

            snapshot = await wait_for_agent_snapshot(sessions, session_id, idle, description="the answer")
            for stored in snapshot.messages:
                print(
                    f"{stored.message.role.value:>9}: {stored.message.text or stored.message.framework_item}"
                )
        finally:
            stop.set()
            await worker


if __name__ == "__main__":
    asyncio.run(main())
