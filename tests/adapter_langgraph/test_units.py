"""Parts of the adapter that need no dev server: plugin, models, effects, tools, run state."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph
from pydantic import SecretStr

from sessionflow import (
    AgentMessage,
    AgentSessionOptions,
    AgentToolCall,
    AgentToolCallStatus,
    ImageInput,
    MessageRole,
    ToolEffect,
    ToolPolicy,
)
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import (
    AgentEventWriter,
    AgentTurnContext,
    DeferredToolCall,
    DeferredToolExecution,
    HarnessContext,
    TookEffect,
    ToolCallsRequested,
    ToolExecutionError,
    ToolInvocation,
    ToolSpec,
    TurnCompleted,
    VerifyCall,
    VerifyResult,
    current_tool_invocation,
    tool_invocation_scope,
)
from sessionflow.plugins import SessionflowPlugins, build_runner
from sessionflow_langgraph import (
    EFFECT_METADATA_KEY,
    INTERRUPT_TOOL,
    RUN_STATE_VERSION,
    ChatOpenAICompatible,
    LangGraphRunner,
    chat_model,
    langgraph_runner,
    tool_effect,
    tool_from_spec,
)
from sessionflow_langgraph._deferred_calls import CallDeferral
from sessionflow_langgraph._messages import framework_message, history_message
from sessionflow_langgraph._plugin import CAPABILITIES

EMPTY: dict[str, Any] = {"type": "object", "properties": {}}


def tool_with(metadata: dict[str, Any] | None, name: str = "t") -> BaseTool:
    def run() -> str:
        return "x"

    return StructuredTool.from_function(run, name=name, description="d", metadata=metadata)


# -- plugin and models --------------------------------------------------------------------


def test_registers_the_langgraph_framework() -> None:
    plugins = SessionflowPlugins()
    plugins.load()
    spec = plugins.framework("langgraph")
    assert spec.model_api == "chat_completions"
    assert spec.capabilities == CAPABILITIES
    assert spec.plugin_name == "langgraph"


@pytest.mark.parametrize(
    ("api", "kind", "responses"),
    [
        (None, ChatOpenAICompatible, False),
        ("chat_completions", ChatOpenAICompatible, False),
        ("responses", ChatOpenAICompatible, True),
        ("anthropic_messages", ChatAnthropic, False),
    ],
)
def test_the_runner_speaks_the_api_the_context_asks_for(api: Any, kind: type, responses: bool) -> None:
    spec = SessionflowPlugins()
    spec.load()
    framework = spec.framework("langgraph")
    context = HarnessContext(
        flow_type="langgraph-api",
        model="m",
        system_prompt=None,
        workspace=Path("/tmp"),
        options=AgentSessionOptions(),
        tools=[],
        settings={},
        model_base_url="http://127.0.0.1:9/v1",
        api_key="test",
        api=api,
    )
    runner = build_runner(framework, context)
    assert isinstance(runner, LangGraphRunner)
    model = chat_model("m", base_url="http://127.0.0.1:9/v1", api_key="test", api=api)
    assert isinstance(model, kind)
    if isinstance(model, ChatOpenAI):
        assert model.use_responses_api is responses
        assert model.max_retries == 0 and model.stream_usage is True


def test_chat_model_picks_the_provider_by_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    anthropic = chat_model("anthropic:claude-sonnet-4-5")
    assert isinstance(anthropic, ChatAnthropic) and anthropic.model == "claude-sonnet-4-5"
    assert anthropic.anthropic_api_key.get_secret_value() == "env-key"
    openai = chat_model("openai:gpt-4.1", base_url="http://127.0.0.1:9/v1", api_key="k")
    assert isinstance(openai, ChatOpenAICompatible) and openai.model_name == "gpt-4.1"
    assert openai.openai_api_base == "http://127.0.0.1:9/v1"
    bare = chat_model("gpt-4.1-mini", base_url="http://127.0.0.1:9/v1", settings={"temperature": 0.5})
    assert isinstance(bare, ChatOpenAICompatible) and bare.temperature == 0.5


async def test_chat_openai_compatible_keeps_reasoning_content() -> None:
    async with ScriptedModelServer() as server:
        server.script(
            "r", [ModelReply.say("answer", reasoning="because"), ModelReply.say("again", reasoning="so")]
        )
        model = ChatOpenAICompatible(
            model="m", base_url=server.base_url("r"), api_key=SecretStr("k"), max_retries=0
        )
        streamed = [chunk async for chunk in model.astream("hi")]
        assert "".join(str(c.additional_kwargs.get("reasoning_content", "")) for c in streamed) == "because"
        whole = await model.ainvoke("hi")
        assert whole.additional_kwargs["reasoning_content"] == "so"


# -- effects and tools ------------------------------------------------------------------


def test_tool_effect_from_metadata() -> None:
    assert tool_effect(tool_with(None)) is None
    assert tool_effect(tool_with({EFFECT_METADATA_KEY: ToolEffect.READ})) is ToolEffect.READ
    assert tool_effect(tool_with({EFFECT_METADATA_KEY: "idempotent_write"})) is ToolEffect.IDEMPOTENT_WRITE
    assert tool_effect(tool_with({"mcp_annotations": {"readOnlyHint": True}})) is ToolEffect.READ
    # langchain-mcp-adapters puts the hints at the top level of the metadata.
    assert tool_effect(tool_with({"idempotentHint": True, "title": "x"})) is ToolEffect.IDEMPOTENT_WRITE
    # No true hint: None, so the session's default effect decides (as for a plain tool).
    assert tool_effect(tool_with({"destructiveHint": False})) is None
    assert tool_effect(tool_with({"mcp_annotations": {"readOnlyHint": False}})) is None
    with pytest.raises(ValueError, match="sessionflow_effect"):
        tool_effect(tool_with({EFFECT_METADATA_KEY: "harmless"}))
    with pytest.raises(ValueError, match="sessionflow_effect"):
        langgraph_runner(graph=lambda tools: _plain_graph(), tools=[tool_with({EFFECT_METADATA_KEY: "nope"})])


def _plain_graph() -> StateGraph[MessagesState]:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", lambda state: {})  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    return builder


async def test_tool_from_spec_passes_schema_effect_and_invocation() -> None:
    seen: list[ToolInvocation] = []

    def handler(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
        seen.append(invocation)
        return json.dumps(arguments)

    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    spec = ToolSpec(
        name="find",
        description="Find.",
        parameters=schema,
        effect=None,
        policy=ToolPolicy(effect=ToolEffect.READ),
        handler=handler,
        mcp_annotations={"readOnlyHint": True},
    )
    converted = tool_from_spec(spec)
    assert converted.args_schema == schema
    assert tool_effect(converted) is ToolEffect.READ
    assert converted.metadata == {EFFECT_METADATA_KEY: "read", "mcp_annotations": {"readOnlyHint": True}}
    with pytest.raises(RuntimeError, match="only inside a sessionflow tool step"):
        await converted.ainvoke({"q": "x"})
    runner = langgraph_runner(graph=lambda tools: _plain_graph(), tool_sources=[spec])
    # A plain interrupt()'s question is the one entry no tool of the graph makes.
    assert runner.tool_catalog({}) == {"find": schema, INTERRUPT_TOOL: {"type": "object"}}
    call = execution("find", '{"q": "x"}')
    with tool_invocation_scope(call.invocation):  # what the tool activity does
        result = await runner.execute_deferred_tool_call(call)
    assert result.output == '{"q": "x"}'
    assert [(i.tool_call_id, i.idempotency_key, i.attempt) for i in seen] == [("c1", "s/turn-1/c1", 2)]
    assert current_tool_invocation() is None


async def test_a_spec_with_verify_is_deferred_verifiable_and_answers_verify_tool_call() -> None:
    asked: list[tuple[dict[str, Any], VerifyCall]] = []

    def verify(arguments: dict[str, Any], call: VerifyCall) -> VerifyResult:
        asked.append((arguments, call))
        return TookEffect(output=f"found {call.idempotency_key}")

    def paid(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
        return "paid"

    def spec(name: str, **extra: Any) -> ToolSpec:
        return ToolSpec(
            name=name,
            description="Pay.",
            parameters={"type": "object", "properties": {"amount": {"type": "integer"}}},
            effect=ToolEffect.NON_IDEMPOTENT_WRITE,
            policy=None,
            handler=paid,
            **extra,
        )

    def basis(arguments: dict[str, Any]) -> str:
        return f"before {arguments['amount']}"

    pay = spec("pay", verify=verify, verify_basis=basis)
    runner = langgraph_runner(graph=lambda tools: _plain_graph(), tool_sources=[pay, spec("plain")])
    deferral = CallDeferral(effects={}, specs={"pay": pay, "plain": spec("plain")})
    policy = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)

    def deferred(name: str, arguments: str) -> DeferredToolCall:
        return DeferredToolCall(tool_call_id="c1", tool_name=name, arguments=arguments, policy=policy)

    # The basis is taken from the arguments when the call is deferred; malformed arguments
    # still defer verifiable (the write fails on them), with no basis.
    made = await deferral.verifiable(deferred("pay", '{"amount": 10}'))
    assert (made.verifiable, made.verify_basis) == (True, "before 10")
    malformed = await deferral.verifiable(deferred("pay", "{not json"))
    assert (malformed.verifiable, malformed.verify_basis) == (True, None)
    plain = await deferral.verifiable(deferred("plain", "{}"))
    assert (plain.verifiable, plain.verify_basis) == (False, None)

    answer = await runner.verify_tool_call(execution("pay", '{"amount": 10}'))
    assert answer == TookEffect(output="found s/turn-1/c1")
    [(arguments, call)] = asked
    assert arguments == {"amount": 10}
    assert (call.tool_call_id, call.idempotency_key, call.tool_name) == ("c1", "s/turn-1/c1", "pay")
    # A tool without a verify, or not from a spec, has none: the call stays outcome_unknown.
    assert await runner.verify_tool_call(execution("plain", "{}")) is None
    assert await runner.verify_tool_call(execution("other", "{}")) is None


def execution(name: str, arguments: str) -> DeferredToolExecution:
    record = AgentToolCall(
        tool_call_id="c1",
        tool_name=name,
        arguments=arguments,
        policy=ToolPolicy(effect=ToolEffect.READ),
        deferral_order=0,
        status=AgentToolCallStatus.RUNNING,
    )
    writer = AgentEventWriter(None, turn_id="turn-1", step_execution_id="x", attempt=2)
    return DeferredToolExecution(
        flow_id="s", turn_id="turn-1", tool_call=record, attempt=2, events=writer, heartbeat=lambda *a: None
    )


async def test_tool_failures_the_model_should_see_and_crashes() -> None:
    def broken() -> str:
        raise ToolException("disk full")

    def crashing() -> str:
        raise RuntimeError("boom")

    def typed(n: int) -> str:
        return str(n)

    def failing_handled() -> str:
        raise ToolException("x")

    handled = StructuredTool.from_function(
        failing_handled, description="d", handle_tool_error="handled: nope"
    )
    tools = [
        StructuredTool.from_function(broken, description="d"),
        StructuredTool.from_function(crashing, description="d"),
        StructuredTool.from_function(typed, description="d"),
        handled,
    ]
    runner = langgraph_runner(graph=lambda tools: _plain_graph(), tools=tools)
    with pytest.raises(ToolExecutionError, match="disk full"):
        await runner.execute_deferred_tool_call(execution("broken", "{}"))
    with pytest.raises(RuntimeError, match="boom"):
        await runner.execute_deferred_tool_call(execution("crashing", "{}"))
    with pytest.raises(ToolExecutionError, match="invalid arguments for tool 'typed'"):
        await runner.execute_deferred_tool_call(execution("typed", '{"n": "seven"}'))
    with pytest.raises(ToolExecutionError, match="not valid JSON"):
        await runner.execute_deferred_tool_call(execution("typed", '{"n": '))
    with pytest.raises(ToolExecutionError, match="unknown tool 'nope'"):
        await runner.execute_deferred_tool_call(execution("nope", "{}"))
    # A handled ToolException comes back as an error ToolMessage: still a failure.
    with pytest.raises(ToolExecutionError, match="handled: nope"):
        await runner.execute_deferred_tool_call(execution("failing_handled", "{}"))
    assert (await runner.execute_deferred_tool_call(execution("typed", '{"n": 7}'))).output == "7"


def test_tool_node_must_be_a_node_of_the_graph() -> None:
    with pytest.raises(
        ValueError, match=r"tool_node 'act' is not a node of the graph; its nodes are 'tools'"
    ):
        langgraph_runner(graph=_plain_graph(), tool_node="act")
    with pytest.raises(ValueError, match=r"exactly one of model= .* or graph="):
        langgraph_runner()


# -- messages and the run state ---------------------------------------------------------


def turn(
    runner: LangGraphRunner,
    messages: list[AgentMessage],
    state: str | None = None,
    records: Sequence[AgentToolCall] = (),
) -> AgentTurnContext:
    options = AgentSessionOptions()
    return AgentTurnContext(
        flow_id="s",
        turn_id="turn-1",
        attempt=1,
        messages=messages,
        framework_run_state=state,
        tool_calls={r.tool_call_id: r for r in records},
        policy_resolver=options.resolve_tool_policy,
        events=AgentEventWriter(None, turn_id="turn-1", step_execution_id="x", attempt=1),
        heartbeat=lambda *a: None,
    )


async def test_run_state_is_versioned_json_without_the_history(tmp_path: Path) -> None:
    image = tmp_path / "red.png"
    image.write_bytes(b"\x89PNG-not-really")
    async with ScriptedModelServer() as server:
        server.script(
            "s", [ModelReply.call(ScriptedToolCall("c1", "lookup", {"city": "Oslo"})), ModelReply.say("ok")]
        )
        model = ChatOpenAI(model="m", base_url=server.base_url("s"), api_key=SecretStr("k"), max_retries=0)

        def lookup(city: str) -> str:
            """Look up."""
            return city

        runner = langgraph_runner(model=model, tools=[lookup])
        user = runner.build_user_message_with_images(
            "what is this? " * 50, [ImageInput(path=str(image), media_type="image/png")]
        )
        assert user.role is MessageRole.USER
        assert user.framework_item["data"]["content"][1] == {
            "type": "sessionflow_image",
            "path": str(image),
            "mime_type": "image/png",
        }
        history = [AgentMessage(sequence=1, turn_id="turn-1", message=user)]
        first = await runner.run_model_step(turn(runner, history))
        assert isinstance(first, ToolCallsRequested)
        raw = json.loads(first.framework_run_state)
        # Without subgraph checkpoints the run state is still version 1, as before version 2.
        assert raw["v"] == 1 < RUN_STATE_VERSION and raw["pending"] == ["c1"]
        assert raw["history"]["count"] == 1
        # The history (with its image bytes) is cut out of the checkpoint.
        assert "what is this?" not in first.framework_run_state and len(first.framework_run_state) < 4000
        assert server.requests("s")[0].saw("what is this?")
        encoded = base64.b64encode(image.read_bytes()).decode()
        assert encoded in json.dumps(server.requests("s")[0].body)

        record = AgentToolCall(
            tool_call_id="c1",
            tool_name="lookup",
            arguments=first.tool_calls[0].arguments,
            policy=first.tool_calls[0].policy,
            deferral_order=0,
            status=AgentToolCallStatus.SUCCEEDED,
            output="Oslo",
        )
        with pytest.raises(ValueError, match="unsupported sessionflow-langgraph run state version 99"):
            await runner.run_model_step(turn(runner, history, json.dumps({**raw, "v": 99}), [record]))
        final = await runner.run_model_step(turn(runner, history, first.framework_run_state, [record]))
        assert isinstance(final, TurnCompleted)
        kinds = [(m.role, m.framework_item["type"]) for m in final.new_messages]
        assert kinds == [
            (MessageRole.ASSISTANT, "ai"),
            (MessageRole.TOOL, "tool"),
            (MessageRole.ASSISTANT, "ai"),
        ]
        assert final.new_messages[-1].text == "ok"
        assert len(server.requests("s")) == 2


def test_stored_messages_round_trip() -> None:
    runner = langgraph_runner(graph=_plain_graph())
    ai = AIMessage(content="hi", tool_calls=[{"name": "x", "args": {"a": 1}, "id": "c1"}], id="m1")
    for message in (HumanMessage("hello"), ai, ToolMessage("out", tool_call_id="c1", status="error")):
        stored = framework_message(message)
        json.dumps(stored.framework_item)
        back = history_message(AgentMessage(sequence=3, turn_id="t", message=stored))
        assert type(back) is type(message) and back.content == message.content
        assert back.id == (message.id or "sessionflow-3")
    assert runner.build_user_message("hey").framework_item == {
        "type": "human",
        "data": {
            "content": "hey",
            "additional_kwargs": {},
            "response_metadata": {},
            "type": "human",
            "name": None,
            "id": None,
        },
    }
