"""Existing history: a session started from a Pydantic AI history behaves as ``agent.run(message_history=...)``.

The history is made the way a user has one: a plain run of the agent (a tool call, then
the answer) on its own key of the scripted server, ``result.all_messages()``. Then:

- plain: ``agent.run(prompt, message_history=history)``;
- session: ``start_session(..., prompt, history=history_messages(history))``.

Both must send the same requests and give the same output, and `export_history` of the
session must be plain's ``result.all_messages()`` (normalised as the harness normalises
any history). A round-trip test checks the conversion alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from sessionflow import AgentMessage, AgentSnapshot, AgentUsage, MessageRole
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import FrameworkMessage
from sessionflow.session.transcript import HISTORY_TURN_ID
from sessionflow.testing import InvocationLog, wait_for_agent_snapshot
from sessionflow_pydantic_ai import export_history, export_history_json, history_messages
from tests.adapter_pydantic_ai.differential.harness import (
    Built,
    Models,
    Run,
    assert_same_run,
    session_flow,
    tool_runs,
    unique,
)
from tests.adapter_pydantic_ai.differential.normalise import json_value, normalise_history, normalise_requests
from tests.differential_compare import calls_in_parallel
from tests.serving import serving

EARLIER = "What is 6 times 7?"
PROMPT = "And that plus one?"


def calculator(models: Models, log: InvocationLog) -> Built:
    """Instructions, a system prompt and two tools: each shows in a history's requests.

    Each tool logs the conversation its run context names: the session must go on in the
    history's conversation, as plain ``agent.run`` does, in tool steps as in model steps.
    """
    agent = Agent(models.model(), instructions="Answer with numbers.", system_prompt="You are a calculator.")

    @agent.tool
    def multiply(ctx: RunContext[Any], a: int, b: int) -> int:
        """Multiply two numbers."""
        log.record("tool", "multiply", a=a, b=b, conversation=ctx.conversation_id)
        return a * b

    @agent.tool
    def add(ctx: RunContext[Any], a: int, b: int) -> int:
        """Add two numbers."""
        log.record("tool", "add", a=a, b=b, conversation=ctx.conversation_id)
        return a + b

    return Built(agent=agent)


EARLIER_SCRIPT = [
    ModelReply.call(ScriptedToolCall("call_m", "multiply", {"a": 6, "b": 7})),
    ModelReply.say("42"),
]
SCRIPT = [ModelReply.call(ScriptedToolCall("call_a", "add", {"a": 42, "b": 1})), ModelReply.say("43")]


async def existing_history(server: ScriptedModelServer, key: str, log_dir: Path) -> list[ModelMessage]:
    """A conversation as a user has one: a plain run's ``result.all_messages()``."""
    server.script(key, EARLIER_SCRIPT)
    built = calculator(Models(server, key), InvocationLog(log_dir / "earlier.jsonl"))
    result = await built.agent.run(EARLIER)
    return result.all_messages()


def _requests(server: ScriptedModelServer, key: str) -> dict[str, list[dict[str, Any]]]:
    return {"": normalise_requests([r.body for r in server.requests(key)])}


async def run_plain(server: ScriptedModelServer, key: str, log_dir: Path, history: list[ModelMessage]) -> Run:
    server.script(key, SCRIPT)
    log = InvocationLog(log_dir / "plain.jsonl")
    result = await calculator(Models(server, key), log).agent.run(PROMPT, message_history=history)
    return Run(
        requests=_requests(server, key),
        outputs=[json_value(result.output)],
        errors=[None],
        history=normalise_history(
            ModelMessagesTypeAdapter.dump_python(result.all_messages(), mode="json"), key=key
        ),
        asked=[],
        tool_runs=tool_runs(log),
        concurrent_tools=calls_in_parallel(SCRIPT),
    )


