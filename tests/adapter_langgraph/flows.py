"""Flows the LangGraph adapter tests serve, built the same way in the test process and in workers.

A flow is described by a small JSON spec in the test's state folder, so a worker child
(`python -m tests.adapter_langgraph.worker`) builds exactly the flow the test built.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import SecretStr

from sessionflow import AgentSessionFlow, AgentSessionOptions, ToolEffect
from sessionflow.kit import current_tool_invocation
from sessionflow.testing import CRASH_TIMINGS, FileGate, InvocationLog
from sessionflow_langgraph import EFFECT_METADATA_KEY, langgraph_session_flow
from sessionflow_langgraph._models import chat_model
from tests.adapter_langgraph.graphs_from_docs import user_info_graph
from tests.ledger_tool import pay_tool

__all__ = ["FAST", "SPEC_FILE", "FlowSpec", "build_flow", "load_flow", "save_flow"]

SPEC_FILE = "langgraph-flow.json"

FAST = CRASH_TIMINGS

GraphKind = Literal["agent", "counter", "two_calls", "one_node_twice", "user_info", "ledger"]
Provider = Literal["openai", "anthropic"]


@dataclass(frozen=True, kw_only=True)
class FlowSpec:
    flow_type: str
    base_url: str
    graph: GraphKind = "agent"
    provider: Provider = "openai"
    system_prompt: str | None = None
    gates: list[str] = field(default_factory=lambda: [])
    """The gates the ``ledger`` agent's ``pay`` waits at (`tests.ledger_tool`)."""


def save_flow(state_dir: Path, spec: FlowSpec) -> AgentSessionFlow:
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / SPEC_FILE).write_text(json.dumps(asdict(spec)))
    return load_flow(state_dir)


def load_flow(state_dir: Path) -> AgentSessionFlow:
    raw: dict[str, Any] = json.loads((state_dir / SPEC_FILE).read_text())
    return build_flow(FlowSpec(**raw), state_dir)


def build_flow(spec: FlowSpec, state_dir: Path) -> AgentSessionFlow:
    model = _model(spec)
    tools = make_tools(state_dir)
    options = AgentSessionOptions(timings=FAST)
    if spec.graph == "agent":
        return langgraph_session_flow(
            flow_type=spec.flow_type,
            model=model,
            tools=tools,
            system_prompt=spec.system_prompt,
            options=options,
        )
    if spec.graph == "ledger":
        # The ready-made agent with one tool source: ``pay``, a write with a verify.
        return langgraph_session_flow(
            flow_type=spec.flow_type,
            model=model,
            tool_sources=[pay_tool(state_dir, spec.gates)],
            options=options,
        )
    if spec.graph == "counter":
        builder = counter_graph(model, tools, state_dir)
    elif spec.graph == "two_calls":
        builder = two_call_graph(model)
    elif spec.graph == "user_info":
        builder = user_info_graph(model, state_dir, gate=True)
    else:
        builder = one_node_twice_graph(model)
    return langgraph_session_flow(flow_type=spec.flow_type, graph=builder, tool_node="tools", options=options)


def _model(spec: FlowSpec) -> BaseChatModel:
    if spec.provider == "anthropic":
        return chat_model("anthropic:claude-test", base_url=spec.base_url, api_key="test-key")
    return ChatOpenAI(model="gpt-test", base_url=spec.base_url, api_key=SecretStr("test-key"), max_retries=0)


# -- tools -------------------------------------------------------------------------------


def make_tools(state_dir: Path) -> list[BaseTool]:
    """Tools whose every run is logged in ``invocations.jsonl`` with its process and key."""
    log = InvocationLog(state_dir / "invocations.jsonl")

    def record(name: str, **fields: Any) -> None:
        invocation = current_tool_invocation()
        assert invocation is not None, "sessionflow runs every tool with its invocation"
        log.record("tool", name, key=invocation.idempotency_key, attempt=invocation.attempt, **fields)

    def lookup(city: str) -> str:
        """Look up the weather in a city."""
        record("lookup", city=city)
        return f"sunny in {city}"

    def refund(order: int) -> str:
        """Refund an order."""
        record("refund", order=order)
        return f"refunded order {order}"

    async def save(doc: str, config: RunnableConfig) -> str:
        """Save a document (waits at the gate 'save' on its first attempt)."""
        metadata = config.get("metadata") or {}
        record("save", doc=doc, config_key=metadata.get("sessionflow_idempotency_key"))
        invocation = current_tool_invocation()
        if invocation is not None and invocation.attempt == 1:
            await FileGate(state_dir, "save").wait_for_release()
        return f"saved {doc}"

    return [
        _with_effect(StructuredTool.from_function(lookup), ToolEffect.READ),
        _with_effect(StructuredTool.from_function(refund), ToolEffect.NON_IDEMPOTENT_WRITE),
        _with_effect(StructuredTool.from_function(coroutine=save), ToolEffect.IDEMPOTENT_WRITE),
    ]


def _with_effect(tool: BaseTool, effect: ToolEffect) -> BaseTool:
    tool.metadata = {EFFECT_METADATA_KEY: effect}
    return tool


# -- graphs ------------------------------------------------------------------------------


class CounterState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    visits: int


def counter_graph(model: BaseChatModel, tools: list[BaseTool], state_dir: Path) -> StateGraph[CounterState]:
    """``count`` (no model) -> ``agent`` (one model call) -> ``tools`` -> ``count`` ...

    ``count`` bumps ``visits``, which ``agent`` puts in its system prompt: a model request
    shows how many times ``count`` ran, across steps and processes.
    """
    bound = model.bind_tools(tools)
    log = InvocationLog(state_dir / "invocations.jsonl")

    def count(state: CounterState) -> dict[str, int]:
        return {"visits": state.get("visits", 0) + 1}

    async def agent(state: CounterState) -> dict[str, list[BaseMessage]]:
        log.record("model", "agent", visits=state["visits"], pid=os.getpid())
        prompt = SystemMessage(content=f"count ran {state['visits']} times")
        return {"messages": [await bound.ainvoke([prompt, *state["messages"]])]}

    builder = StateGraph(CounterState)
    builder.add_node("count", count)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    builder.add_node("agent", agent)  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("tools", ToolNode(tools))  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "count")
    builder.add_edge("count", "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "count")
    return builder


class DraftState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def two_call_graph(model: BaseChatModel) -> StateGraph[DraftState]:
    """``draft`` and then ``review`` both call the model before any tool node or the end."""

    async def draft(state: DraftState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    async def review(state: DraftState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(DraftState)
    builder.add_node("draft", draft)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    builder.add_node("review", review)  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("tools", ToolNode([]))  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "review")
    builder.add_conditional_edges("review", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "draft")
    return builder


def one_node_twice_graph(model: BaseChatModel) -> StateGraph[DraftState]:
    """``draft`` calls the model twice in one run: no checkpoint lies between the calls."""

    async def draft(state: DraftState) -> dict[str, list[BaseMessage]]:
        first = await model.ainvoke(state["messages"])
        return {"messages": [first, await model.ainvoke([*state["messages"], first])]}

    builder = StateGraph(DraftState)
    builder.add_node("draft", draft)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    builder.add_node("tools", ToolNode([]))  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "draft")
    builder.add_conditional_edges("draft", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "draft")
    return builder
