"""The swarm pattern: langgraph-swarm's README graph (issue 21, item 4).

``create_swarm`` with the README's Alice (an addition expert) and Bob (a pirate), LangChain
v1 agents added as nodes, each with a swarm handoff tool to the other. The swarm remembers
the active agent in its state (``active_agent``), so the second turn starts with Bob, as
the README's two ``invoke`` calls on one thread do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph
from langgraph_swarm import create_handoff_tool, create_swarm  # pyright: ignore[reportUnknownVariableType]

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.harness import Built, Compiled, Scenario, assert_same_run, run_both
from tests.adapter_langgraph.differential.multi_agent_tools import add


def alice_and_bob(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    alice = cast(
        Compiled,
        create_agent(
            model,
            tools=[
                add(log),
                create_handoff_tool(
                    agent_name="Bob",
                    description="Transfer to Bob",
                ),
            ],
            system_prompt="You are Alice, an addition expert.",
            name="Alice",
        ),
    )
    bob = cast(
        Compiled,
        create_agent(
            model,
            tools=[
                create_handoff_tool(
                    agent_name="Alice",
                    description="Transfer to Alice, she can help with math",
                ),
            ],
            system_prompt="You are Bob, you speak like a pirate.",
            name="Bob",
        ),
    )
    workflow = cast(StateGraph[Any, Any, Any, Any], create_swarm([alice, bob], default_active_agent="Alice"))
    return Built(workflow.compile(checkpointer=checkpointer))  # pyright: ignore[reportUnknownMemberType]


SWARM_SCRIPT = [
    # turn 1: "i'd like to speak to Bob"
    ModelReply.call(ScriptedToolCall("call_bob", "transfer_to_bob", {})),
    ModelReply.say("Ahoy, matey! Bob at yer service."),
    # turn 2: "what's 5 + 7?" starts with Bob, the active agent
    ModelReply.call(ScriptedToolCall("call_alice", "transfer_to_alice", {})),
    ModelReply.call(ScriptedToolCall("call_add", "add", {"a": 5, "b": 7})),
    ModelReply.say("5 + 7 is 12."),
]
SWARM_TURNS = ["i'd like to speak to Bob", "what's 5 + 7?"]


async def test_a_swarm_hands_off_and_the_next_turn_starts_with_the_active_agent(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(name="swarm", build=alice_and_bob, script=SWARM_SCRIPT, turns=SWARM_TURNS)
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == [{"name": "add", "a": 5, "b": 7}]
    assert plain.state["active_agent"] == "Alice"
    # Turn 2's first call is Bob's, with the whole thread.
    turn_2 = plain.requests[2]["messages"]
    assert turn_2[0]["content"] == "You are Bob, you speak like a pirate."
    assert turn_2[-1]["content"] == "what's 5 + 7?"
    assert_same_run(plain, session)
