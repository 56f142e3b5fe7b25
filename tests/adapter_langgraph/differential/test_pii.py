"""LangChain's `PIIMiddleware`: what the model sees and what the session stores are redacted as in plain.

The agent is LangChain's PII docs' ("Built-in middleware: PII detection"): emails redacted,
credit cards masked, API keys blocked, on the user's input. The user's message is stored
before the turn runs; ``before_model`` replaces it in the graph's state with the redacted
one, and the completed turn replaces the stored message too, so the stored transcript (the
API, the console, ``export_messages``) is the graph's history, and the next turn's request
is plain's.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain.agents.middleware import AgentMiddleware, PIIMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver

from sessionflow import AgentSessionClient, connect, serve_agent_flows
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.temporal import PayloadStore
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.conftest import unique
from tests.adapter_langgraph.differential.harness import (
    TURN_ABORTED,
    Built,
    Compiled,
    GraphBuilder,
    Scenario,
    assert_same_run,
    play_session,
    run_both,
    run_plain,
    scripted_model,
    session_flow,
)

EMAIL = "john.doe@example.com"
CARD = "4111-1111-1111-1111"


def customer_service_tool(log: InvocationLog) -> BaseTool:
    def customer_service_tool(query: str) -> str:
        """Look up a customer's record."""
        log.record("tool", "customer_service_tool", query=query)
        return "Customer record: contact jane.roe@example.org for billing."

    return StructuredTool.from_function(customer_service_tool)


def pii_agent(*middleware: AgentMiddleware[Any, Any, Any]) -> GraphBuilder:
    def build(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
        tools = [customer_service_tool(log)]
        graph = cast(
            Compiled, create_agent(model, tools=tools, middleware=list(middleware), checkpointer=checkpointer)
        )
        return Built(graph, tools)

    return build


def docs_middleware() -> list[PIIMiddleware]:
    return [
        PIIMiddleware("email", strategy="redact", apply_to_input=True),
        PIIMiddleware("credit_card", strategy="mask", apply_to_input=True),
        PIIMiddleware("api_key", detector=r"sk-[a-zA-Z0-9]{32}", strategy="block", apply_to_input=True),
    ]


async def test_the_stored_user_message_is_the_redacted_one_and_the_next_turn_sends_it(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="pii-input",
        build=pii_agent(*docs_middleware()),
        script=[
            ModelReply.call(ScriptedToolCall("call_1", "customer_service_tool", {"query": "refund"})),
            ModelReply.say("Your refund is on its way."),
            ModelReply.say("You are welcome."),
        ],
        turns=[f"My email is {EMAIL} and my card is {CARD}; refund me", "thanks"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    first = plain.requests[0]["messages"][0]["content"]
    assert EMAIL not in first and "[REDACTED_EMAIL]" in first
    assert CARD not in first and "1111" in first
    # Turn 2 sends turn 1's message as the thread holds it: redacted.
    assert plain.requests[2]["messages"][0]["content"] == first
    stored = [m["data"]["content"] for m in session.transcript]
    assert stored[0] == first
    assert not any(EMAIL in str(text) or CARD in str(text) for text in stored)
    assert_same_run(plain, session)


async def test_output_and_tool_results_are_redacted_in_state_and_transcript(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="pii-output",
        build=pii_agent(
            PIIMiddleware(
                "email",
                strategy="redact",
                apply_to_input=True,
                apply_to_output=True,
                apply_to_tool_results=True,
            )
        ),
        script=[
            ModelReply.call(ScriptedToolCall("call_1", "customer_service_tool", {"query": "billing"})),
            ModelReply.say("Write to jane.roe@example.org about billing."),
        ],
        turns=[f"I am {EMAIL}; who handles billing?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert "[REDACTED_EMAIL]" in plain.requests[1]["messages"][-1]["content"]  # the tool result
    assert plain.state["messages"][-1]["data"]["content"] == "Write to [REDACTED_EMAIL] about billing."
    assert not any("@example" in str(m["data"]["content"]) for m in session.transcript)
    assert_same_run(plain, session)


async def test_a_blocked_api_key_ends_the_turn_with_langchains_error_never_retried(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = "sk-" + "a1" * 16
    scenario = Scenario(
        name="pii-block",
        build=pii_agent(*docs_middleware()),
        script=[ModelReply.say("never asked")],
        turns=[f"use my key {key}"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.errors) == 1
    assert plain.errors[0].startswith(f"turn 1: {TURN_ABORTED}PIIDetectionError: ")
    assert plain.requests == session.requests == []
    assert_same_run(plain, session, state=False)
    assert [m["data"]["content"] for m in session.transcript] == [f"use my key {key}"]


async def test_the_redaction_reaches_the_store_when_every_message_goes_by_reference(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    # Threshold 0: every message body and the message index are in the payload store, so
    # the replaced message is stored and indexed there, and turn 2 reads it back from it.
    scenario = Scenario(
        name="pii-by-reference",
        build=pii_agent(*docs_middleware()),
        script=[ModelReply.say("Noted."), ModelReply.say("You are welcome.")],
        turns=[f"My email is {EMAIL}", "thanks"],
    )
    key = unique("lg-diff-pii-by-reference")
    plain = await run_plain(scenario, model_server, f"{key}-plain", tmp_path)
    session_key = f"{key}-session"
    model_server.script(session_key, scenario.script)
    log = InvocationLog(tmp_path / "session.jsonl")
    flow = session_flow(
        scenario, scenario.build(scripted_model(model_server, session_key), log, None), session_key
    )
    client = await connect(
        temporal_address, payloads=PayloadStore(location=str(tmp_path / "payloads"), threshold=0)
    )
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
    try:
        session = await play_session(
            scenario, AgentSessionClient(client, flow), session_key, model_server, log
        )
        stored = await AgentSessionClient(client, flow).stored_messages(session_key)
    finally:
        stop.set()
        await worker

    assert all(m.message.body is not None for m in stored)  # every message by reference
    assert plain.requests[1]["messages"][0]["content"] == "My email is [REDACTED_EMAIL]"
    assert_same_run(plain, session)
