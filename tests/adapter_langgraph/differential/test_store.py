"""The graph's own store (``compile(store=...)``): `InjectedStore` and `ToolRuntime` tools use it.

In the shape of LangChain's "long-term memory" docs: ``create_agent(..., store=InMemoryStore(),
context_schema=Context)``; ``save_memory`` takes the store as ``InjectedStore()`` (LangGraph's
way) and ``recall`` through ``ToolRuntime`` (LangChain v1's), both keyed by the context's
user. The store is the user's: sessionflow neither keeps nor replaces it, and the tool step
runs the tool node with it, so a fact saved in turn 1 is recalled in turn 2 as in plain.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, cast

from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain.tools import ToolRuntime
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import InjectedStore
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.harness import Built, Compiled, Scenario, assert_same_run, run_both


@dataclass
class Context:
    user_id: str


def memory_tools(log: InvocationLog) -> list[BaseTool]:
    @tool
    def save_memory(
        fact: str, store: Annotated[BaseStore, InjectedStore()], runtime: ToolRuntime[Context, Any]
    ) -> str:
        """Save a fact about the user."""
        log.record("tool", "save_memory", fact=fact)
        store.put(("memories", runtime.context.user_id), fact, {"fact": fact})
        return f"Saved: {fact}"

    @tool
    def recall(runtime: ToolRuntime[Context, Any]) -> str:
        """Recall every fact saved about the user."""
        log.record("tool", "recall")
        assert runtime.store is not None
        items = runtime.store.search(("memories", runtime.context.user_id))
        return json.dumps(sorted(str(item.value["fact"]) for item in items))

    return [save_memory, recall]


STORES: dict[str, InMemoryStore] = {}
"""Each run's store, by run ("plain", "session"), for the test to read after the run."""


def memory_agent(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    store = InMemoryStore()
    STORES["plain" if checkpointer is not None else "session"] = store
    tools = memory_tools(log)
    graph = cast(
        Compiled,
        create_agent(model, tools=tools, context_schema=Context, store=store, checkpointer=checkpointer),
    )
    return Built(graph, tools)


async def test_tools_save_to_and_read_from_the_graphs_own_store_across_turns(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="store",
        build=memory_agent,
        script=[
            ModelReply.call(ScriptedToolCall("call_save", "save_memory", {"fact": "likes tea"})),
            ModelReply.say("Noted."),
            ModelReply.call(ScriptedToolCall("call_recall", "recall", {})),
            ModelReply.say("You like tea."),
        ],
        turns=["remember that I like tea", "what do I like?"],
        context={"user_id": "user_123"},
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.requests[3]["messages"][-1]["content"] == '["likes tea"]'
    for run in ("plain", "session"):
        saved = STORES[run].search(("memories", "user_123"))
        assert [item.value for item in saved] == [{"fact": "likes tea"}], run
    assert_same_run(plain, session)
