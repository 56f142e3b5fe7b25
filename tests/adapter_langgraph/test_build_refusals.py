"""Graph options the adapter cannot honour are refused when the flow is built, by name."""

from __future__ import annotations

import logging
import operator
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain.agents.middleware import HostExecutionPolicy, ShellToolMiddleware
from langchain_core.tools import BaseTool, StructuredTool
from langchain_openai import ChatOpenAI
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.memory import InMemorySaver, PersistentDict
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from pydantic import SecretStr
from typing_extensions import TypedDict

from sessionflow import UnsupportedOptionError
from sessionflow_langgraph import langgraph_runner, langgraph_session_flow


def two_nodes() -> StateGraph[MessagesState]:
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda state: {})  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("tools", lambda state: {})  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "tools")
    builder.add_edge("tools", END)
    return builder


def refused(**flow_args: object) -> UnsupportedOptionError:
    with pytest.raises(UnsupportedOptionError) as raised:
        langgraph_session_flow(flow_type="refused", **flow_args)  # pyright: ignore[reportArgumentType]
    return raised.value


def test_a_tool_node_the_graph_lacks_is_refused() -> None:
    error = refused(graph=two_nodes(), tool_node="act")
    assert error.option == "tool_node"
    assert "its nodes are 'agent', 'tools'" in str(error)


@pytest.mark.parametrize("option", ["interrupt_before", "interrupt_after"])
def test_a_graph_compiled_with_its_own_interrupts_is_refused(option: str) -> None:
    compiled = two_nodes().compile(**{option: ["agent"]})  # pyright: ignore[reportArgumentType, reportUnknownMemberType]
    error = refused(graph=compiled)
    assert error.option == option
    assert str(error).startswith(f"option {option!r}: the graph was compiled with {option}=['agent']")


def test_a_graph_factory_runs_at_build_so_its_graph_is_refused_there() -> None:
    built: list[int] = []

    def factory(
        tools: Sequence[BaseTool],
    ) -> CompiledStateGraph[MessagesState, None, MessagesState, MessagesState]:
        built.append(len(tools))
        return two_nodes().compile(interrupt_after=["agent"])  # pyright: ignore[reportUnknownMemberType]

    assert refused(graph=factory).option == "interrupt_after"
    assert built == [0]


def test_an_effect_that_is_not_one_is_refused() -> None:
    def upper(text: str) -> str:
        return text.upper()

    shout = StructuredTool.from_function(
        upper, name="shout", description="Shout.", metadata={"sessionflow_effect": "loud"}
    )
    error = refused(graph=two_nodes(), tools=[shout])
    assert error.option == "metadata['sessionflow_effect']"
    assert "tool 'shout'" in str(error)


def test_an_in_memory_checkpointer_is_replaced_with_a_logged_notice(caplog: pytest.LogCaptureFixture) -> None:
    compiled = two_nodes().compile(checkpointer=InMemorySaver())  # pyright: ignore[reportUnknownMemberType]
    with caplog.at_level(logging.INFO, logger="sessionflow_langgraph._graph"):
        runner = langgraph_runner(graph=compiled)
    assert runner.tool_nodes == ("tools",)
    notices = [r.getMessage() for r in caplog.records if r.name == "sessionflow_langgraph._graph"]
    assert len(notices) == 1
    assert "compiled with checkpointer=InMemorySaver" in notices[0]
    assert "not used" in notices[0]


def test_a_checkpointer_that_keeps_threads_on_disk_is_refused_with_the_change_to_make(
    tmp_path: Path,
) -> None:
    saver = InMemorySaver(factory=partial(PersistentDict, filename=str(tmp_path / "threads.pckl")))  # pyright: ignore[reportArgumentType]
    compiled = two_nodes().compile(checkpointer=saver)  # pyright: ignore[reportUnknownMemberType]
    error = refused(graph=compiled)
    assert error.option == "checkpointer"
    assert "compiled with checkpointer=InMemorySaver, which keeps threads" in str(error)
    assert "Compile without one (builder.compile(), create_agent(..., checkpointer=None))" in str(error)


def test_a_checkpointer_of_another_kind_is_refused() -> None:
    class SqlSaver(InMemorySaver):
        """Stands for a saver that writes to a database (langgraph-checkpoint-sqlite is not installed)."""

    compiled = two_nodes().compile(checkpointer=SqlSaver())  # pyright: ignore[reportUnknownMemberType]
    error = refused(graph=compiled)
    assert error.option == "checkpointer"
    assert "compiled with checkpointer=SqlSaver" in str(error)


def test_a_tool_node_inside_a_subgraph_is_found_not_refused() -> None:
    inner = StateGraph(MessagesState)

    def shout(text: str) -> str:
        """Shout."""
        return text.upper()

    inner.add_node("act", ToolNode([shout]))  # pyright: ignore[reportUnknownMemberType]
    inner.add_edge(START, "act")
    outer = StateGraph(MessagesState)
    outer.add_node("team", inner.compile())  # pyright: ignore[reportUnknownMemberType]
    outer.add_edge(START, "team")
    runner = langgraph_runner(graph=outer)
    assert runner.tool_nodes == ()  # none at the top: the subgraph's is paused as its task starts
    assert set(runner.tools) == {"shout"}


def test_a_delta_channel_is_refused_with_what_to_use_instead() -> None:
    class State(TypedDict):
        messages: Annotated[list[Any], DeltaChannel(operator.add)]

    builder = StateGraph(State)
    builder.add_node("agent", lambda state: {})  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    error = refused(graph=builder)
    assert error.option == "DeltaChannel"
    assert "state key 'messages' is a DeltaChannel (LangGraph beta)" in str(error)
    assert "Use a reducer instead" in str(error)


def test_shell_tool_middleware_is_refused_with_the_change_to_make(tmp_path: Path) -> None:
    agent = create_agent(
        ChatOpenAI(model="gpt-test", api_key=SecretStr("test-key")),
        middleware=[ShellToolMiddleware(workspace_root=tmp_path, execution_policy=HostExecutionPolicy())],
    )
    error = refused(graph=agent)
    assert error.option == "ShellToolMiddleware"
    assert "keeps one live shell process for the whole agent run" in str(error)
    assert "runs each command in a fresh process" in str(error)


def test_a_functional_api_entrypoint_is_refused_with_the_change_to_make() -> None:
    @task
    def double(number: int) -> int:
        return number * 2

    @entrypoint()
    def doubled(number: int) -> int:
        return double(number).result()

    workflow: Any = doubled  # pyright: ignore[reportUnknownVariableType] - an entrypoint's type arguments are unknown

    assert workflow.invoke(2) == 4  # a working plain graph
    error = refused(graph=workflow)
    assert error.option == "entrypoint"
    assert str(error).startswith("option 'entrypoint': the graph is a Pregel, not a StateGraph")
    assert "Write the agent as a StateGraph" in str(error)
