"""A streamed answer is kept as a non-streamed call returns it: the next turn's request is plain's.

A session streams every model call (its text deltas). ``ChatAnthropic`` merges a stream into
a message that ``invoke`` would not return: each block keeps its stream ``index``, a
``tool_use`` block an empty ``input`` beside its ``partial_json``, and a lone text answer is
a list of one text block instead of a string, which the next turn would send back as a
list. The adapter keeps each answer as the non-streamed call builds it, so against the
docs' plain ``invoke`` the requests, the state and the stored transcript are the same
(`kept_as_invoked` says how the streaming flags and response metadata compare).
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.docs_tools import get_weather
from tests.adapter_langgraph.differential.harness import Built, Compiled, Scenario, assert_same_run, run_both


def weather_agent(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    """LangChain's quickstart agent (langchain docs, "Agents")."""
    tools = [get_weather(log)]
    graph = cast(
        Compiled,
        create_agent(
            model, tools=tools, system_prompt="You are a helpful assistant", checkpointer=checkpointer
        ),
    )
    return Built(graph, tools)


async def test_claude_answers_are_kept_as_invoke_returns_them_over_two_turns(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="anthropic-invoke",
        build=weather_agent,
        api="anthropic",
        plain_call="invoke",
        script=[
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"}), text="Let me check."),
            ModelReply.say("It's always sunny in sf!", chunks=["It's always ", "sunny in sf!"]),
            ModelReply.say("Sunny tomorrow too.", reasoning="The tool said always."),
            ModelReply.say("Bye!"),
        ],
        turns=["what is the weather in sf", "and tomorrow?", "thanks"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # The docs' invoke keeps a lone text answer as a string, and the next turn sends it so.
    assistant = [m for m in plain.requests[2]["messages"] if m["role"] == "assistant"]
    assert assistant[-1]["content"] == "It's always sunny in sf!"
    tool_use = assistant[0]["content"][-1]
    assert tool_use == {"type": "tool_use", "id": "call_sf", "name": "get_weather", "input": {"city": "sf"}}
    stored = [m["data"]["content"] for m in session.transcript if m["type"] == "ai"]
    assert stored[1] == "It's always sunny in sf!"
    assert not any("partial_json" in str(content) or "'index'" in str(content) for content in stored)
    assert_same_run(plain, session)
