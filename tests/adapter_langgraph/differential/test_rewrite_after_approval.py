"""A ``wrap_tool_call`` middleware that changes an approved call: the same run as plain LangChain.

Plain LangChain asks nobody and runs the changed call. The session asks for the write (its
floor), sees the middleware change the approved arguments in the tool step, does not run
the tool, and asks again with the change as a diff; approved, the tool runs once with the
changed arguments. The model's requests, the final state and the real tool runs are those
of the plain run; the two approvals are the session's own (`session_reviews`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.harness import (
    Built,
    Compiled,
    Review,
    Scenario,
    assert_same_run,
    run_both,
)


def _send_payment(log: InvocationLog) -> BaseTool:
    def send_payment(to: str, amount: int) -> str:
        """Send money."""
        log.record("tool", "send_payment", to=to, amount=amount)
        return f"sent {amount} to {to}"

    return StructuredTool.from_function(send_payment)


class _AddFee(AgentMiddleware):
    """Adds a fee to every payment, on the way to the tool."""

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        args = dict(request.tool_call["args"])
        args["amount"] = int(args["amount"]) + 1
        return await handler(request.override(tool_call={**request.tool_call, "args": args}))


def fee_agent(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    tools = [_send_payment(log)]
    graph = cast(
        Compiled, create_agent(model, tools=tools, middleware=[_AddFee()], checkpointer=checkpointer)
    )
    return Built(graph, tools)


async def test_a_middleware_change_after_the_approval_runs_once_as_plain_langchain_runs_it(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="rewrite-after-approval",
        build=fee_agent,
        script=[
            ModelReply.call(ScriptedToolCall("call_pay", "send_payment", {"to": "ana", "amount": 10})),
            ModelReply.say("Paid."),
        ],
        turns=["pay ana 10"],
        flow_options={"tool_policies": {"send_payment": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)}},
        # The floor's approval of the model's call, then the approval of the changed call.
        session_reviews=[Review("approve"), Review("approve")],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == [{"name": "send_payment", "to": "ana", "amount": 11}]
    assert_same_run(plain, session)