async def run_session(
    server: ScriptedModelServer, key: str, log_dir: Path, history: list[ModelMessage], temporal_address: str
) -> tuple[Run, list[ModelMessage]]:
    server.script(key, SCRIPT)
    log = InvocationLog(log_dir / "session.jsonl")
    async with serving(temporal_address, session_flow(calculator(Models(server, key), log), key)) as sessions:
        await sessions.start_session(key, PROMPT, history=history_messages(history))
        snapshot = await wait_for_agent_snapshot(
            sessions,
            key,
            lambda s: s if s.state and s.state.turn_count == 1 and not s.state.turn_id else None,
            description="the first turn to end",
            timeout=90,
        )
        stored = await sessions.export_messages(key)
    assert snapshot.state is not None
    assert [m.turn_id for m in stored[: len(history)]] == [HISTORY_TURN_ID] * len(history)
    answer = [m for m in stored if m.message.role is MessageRole.ASSISTANT][-1].message.text
    exported = export_history(stored)
    run = Run(
        requests=_requests(server, key),
        outputs=[answer],
        errors=[snapshot.state.last_turn_error],
        history=normalise_history(ModelMessagesTypeAdapter.dump_python(exported, mode="json"), key=key),
        asked=[],
        tool_runs=tool_runs(log),
    )
    return run, exported


async def test_a_session_goes_on_from_an_existing_history(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("pai-diff-history")
    history = await existing_history(model_server, f"{key}-earlier", tmp_path)
    plain = await run_plain(model_server, f"{key}-plain", tmp_path, history)
    session, exported = await run_session(model_server, f"{key}-session", tmp_path, history, temporal_address)

    # Facts of the plain run: the model saw the earlier conversation, tool call and result
    # included; the earlier call did not run again; the new one ran in the history's conversation.
    first = plain.requests[""][0]
    roles = [m["role"] for m in first["messages"]]
    assert roles == ["system", "system", "user", "assistant", "tool", "assistant", "user"]
    assert plain.outputs == ["43"]
    conversation = history[-1].conversation_id
    assert conversation
    assert plain.tool_runs == [{"name": "add", "a": 42, "b": 1, "conversation": conversation}]
    assert_same_run(plain, session)
    # The export is the history as Pydantic AI's own JSON round trip gives it back (a
    # datetime in `provider_details`, a dict of any values, comes back as its text).
    stored_form = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(history))
    assert exported[: len(history)] == stored_form


def test_history_round_trips() -> None:
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(content="6 x 7?")], instructions="Answer with numbers."),
        ModelResponse(parts=[ToolCallPart("multiply", {"a": 6, "b": 7}, tool_call_id="c1")]),
        ModelRequest(parts=[ToolReturnPart("multiply", 42, tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("42")]),
    ]
    stored = history_messages(history)
    assert [m.role for m in stored] == [
        MessageRole.USER,
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.ASSISTANT,
    ]
    assert [m.text for m in stored] == ["6 x 7?", None, "42", "42"]
    # Items are JSON (the session stores them as is), and come back as the same messages.
    items = json.loads(json.dumps([m.framework_item for m in stored]))
    reread = [FrameworkMessage(role=m.role, framework_item=i) for m, i in zip(stored, items, strict=True)]
    assert export_history(reread) == history
    assert export_history(stored) == history
    as_json = export_history_json(stored)
    assert ModelMessagesTypeAdapter.validate_json(as_json) == history
    assert history_messages(as_json) == stored


def test_a_partial_snapshot_or_a_preview_is_refused() -> None:
    stored = history_messages([ModelRequest(parts=[UserPromptPart(content="hi")])])
    preview = FrameworkMessage(role=MessageRole.USER, framework_item=None, text="hi")
    with pytest.raises(ValueError, match="kept by reference"):
        export_history([*stored, preview])
    snapshot = AgentSnapshot(
        session_id="s",
        state=None,
        messages=[AgentMessage(sequence=2, turn_id="turn-1", message=stored[0])],
        message_count=2,
        pending_interrupts=[],
        tool_calls=[],
        usage=AgentUsage(),
        queued_message_count=0,
    )
    with pytest.raises(ValueError, match="holds 1 of the session's 2 messages"):
        export_history(snapshot)
