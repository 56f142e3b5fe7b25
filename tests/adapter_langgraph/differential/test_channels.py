"""LangGraph's channel kinds across the session's steps: each holds what it holds in one plain run.

One graph has a state key of each kind (LangGraph's "Graph API: state" and "channels" docs):

- ``messages`` (``add_messages``) and ``steps`` (``operator.add``): reducers (BinaryOperatorAggregate);
- ``last_node``: a plain key (LastValue);
- ``note``: an `EphemeralValue`, visible to the super-step after its write only: the agent
  writes it, the tool (in its tool step) reads it, the ``audit`` node after the tools finds it gone;
- ``run_calls``: an `UntrackedValue` counting the model calls of the run, which the router
  reads to stop the loop after three: LangGraph never checkpoints it, so the session carries
  it between the steps of a turn and drops it where plain's run ends;
- ``trail``: a `Topic` that accumulates across turns;
- ``merge``: the ``audit`` and ``tally`` nodes both lead to ``merge`` (a waiting edge,
  NamedBarrierValue), which runs once when both have.

Every node and the tool log what they saw, so the harness compares it in order.
"""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any, Required

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage
from langchain_core.tools import BaseTool, tool
from langgraph.channels import EphemeralValue, Topic, UntrackedValue
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import InjectedState, ToolNode
from typing_extensions import TypedDict

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.harness import Built, Scenario, assert_same_run, run_both


class State(TypedDict, total=False):
    messages: Required[Annotated[list[AnyMessage], add_messages]]
    steps: Annotated[int, operator.add]
    last_node: str
    note: Annotated[str, EphemeralValue]
    run_calls: Annotated[int, UntrackedValue]
    trail: Annotated[list[str], Topic(str, accumulate=True)]


def channels_graph(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    @tool
    def lookup(key: str, state: Annotated[dict[str, Any], InjectedState]) -> str:
        """Look a key up."""
        log.record("tool", "lookup", key=key, note=state.get("note"))
        return f"value of {key}"

    tools: list[BaseTool] = [lookup]
    bound = model.bind_tools(tools)

    async def agent(state: State) -> dict[str, Any]:
        calls = state.get("run_calls", 0)
        log.record("hook", "agent", run_calls=calls, note=state.get("note"), steps=state.get("steps", 0))
        answer = await bound.ainvoke(state["messages"])
        return {
            "messages": [answer],
            "steps": 1,
            "last_node": "agent",
            "note": f"model call {calls + 1}",
            "run_calls": calls + 1,
            "trail": f"agent {calls + 1}",
        }

    def route(state: State) -> str:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and last.tool_calls and state.get("run_calls", 0) < 3:
            return "tools"
        return END

    # Async (no await inside): audit and tally run in one super-step, and a sync node would
    # run in a thread, logging in any order.
    async def audit(state: State) -> dict[str, Any]:
        log.record("hook", "audit", note=state.get("note"), run_calls=state.get("run_calls"))
        return {"last_node": "audit", "trail": "audit"}

    async def tally(state: State) -> dict[str, Any]:
        log.record("hook", "tally", steps=state.get("steps"))
        return {"steps": 1, "trail": "tally"}

    async def merge(state: State) -> dict[str, Any]:
        log.record("hook", "merge", trail=list(state.get("trail", [])))
        return {"last_node": "merge"}

    builder = StateGraph(State)
    builder.add_node("agent", agent)  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("tools", ToolNode(tools))  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("audit", audit)  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("tally", tally)  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("merge", merge)  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", END])
    builder.add_edge("tools", "audit")
    builder.add_edge("tools", "tally")
    builder.add_edge(["audit", "tally"], "merge")
    builder.add_edge("merge", "agent")
    return Built(builder.compile(checkpointer=checkpointer), tools)  # pyright: ignore[reportUnknownMemberType]


def lookup(key: str) -> ModelReply:
    return ModelReply.call(ScriptedToolCall(f"call_{key}", "lookup", {"key": key}))


async def test_each_channel_kind_holds_across_the_steps_what_it_holds_in_one_plain_run(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="channels",
        build=channels_graph,
        script=[lookup("a"), lookup("b"), lookup("c"), ModelReply.say("A fresh run.")],
        turns=["look up a, b and c", "again"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    agents = [run for run in plain.hook_runs if run["name"] == "agent"]
    # UntrackedValue: counts within the run, and the third call's calls are not run (the
    # router stops); turn 2 is a new run, so it starts empty again.
    assert [run["run_calls"] for run in agents] == [0, 1, 2, 0]
    assert [run["key"] for run in plain.tool_runs] == ["a", "b"]
    # EphemeralValue: the tool (the next super-step) sees the agent's note; audit does not.
    assert [run["note"] for run in plain.tool_runs] == ["model call 1", "model call 2"]
    assert {run["note"] for run in plain.hook_runs if run["name"] == "audit"} == {None}
    # The waiting edge: merge runs once per tool round, after audit and tally.
    assert [run["name"] for run in plain.hook_runs].count("merge") == 2
    # Reducers, a plain key and the accumulating Topic, across both turns.
    assert plain.state["steps"] == 6
    assert plain.state["last_node"] == "agent"
    assert plain.state["trail"].count("audit") == 2
    assert "run_calls" not in plain.state  # never checkpointed
    assert_same_run(plain, session)
