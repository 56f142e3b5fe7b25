"""The supervisor pattern: langgraph-supervisor's README graph (issue 21, item 4).

``create_supervisor`` with the README's math and research experts (prebuilt ReAct agents).
The supervisor is an agent subgraph whose tool node runs its handoff tools
(``transfer_to_math_expert``, a ``Command(graph=Command.PARENT)``); each expert is a subgraph
called from inside a node function of the supervisor's graph, with its own tool node; an
expert's answer goes back to the supervisor without a model call (its handoff-back messages).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph
from langgraph.prebuilt import create_react_agent  # pyright: ignore[reportDeprecated, reportUnknownVariableType]
from langgraph_supervisor import create_handoff_tool, create_supervisor  # pyright: ignore[reportUnknownVariableType] - partial stubs

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.harness import Built, Compiled, Scenario, assert_same_run, run_both
from tests.adapter_langgraph.differential.multi_agent_tools import add, multiply, web_search


def supervisor_of_two_experts(
    model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None
) -> Built:
    return _supervisor(model, log, checkpointer, handoff_tools=None)


def supervisor_with_its_handoff_tools(
    model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None
) -> Built:
    """The same, with the handoff tools given in a fixed order (the README's "custom handoff tools").

    ``create_supervisor`` makes its handoff tools from a set of agent names, so their order
    follows the process's string hash seed: a graph built in a worker child offers them in
    another order than one built in the test process. A crash run builds the graph in both.
    """
    tools = [create_handoff_tool(agent_name="research_expert"), create_handoff_tool(agent_name="math_expert")]
    return _supervisor(model, log, checkpointer, handoff_tools=tools)


def _supervisor(
    model: BaseChatModel,
    log: InvocationLog,
    checkpointer: InMemorySaver | None,
    *,
    handoff_tools: list[BaseTool] | None,
) -> Built:
    math_agent = cast(
        Compiled,
        create_react_agent(  # pyright: ignore[reportDeprecated]
            model=model,
            tools=[add(log), multiply(log)],
            name="math_expert",
            prompt="You are a math expert. Always use one tool at a time.",
        ),
    )
    research_agent = cast(
        Compiled,
        create_react_agent(  # pyright: ignore[reportDeprecated]
            model=model,
            tools=[web_search(log)],
            name="research_expert",
            prompt="You are a world class researcher with access to web search. Do not do any math.",
        ),
    )
    workflow: StateGraph[Any, Any, Any, Any] = create_supervisor(  # pyright: ignore[reportUnknownVariableType]
        [research_agent, math_agent],
        model=model,
        prompt=(
            "You are a team supervisor managing a research expert and a math expert. "
            "For current events, use research_agent. "
            "For math problems, use math_agent."
        ),
        tools=list[Any](handoff_tools) if handoff_tools is not None else None,
    )
    return Built(workflow.compile(checkpointer=checkpointer))  # pyright: ignore[reportUnknownMemberType]


SUPERVISOR_SCRIPT = [
    ModelReply.call(ScriptedToolCall("call_research", "transfer_to_research_expert", {})),
    ModelReply.call(ScriptedToolCall("call_search", "web_search", {"query": "FAANG headcount 2024"})),
    ModelReply.say("Meta 67,317; Apple 164,000; Amazon 1,551,000; Netflix 14,000; Google 181,269."),
    ModelReply.call(ScriptedToolCall("call_math", "transfer_to_math_expert", {})),
    ModelReply.call(ScriptedToolCall("call_add", "add", {"a": 67317, "b": 164000})),
    ModelReply.say("The sum is 231,317 so far."),
    ModelReply.say("The combined headcount starts at 231,317 for Meta and Apple."),
]
SUPERVISOR_TURN = "what's the combined headcount of the FAANG companies in 2024?"


async def test_a_supervisor_hands_off_to_each_expert_and_gets_their_answers_back(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="supervisor",
        build=supervisor_of_two_experts,
        script=SUPERVISOR_SCRIPT,
        turns=[SUPERVISOR_TURN],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == [
        {"name": "web_search", "query": "FAANG headcount 2024"},
        {"name": "add", "a": 67317, "b": 164000},
    ]
    assert len(plain.requests) == len(SUPERVISOR_SCRIPT)
    # The supervisor's last call saw both experts' answers, handed back without a model call.
    last = [m.get("content") for m in plain.requests[-1]["messages"]]
    assert "Transferring back to supervisor" in last
    assert "The sum is 231,317 so far." in last
    assert_same_run(plain, session)
