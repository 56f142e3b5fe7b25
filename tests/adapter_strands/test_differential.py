"""Strands agents from its docs, plain and as sessions on one scripted server: the same model
requests call by call, the same final messages and `agent.state`, the same real tool runs."""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_strands import agents
from tests.adapter_strands.harness import Scenario, assert_same_run, run_both


async def test_quickstart_letter_counter(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="letters",
        build=agents.letter_counter_agent,
        script=[
            ModelReply(
                tool_calls=[
                    ScriptedToolCall(
                        id="c1", name="letter_counter", arguments={"word": "strawberry", "letter": "r"}
                    )
                ]
            ),
            ModelReply(text="There are 3 r's in strawberry."),
            ModelReply(text="You asked about strawberry."),
        ],
        # The second turn sends the first again: the call's input {"word", "letter"} in the
        # model's key order, which a message stored as an object would lose.
        turns=["How many letter R's are in the word 'strawberry'?", "Which word was it?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    assert_same_run(plain, session)
    assert [r["name"] for r in session.tool_runs] == ["letter_counter"]
    assert session.messages[3]["content"] == [{"text": "There are 3 r's in strawberry."}]
    # The tool's result, as Strands sent it to the model (a `tool` message on the wire).
    assert session.requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": "c1", "content": "3"}


async def test_tool_error_reaches_the_model_as_strands_words_it(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="letters-error",
        build=agents.letter_counter_agent,
        script=[
            ModelReply(
                tool_calls=[
                    ScriptedToolCall(
                        id="c1", name="letter_counter", arguments={"word": "abc", "letter": "ab"}
                    )
                ]
            ),
            ModelReply(text="Give me one letter."),
        ],
        turns=["Count 'ab' in abc"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    assert_same_run(plain, session)
    result = session.messages[2]["content"][0]["toolResult"]
    assert result["status"] == "error"
    assert "single character" in result["content"][0]["text"]


async def test_parallel_sync_and_async_tools_two_turns(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="two-tools",
        build=agents.two_tools_agent,
        script=[
            ModelReply(
                tool_calls=[
                    ScriptedToolCall(id="w1", name="weather", arguments={"city": "Paris"}),
                    ScriptedToolCall(id="f1", name="forecast", arguments={"city": "Paris", "days": 2}),
                ]
            ),
            ModelReply(text="Sunny now and for 2 days."),
            ModelReply(text="You asked about Paris."),
        ],
        turns=["Weather and forecast for Paris?", "Which city did I ask about?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    # Strands runs one response's tools concurrently, so their runs (and results) are
    # compared as sets; the session puts the results in the model's order.
    assert sorted(session.tool_runs, key=str) == sorted(plain.tool_runs, key=str)
    plain_results = sorted(plain.messages[2]["content"], key=str)
    assert sorted(session.messages[2]["content"], key=str) == plain_results
    assert [b["toolResult"]["toolUseId"] for b in session.messages[2]["content"]] == ["w1", "f1"]
    # The second turn's request holds the first turn's whole conversation.
    assert len(session.requests) == len(plain.requests) == 3
    assert session.requests[0] == plain.requests[0]
    assert session.messages[3:] == plain.messages[3:]
    assert session.state == plain.state == {}


async def test_agent_state_from_tool_context_carried_between_turns(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="state",
        build=agents.state_agent,
        script=[
            ModelReply(
                tool_calls=[
                    ScriptedToolCall(id="a1", name="track_user_action", arguments={"action": "login"})
                ]
            ),
            ModelReply(text="Recorded."),
            ModelReply(
                tool_calls=[ScriptedToolCall(id="a2", name="track_user_action", arguments={"action": "buy"})]
            ),
            ModelReply(text="Recorded again."),
        ],
        turns=["I logged in", "I bought something"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    assert_same_run(plain, session)
    assert session.state == {"user_preferences": {"theme": "dark"}, "action_count": 2, "last_action": "buy"}
    # The second turn's tool saw the first turn's count: the state was carried.
    assert [r["seen"] for r in session.tool_runs] == [0, 1]
    assert session.snapshot is not None and session.snapshot.framework_state == {"agent_state": session.state}


async def test_class_based_tool_with_a_json_result(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="class-tool",
        build=agents.class_tool_agent,
        script=[
            ModelReply(tool_calls=[ScriptedToolCall(id="k1", name="stock", arguments={"item": "pens"})]),
            ModelReply(text="4 pens."),
            ModelReply(text="Still 4."),
        ],
        turns=["How many pens?", "And now?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    assert_same_run(plain, session)
    assert session.messages[2]["content"][0]["toolResult"]["content"] == [
        {"json": {"item": "pens", "count": 4}}
    ]
    # The third request (second turn) sends the whole first turn again.
    assert len(session.requests[2]["messages"]) == 1 + 4 + 1


async def test_a_session_started_from_an_existing_conversation(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    history = [
        {"role": "user", "content": [{"text": "My name is Ada."}]},
        {"role": "assistant", "content": [{"text": "Hello Ada."}]},
    ]
    scenario = Scenario(
        name="history",
        build=agents.letter_counter_agent,
        script=[ModelReply(text="Your name is Ada.")],
        turns=["What is my name?"],
        history=history,
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    assert_same_run(plain, session)
    assert session.requests[0]["messages"][1:3] == [
        {"role": "user", "content": [{"text": "My name is Ada.", "type": "text"}]},
        {"role": "assistant", "content": [{"text": "Hello Ada.", "type": "text"}]},
    ]


async def test_anthropic_model_with_the_workspace_anthropic_client(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    # Strands' `[anthropic]` extra pins anthropic<1; its AnthropicModel works with the
    # workspace's anthropic 2.x too (README, "Versions").
    scenario = Scenario(
        name="anthropic",
        build=agents.state_agent,
        api="anthropic",
        script=[
            ModelReply(
                tool_calls=[
                    ScriptedToolCall(id="a1", name="track_user_action", arguments={"action": "login"})
                ]
            ),
            ModelReply(text="Recorded."),
            ModelReply(text="One action so far."),
        ],
        turns=["I logged in", "How many actions?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    assert_same_run(plain, session)
    # The Anthropic Messages wire: the tool's result went back as a tool_result block.
    assert session.requests[0]["max_tokens"] == 512
    assert session.requests[1]["messages"][-1]["content"][0]["type"] == "tool_result"
    assert session.state["action_count"] == 1
