"""Hooks (`HookProvider`s on ``agent.hooks``), plain and as sessions on one scripted server: the
same events in the same order, each once, and a ``BeforeToolCallEvent`` that cancels a call
or replaces its input does so before the tool runs (the tool log says how often it ran)."""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_strands import hooks
from tests.adapter_strands.harness import Scenario, assert_same_run, run_both


def _calls(tmp_path: Path, run: str) -> list[dict[str, object]]:
    return hooks.hook_calls(InvocationLog(tmp_path / f"{run}.jsonl"))


async def test_every_hook_fires_once_where_plain_fires_it(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="hooks",
        build=hooks.recorded_letter_counter_agent,
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
        turns=["How many letter R's are in the word 'strawberry'?", "Which word was it?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    assert_same_run(plain, session)
    assert [r["name"] for r in session.tool_runs] == ["letter_counter"]
    plain_calls, session_calls = _calls(tmp_path, "plain"), _calls(tmp_path, "session")
    assert session_calls == plain_calls
    # What plain Strands fires, spelled out: the start once per turn, not per resumed step.
    assert [c["name"] for c in session_calls] == [
        "BeforeInvocation",
        "MessageAdded",
        "BeforeModelCall",
        "AfterModelCall",
        "MessageAdded",
        "BeforeTools",
        "BeforeToolCall",
        "AfterToolCall",
        "AfterTools",
        "MessageAdded",
        "BeforeModelCall",
        "AfterModelCall",
        "MessageAdded",
        "AfterInvocation",
        "BeforeInvocation",
        "MessageAdded",
        "BeforeModelCall",
        "AfterModelCall",
        "MessageAdded",
        "AfterInvocation",
    ]
    assert session_calls[7] == {
        "name": "AfterToolCall",
        "tool": "letter_counter",
        "status": "success",
        "text": "3",
    }


async def test_a_before_tool_call_hook_replaces_or_cancels_before_the_tool_runs(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="hooks-guard",
        build=hooks.guarded_letter_counter_agent,
        script=[
            ModelReply(
                tool_calls=[
                    ScriptedToolCall(
                        id="c1", name="letter_counter", arguments={"word": "raspberry", "letter": "x"}
                    )
                ]
            ),
            ModelReply(
                tool_calls=[
                    ScriptedToolCall(
                        id="c2", name="letter_counter", arguments={"word": "secret", "letter": "e"}
                    )
                ]
            ),
            ModelReply(text="3 r's; the other word is off limits."),
        ],
        turns=["Count x in raspberry, then e in secret."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    assert_same_run(plain, session)
    # The replaced call ran once, with the hook's input; the cancelled one never ran.
    assert session.tool_runs == [{"name": "letter_counter", "word": "raspberry", "letter": "r"}]
    assert _calls(tmp_path, "session") == _calls(tmp_path, "plain")
    assert session.requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": "c1", "content": "3"}
    assert session.requests[2]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "c2",
        "content": "that word is off limits",
    }


async def test_hooks_that_cancel_the_tools_or_the_model_call_answer_as_plain_does(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="hooks-gate",
        build=hooks.gated_letter_counter_agent,
        script=[
            ModelReply(
                tool_calls=[
                    ScriptedToolCall(
                        id="c1", name="letter_counter", arguments={"word": "secret", "letter": "e"}
                    )
                ]
            ),
        ],
        turns=["Count e in secret."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    # One real model call each; the second is cancelled by the hook before it is made.
    assert len(plain.requests) == len(session.requests) == 1
    assert session.requests == plain.requests
    assert session.messages == plain.messages
    assert session.messages[-2:] == [
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "c1",
                        "status": "error",
                        "content": [{"text": "no tools about secrets"}],
                    }
                }
            ],
        },
        {"role": "assistant", "content": [{"text": "no second look"}]},
    ]
    assert plain.tool_runs == session.tool_runs == []
    assert _calls(tmp_path, "session") == _calls(tmp_path, "plain")
    assert session.snapshot is not None and session.snapshot.messages[-1].message.text == "no second look"
