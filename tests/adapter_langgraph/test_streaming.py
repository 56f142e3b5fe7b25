"""Streaming, differential against plain LangGraph: what a session streams is what the graph streams.

The graph is LangGraph's "stream custom data" example grown into a tool loop: a node and a
tool call ``get_stream_writer()``, the agent's model streams tokens, and the final answer
comes from a model inside a subgraph. Plain LangGraph runs it with
``astream(stream_mode=["messages", "custom"], subgraphs=True)``; the session runs it on the
same scripted model server. Text deltas equal the plain run's AI message chunks, call by
call; ``custom_event``s equal the plain run's custom chunks, in order.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessageChunk, AnyMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import SecretStr

from sessionflow import AgentEvent, AgentEventType, AgentSessionClient, AgentSessionOptions, AgentSnapshot
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import current_tool_invocation
from sessionflow.testing import FileGate, InvocationLog
from sessionflow_langgraph import EFFECT_METADATA_KEY, langgraph_session_flow
from tests.adapter_langgraph.conftest import serving, turn_ended, unique
from tests.adapter_langgraph.flows import FAST

T = AgentEventType
FIRST = ["Let me ", "query ", "the database."]
SECOND = ["Found ", "100 ", "records."]


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def query_tool(log: InvocationLog, gate: FileGate | None = None) -> BaseTool:
    """LangGraph's custom-data tool: progress before and after its work (``gate``: on attempt 1, between)."""

    @tool
    def query_database(query: str) -> str:
        """Query the database."""
        writer = get_stream_writer()
        writer({"data": "Retrieved 0/100 records", "type": "progress"})
        invocation = current_tool_invocation()
        attempt = invocation.attempt if invocation is not None else None
        log.record("tool", "query_database", query=query, attempt=attempt)
        if gate is not None and attempt == 1:
            gate.mark_reached()  # a sync tool runs in a thread: wait there (the test SIGKILLs us)
            while not gate.is_released():
                time.sleep(0.01)
        writer({"data": "Retrieved 100/100 records", "type": "progress"})
        return "100 records"

    query_database.metadata = {EFFECT_METADATA_KEY: "read"}
    return query_database


def streaming_graph(model: BaseChatModel, tools: list[BaseTool]) -> StateGraph[State]:
    """``prepare`` -> ``agent`` -> ``tools`` -> ``answer`` (a subgraph whose node calls the model)."""
    bound = model.bind_tools(tools)

    def prepare(state: State) -> dict[str, Any]:
        get_stream_writer()({"custom_key": "Generating custom data inside node"})
        return {}

    async def agent(state: State) -> dict[str, list[BaseMessage]]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    async def write(state: State) -> dict[str, list[BaseMessage]]:
        get_stream_writer()({"writing": True})
        return {"messages": [await model.ainvoke(state["messages"])]}

    inner = StateGraph(State)
    inner.add_node("write", write)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    inner.add_edge(START, "write")
    builder = StateGraph(State)
    builder.add_node("prepare", prepare)  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("agent", agent)  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("tools", ToolNode(tools))  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("answer", inner.compile())  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "answer")
    builder.add_edge("answer", END)
    return builder


def script(server: ScriptedModelServer, key: str) -> None:
    server.script(
        key,
        [
            ModelReply(
                text_chunks=FIRST, tool_calls=[ScriptedToolCall("c1", "query_database", {"query": "all"})]
            ),
            ModelReply.say("".join(SECOND), chunks=SECOND),
        ],
    )


def chat_model(server: ScriptedModelServer, key: str) -> ChatOpenAI:
    return ChatOpenAI(model="gpt-test", base_url=server.base_url(key), api_key=SecretStr("k"), max_retries=0)


@dataclass(frozen=True)
class PlainRun:
    texts: list[list[str]]
    """Text chunks per model call."""
    custom: list[Any]
    messages: list[tuple[str, str]]
    """The final state's messages as (type, text)."""


