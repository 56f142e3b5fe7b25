# pyright: basic, reportMissingImports=false, reportMissingModuleSource=false, reportUnknownMemberType=false
"""Peer: Temporal's own LangGraph integration (`temporalio-langgraph`, `temporalio.langgraph`).

Runs in an isolated env made by `bench.peers` (never the workspace lock), with the same
langgraph, langchain-core and langchain-openai versions as the workspace. Line protocol:
`bench/_peer_loop.py`, imported from this script's folder. The model is `BENCH_MODEL_URL`
(Chat Completions on the scripted server).

The graph is the one the other LangGraph variants run (`agent` <-> `tools`, `tools_condition`),
laid out as the plugin wants it:

- `agent` has `execute_in: "activity"`: the plugin runs the node function, and so its one
  model call, as a Temporal activity (the node's state travels as the activity's input).
- `tools` has `execute_in: "workflow"`, and each tool awaits an activity of its own, as the
  OpenAI plugin's `activity_as_tool` does, so a turn has the shape of the other durable
  variants: model activity -> two parallel tool activities -> model activity.

Where the graph differs from the others', and why (each one tried with 0.1.0 on this bench):

- The router is an async copy of `tools_condition`: LangGraph runs a sync router through
  `run_in_executor`, which the workflow's event loop refuses (`NotImplementedError`).
- The tool node is the custom tool node of LangGraph's own tutorial ("BasicToolNode"), async,
  not `ToolNode`. With `ToolNode` as a workflow node, `compile()` in the workflow never
  returns: the plugin makes the node's `afunc` a wrapper that closes over `ToolNode._func`
  (`temporalio/langgraph/_workflow.py`), and LangGraph's subgraph search
  (`find_subgraph_pregel`) follows that bound method back to the same `ToolNode`, for ever
  (the worker reports a deadlock, TMPRL1101). As an activity, `ToolNode` gets the state as
  plain dicts (`ActivityInput.args` is `tuple[Any, ...]`, so the converter has no message
  type to decode into), raises "No AIMessage found in input", and is retried for ever.
- `agent` converts its input with `convert_to_messages` for the same reason (a model takes
  message dicts, so this one costs nothing).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import sys
from datetime import timedelta
from typing import Any

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():
    from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
    from langchain_core.messages.utils import convert_to_messages
    from langchain_core.tools import tool
    from langgraph.graph import END, START, MessagesState, StateGraph

from temporalio.langgraph import graph as lg_graph

TASK_QUEUE = "peer-temporal-langgraph"
GRAPH = "bench"
TIMEOUT = timedelta(seconds=30)


@activity.defn
async def read_a_activity(key: str) -> str:
    return f"a:{key}"


@activity.defn
async def read_b_activity(key: str) -> str:
    return f"b:{key}"


@tool
async def read_a(key: str) -> str:
    """Read record A."""
    return await workflow.execute_activity(read_a_activity, key, start_to_close_timeout=TIMEOUT)


@tool
async def read_b(key: str) -> str:
    """Read record B."""
    return await workflow.execute_activity(read_b_activity, key, start_to_close_timeout=TIMEOUT)


TOOLS = {t.name: t for t in (read_a, read_b)}
_bound: Any = None


async def agent(state: MessagesState) -> dict[str, list[AnyMessage]]:
    """One model call (in an activity). The state arrives as JSON dicts, hence `convert_to_messages`."""
    global _bound
    if _bound is None:  # one client per process, as every other variant shares one
        from langchain_openai import ChatOpenAI
        from pydantic import SecretStr

        model = ChatOpenAI(
            model="bench-model", base_url=os.environ["BENCH_MODEL_URL"], api_key=SecretStr("x")
        )
        _bound = model.bind_tools(list(TOOLS.values()))
    return {"messages": [await _bound.ainvoke(convert_to_messages(state["messages"]))]}


async def tools(state: MessagesState) -> dict[str, list[AnyMessage]]:
    """Every tool call of the last AI message, at once (in the workflow; each tool is an activity)."""
    last = state["messages"][-1]
    assert isinstance(last, AIMessage)
    outputs = await asyncio.gather(*(TOOLS[call["name"]].ainvoke(call["args"]) for call in last.tool_calls))
    return {
        "messages": [
            ToolMessage(content=str(out), name=call["name"], tool_call_id=call["id"])
            for call, out in zip(last.tool_calls, outputs, strict=True)
        ]
    }


async def route(state: MessagesState) -> str:
    """`tools_condition`, async: LangGraph runs a sync router through `run_in_executor`, which
    the workflow's event loop refuses (`NotImplementedError`)."""
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else END


def build_graph() -> StateGraph[Any, Any, Any, Any]:
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(MessagesState)
    builder.add_node("agent", agent, metadata={"execute_in": "activity"})
    builder.add_node("tools", tools, metadata={"execute_in": "workflow"})
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, {"tools": "tools", END: END})
    builder.add_edge("tools", "agent")
    return builder


@workflow.defn
class PeerLangGraphWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> str:
        app = lg_graph(GRAPH).compile()
        result = await app.ainvoke({"messages": [HumanMessage(content=prompt)]})
        return str(result["messages"][-1].content)


async def main(address: str) -> None:
    import _peer_loop  # pyright: ignore[reportMissingImports]  # the script's own folder
    from temporalio.client import Client
    from temporalio.langgraph import LangGraphPlugin
    from temporalio.worker import Worker

    plugin = LangGraphPlugin(
        graphs={GRAPH: build_graph()},
        default_activity_options={"start_to_close_timeout": timedelta(seconds=60)},
    )
    client = await Client.connect(address)
    worker = Worker(
        client,
        task_queue=TASK_QUEUE,
        workflows=[PeerLangGraphWorkflow],
        activities=[read_a_activity, read_b_activity],
        plugins=[plugin],
    )
    versions = {
        name: importlib.metadata.version(name)
        for name in (
            "temporalio-langgraph",
            "temporalio",
            "langgraph",
            "langchain-core",
            "langchain-openai",
            "openai",
        )
    }
    async with worker:

        async def run(workflow_id: str) -> str:
            return await client.execute_workflow(
                PeerLangGraphWorkflow.run, "read a and b", id=workflow_id, task_queue=TASK_QUEUE
            )

        await _peer_loop.serve(client, run, "peer-lg", versions)


if __name__ == "__main__":
    # Import through the module name so the workflow sandbox can re-import it (not __main__).
    import _peer_langgraph  # pyright: ignore[reportMissingImports]

    asyncio.run(_peer_langgraph.main(sys.argv[1]))
