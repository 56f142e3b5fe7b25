"""Tools that use the graph: `Command(update=...)` and `InjectedState` (with `InjectedToolCallId`).

The agent and its tools are LangGraph's "How to update graph state from tools" guide's
(``update_user_info`` and ``greet``, a ``user_name`` state key), on LangChain v1's
`create_agent`. One change: the guide's ``update_user_info`` reads the user ID from
``config["configurable"]``; here the model passes it, because how a session's settings
reach ``configurable`` is not settled yet (issue 21, item 3).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

from langchain.agents import AgentState, create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import InjectedState
from langgraph.types import Command

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.harness import Built, Compiled, Scenario, assert_same_run, run_both


class UserState(AgentState):
    user_name: str


def user_tools(log: InvocationLog) -> list[BaseTool]:
    @tool
    def update_user_info(user_id: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[None]:
        """Look up and update user info."""
        log.record("tool", "update_user_info", user_id=user_id)
        name = "John Smith" if user_id == "user_123" else "Unknown user"
        return Command(
            update={
                "user_name": name,
                # update the message history
                "messages": [
                    ToolMessage("Successfully looked up user information", tool_call_id=tool_call_id)
                ],
            }
        )

    @tool
    def greet(state: Annotated[UserState, InjectedState]) -> str:
        """Use this to greet the user once you found their info."""
        log.record("tool", "greet")
        user_name = state["user_name"]
        return f"Hello {user_name}!"

    return [update_user_info, greet]


def user_agent(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    tools = user_tools(log)
    graph = cast(
        Compiled,
        create_agent(model, tools=tools, state_schema=UserState, checkpointer=checkpointer),
    )
    return Built(graph, tools)


LOOK_UP = ModelReply.call(ScriptedToolCall("call_info", "update_user_info", {"user_id": "user_123"}))


async def test_a_command_update_reaches_the_state_and_its_tool_message_the_model(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="command-update",
        build=user_agent,
        script=[LOOK_UP, ModelReply.say("Found you.")],
        turns=["hi! I am user_123"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.state["user_name"] == "John Smith"
    tool_message = plain.requests[1]["messages"][-1]
    assert tool_message == {
        "role": "tool",
        "tool_call_id": "call_info",
        "content": "Successfully looked up user information",
    }
    assert_same_run(plain, session)


async def test_injected_state_gives_a_tool_the_state_an_earlier_command_updated(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="injected-state",
        build=user_agent,
        script=[
            LOOK_UP,
            ModelReply.call(ScriptedToolCall("call_greet", "greet")),
            ModelReply.say("Hello John Smith!"),
        ],
        turns=["hi! I am user_123, greet me"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.requests[2]["messages"][-1]["content"] == "Hello John Smith!"
    assert [run["name"] for run in plain.tool_runs] == ["update_user_info", "greet"]
    assert_same_run(plain, session)