async def plain_run(server: ScriptedModelServer, key: str, log: InvocationLog) -> PlainRun:
    """What plain LangGraph streams, and its final state."""
    builder = streaming_graph(chat_model(server, key), [query_tool(log)])
    graph = builder.compile(checkpointer=InMemorySaver())  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    config: RunnableConfig = {"configurable": {"thread_id": "plain"}}
    texts: dict[str, list[str]] = {}
    custom: list[Any] = []
    parts = graph.astream(  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
        {"messages": [HumanMessage("How many records?")]},
        config,
        stream_mode=["messages", "custom"],
        subgraphs=True,
        version="v2",
    )
    async for part in parts:
        if part["type"] == "messages":
            message, _metadata = part["data"]
            if isinstance(message, AIMessageChunk) and message.text:
                texts.setdefault(message.id or "", []).append(message.text)
        elif part["type"] == "custom":
            custom.append(part["data"])
    state = await graph.aget_state(config)
    messages = cast(list[BaseMessage], state.values["messages"])
    return PlainRun(list(texts.values()), custom, [(m.type, m.text) for m in messages])


def stored_messages(snapshot: AgentSnapshot) -> list[tuple[str, str]]:
    """The session's messages as (LangChain type, text), to compare with a plain run's state."""
    return [(str(m.message.framework_item["type"]), m.message.text or "") for m in snapshot.messages]


async def follow_turn(sessions: AgentSessionClient, session_id: str) -> list[AgentEvent]:
    seen: list[AgentEvent] = []
    stream = sessions.events(session_id)
    async for event in stream:
        seen.append(event)
        if event.type in (T.TURN_COMPLETED, T.TURN_FAILED):
            break
    await stream.aclose()
    return seen


async def test_messages_and_custom_stream_as_in_plain_langgraph(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    plain_key, key = unique("lg-stream-plain"), unique("lg-stream")
    plain_log = InvocationLog(tmp_path / "plain.jsonl")
    log = InvocationLog(tmp_path / "session.jsonl")
    script(model_server, plain_key)
    script(model_server, key)
    plain = await plain_run(model_server, plain_key, plain_log)
    plain_texts, plain_custom = plain.texts, plain.custom

    flow = langgraph_session_flow(
        flow_type=key,
        graph=streaming_graph(chat_model(model_server, key), [query_tool(log)]),
        options=AgentSessionOptions(timings=FAST),
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "How many records?")
        events = await follow_turn(sessions, key)
        snapshot = await turn_ended(sessions, key)

    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    assert events[-1].type is T.TURN_COMPLETED
    # The plain run streamed both calls token by token, the subgraph's included.
    assert plain_texts == [FIRST, SECOND]
    deltas = [e for e in events if e.type is T.TEXT_DELTA]
    by_step = {
        step: [str(e.data["text"]) for e in deltas if e.step_execution_id == step]
        for step in ("turn-1/model-1", "turn-1/model-2")
    }
    assert list(by_step.values()) == plain_texts
    assert len(deltas) == sum(len(chunks) for chunks in plain_texts)

    custom = [e for e in events if e.type is T.CUSTOM_EVENT]
    assert [e.data["data"] for e in custom] == plain_custom
    assert plain_custom == [
        {"custom_key": "Generating custom data inside node"},
        {"data": "Retrieved 0/100 records", "type": "progress"},
        {"data": "Retrieved 100/100 records", "type": "progress"},
        {"writing": True},
    ]
    # Each came from the step that ran its code: the node's from model steps, the tool's from its tool step.
    assert [e.step_execution_id for e in custom] == [
        "turn-1/model-1",
        "turn-1/tool/c1",
        "turn-1/tool/c1",
        "turn-1/model-2",
    ]
    assert all(e.offset is None for e in custom), "custom events are live only, like deltas"
    # LangGraph's other stream modes (updates, values, debug, checkpoints, tasks) are not
    # streamed: what is live is the messages' deltas and the custom chunks (README, "Streaming").
    assert {e.type for e in events if e.offset is None} == {T.TEXT_DELTA, T.CUSTOM_EVENT}
    assert custom[0].data["namespace"] == [] and custom[-1].data["namespace"][0].startswith("answer:")

    # The same model requests, call by call, and the tool ran once in each run.
    plain_requests, requests = model_server.requests(plain_key), model_server.requests(key)
    assert [r.body["messages"] for r in requests] == [r.body["messages"] for r in plain_requests]
    assert [r.body.get("tools") for r in requests] == [r.body.get("tools") for r in plain_requests]
    assert requests[1].tool_results() == {"c1": "100 records"}
    assert len(plain_log.entries("tool", "query_database")) == len(log.entries("tool", "query_database")) == 1
    assert stored_messages(snapshot) == plain.messages
    assert plain.messages[-1] == ("ai", "".join(SECOND))
