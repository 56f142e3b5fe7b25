"""A tool node inside a subgraph, step by step without a dev server, and its run state's versions.

The parent graph's node ``team`` is a compiled subgraph: ``agent`` (one model call) and its
own `ToolNode` ``tools``. The model step stops before the subgraph's tool node and keeps
both namespaces' checkpoints (run state version 2); the tool step runs that tool node for
its call, and the next model step hands its writes back to the subgraph and runs on.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import SecretStr

from sessionflow import AgentMessage, AgentToolCall, AgentToolCallStatus, UnsupportedOptionError
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import AgentEventWriter, DeferredToolExecution, ToolCallsRequested, TurnCompleted
from sessionflow.testing import InvocationLog
from sessionflow_langgraph import RUN_STATE_VERSION, langgraph_runner
from sessionflow_langgraph._messages import user_message
from tests.adapter_langgraph.test_units import turn


def lookup_tool(log: InvocationLog) -> BaseTool:
    def lookup(city: str) -> str:
        """Look up a city."""
        log.record("tool", "lookup", city=city)
        return f"{city} is lovely"

    return StructuredTool.from_function(lookup)


def team_graph(
    model: ChatOpenAI, tool: BaseTool, checkpointer: InMemorySaver | None = None
) -> StateGraph[MessagesState]:
    bound = model.bind_tools([tool])  # pyright: ignore[reportUnknownMemberType] - partial stubs

    async def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    inner = StateGraph(MessagesState)
    inner.add_node("agent", agent)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    inner.add_node("tools", ToolNode([tool]))  # pyright: ignore[reportUnknownMemberType]
    inner.add_edge(START, "agent")
    inner.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    inner.add_edge("tools", "agent")
    outer = StateGraph(MessagesState)
    outer.add_node("team", inner.compile(checkpointer=checkpointer))  # pyright: ignore[reportUnknownMemberType]
    outer.add_edge(START, "team")
    outer.add_edge("team", END)
    return outer


def tool_step(
    request: ToolCallsRequested, status: AgentToolCallStatus
) -> tuple[AgentToolCall, DeferredToolExecution]:
    call = request.tool_calls[0]
    record = AgentToolCall(
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        arguments=call.arguments,
        policy=call.policy,
        deferral_order=0,
        status=status,
    )
    writer = AgentEventWriter(None, turn_id="turn-1", step_execution_id="x", attempt=1)
    execution = DeferredToolExecution(
        flow_id="s",
        turn_id="turn-1",
        tool_call=record,
        attempt=1,
        events=writer,
        heartbeat=lambda *a: None,
        run_state=request.framework_run_state,
    )
    return record, execution


async def test_a_subgraph_tool_node_runs_in_its_tool_step_from_both_checkpoints(tmp_path: Path) -> None:
    log = InvocationLog(tmp_path / "tools.jsonl")
    async with ScriptedModelServer() as server:
        server.script(
            "s",
            [ModelReply.call(ScriptedToolCall("c1", "lookup", {"city": "Oslo"})), ModelReply.say("Lovely.")],
        )
        model = ChatOpenAI(model="m", base_url=server.base_url("s"), api_key=SecretStr("k"), max_retries=0)
        runner = langgraph_runner(graph=team_graph(model, lookup_tool(log)))
        assert set(runner.tools) == {"lookup"}  # the subgraph's ToolNode's tools are found
        history = [
            AgentMessage(sequence=1, turn_id="turn-1", message=user_message("tell me about Oslo " * 20))
        ]

        first = await runner.run_model_step(turn(runner, history))
        assert isinstance(first, ToolCallsRequested)
        assert [c.tool_name for c in first.tool_calls] == ["lookup"]
        assert log.entries("tool") == []  # the model step stopped before the subgraph's tool node
        raw = json.loads(first.framework_run_state)
        assert raw["v"] == RUN_STATE_VERSION == 2
        assert raw["tool_node"] == "tools" and raw["tool_ns"].startswith("team:")
        assert [n["ns"] for n in raw["nested"]] == [raw["tool_ns"]]
        # The stored history is cut out of both namespaces' checkpoints.
        assert raw["history"]["count"] == 1 and raw["nested"][0]["history"] == 1
        assert "tell me about Oslo" not in first.framework_run_state

        record, execution = tool_step(first, AgentToolCallStatus.RUNNING)
        result = await runner.execute_deferred_tool_call(execution)
        assert result.output == "Oslo is lovely"
        assert result.state_update is not None and json.loads(result.state_update)["ns"] == raw["tool_ns"]
        assert [e["city"] for e in log.entries("tool")] == ["Oslo"]
        assert len(server.requests("s")) == 1  # the tool step made no model call

        done = dataclasses.replace(
            record,
            status=AgentToolCallStatus.SUCCEEDED,
            output=result.output,
            state_update=result.state_update,
        )
        final = await runner.run_model_step(turn(runner, history, first.framework_run_state, [done]))
        assert isinstance(final, TurnCompleted)
        assert [m.text for m in final.new_messages] == [None, "Oslo is lovely", "Lovely."]
        assert len(log.entries("tool")) == 1  # the next model step did not run the tool again
        second = server.requests("s")[1].body["messages"]
        assert second[-1] == {"role": "tool", "tool_call_id": "c1", "content": "Oslo is lovely"}


async def test_a_failed_subgraph_call_reaches_the_model_as_its_tool_message(tmp_path: Path) -> None:
    log = InvocationLog(tmp_path / "tools.jsonl")
    async with ScriptedModelServer() as server:
        server.script(
            "s",
            [ModelReply.call(ScriptedToolCall("c1", "lookup", {"city": "Oslo"})), ModelReply.say("Sorry.")],
        )
        model = ChatOpenAI(model="m", base_url=server.base_url("s"), api_key=SecretStr("k"), max_retries=0)
        runner = langgraph_runner(graph=team_graph(model, lookup_tool(log)))
        history = [AgentMessage(sequence=1, turn_id="turn-1", message=user_message("Oslo?"))]
        first = await runner.run_model_step(turn(runner, history))
        assert isinstance(first, ToolCallsRequested)
        record, _ = tool_step(first, AgentToolCallStatus.FAILED)
        failed = dataclasses.replace(record, error="the lookup service is down")

        final = await runner.run_model_step(turn(runner, history, first.framework_run_state, [failed]))
        assert isinstance(final, TurnCompleted)
        assert log.entries("tool") == []
        tool_message = server.requests("s")[1].body["messages"][-1]
        assert tool_message["role"] == "tool" and "the lookup service is down" in tool_message["content"]


async def test_a_run_state_of_another_version_is_refused_naming_the_versions_read(tmp_path: Path) -> None:
    async with ScriptedModelServer() as server:
        server.script("s", [ModelReply.call(ScriptedToolCall("c1", "lookup", {"city": "Oslo"}))])
        model = ChatOpenAI(model="m", base_url=server.base_url("s"), api_key=SecretStr("k"), max_retries=0)
        runner = langgraph_runner(graph=team_graph(model, lookup_tool(InvocationLog(tmp_path / "t.jsonl"))))
        history = [AgentMessage(sequence=1, turn_id="turn-1", message=user_message("Oslo?"))]
        first = await runner.run_model_step(turn(runner, history))
        assert isinstance(first, ToolCallsRequested)
        raw = json.loads(first.framework_run_state)
        with pytest.raises(ValueError, match=r"run state version 3 \(this adapter reads versions 1, 2\)"):
            await runner.run_model_step(turn(runner, history, json.dumps({**raw, "v": 3})))


def test_a_subgraph_with_tool_nodes_and_a_checkpointer_of_its_own_is_refused(tmp_path: Path) -> None:
    model = ChatOpenAI(model="m", base_url="http://127.0.0.1:9", api_key=SecretStr("k"))
    graph = team_graph(model, lookup_tool(InvocationLog(tmp_path / "t.jsonl")), checkpointer=InMemorySaver())
    with pytest.raises(
        UnsupportedOptionError, match=r"the subgraph at 'team' has tool nodes and was compiled"
    ):
        langgraph_runner(graph=graph)
