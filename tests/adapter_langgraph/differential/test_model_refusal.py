"""``ModelRefusalMiddleware`` against plain `create_agent`, on each wire's own refusal.

The scripted model server refuses as each provider does (`ModelReply.refuse`): Anthropic's
``stop_reason: "refusal"``, a Responses ``refusal`` content part, Chat Completions'
``message.refusal``. LangChain turns the first two into a standard ``refusal`` block,
streamed or not, and the middleware raises ``ModelRefusalError``: a terminal outcome, so
the session ends the turn with it and never retries the step (one request, as plain).

Chat Completions differs by LangChain's own doing: ``langchain-openai`` reads ``refusal``
only from a non-streamed message (``_convert_dict_to_message``); a streamed one
(``_convert_delta_to_message_chunk``) drops every ``delta.refusal``. Plain ``invoke`` then
raises, plain ``stream`` answers with an empty message, and the session, which streams
every model call, does what plain ``stream`` does. The last test asserts exactly that.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, cast

from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain.agents.middleware import AgentMiddleware, ModelRefusalMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from sessionflow.demo import ModelReply, ScriptedModelServer
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.conftest import unique
from tests.adapter_langgraph.differential.docs_tools import get_weather
from tests.adapter_langgraph.differential.harness import (
    TURN_ABORTED,
    Built,
    Compiled,
    Scenario,
    assert_same_run,
    run_both,
    run_plain,
    run_session,
)

REFUSAL = "I can't help with that."
REFUSED = f"turn 1: {TURN_ABORTED}ModelRefusalError: Model refused to produce the requested output: {REFUSAL}"


def refusing_agent(*, responses_api: bool = False) -> Any:
    def build(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
        if responses_api:  # the same scripted key, on OpenAI's Responses API
            chat = cast(ChatOpenAI, model)
            model = ChatOpenAI(
                model=chat.model_name,
                base_url=chat.openai_api_base,
                api_key=chat.openai_api_key,
                max_retries=0,
                use_responses_api=True,
            )
        tools = [get_weather(log)]
        middleware: list[AgentMiddleware[Any, Any, Any]] = [ModelRefusalMiddleware()]
        graph = cast(
            Compiled, create_agent(model, tools=tools, middleware=middleware, checkpointer=checkpointer)
        )
        return Built(graph, tools)

    return build


def assert_refused_once(plain_errors: list[str], requests: list[dict[str, Any]]) -> None:
    assert plain_errors == [REFUSED]
    assert len(requests) == 1  # a refusal is never retried


async def test_an_anthropic_refusal_ends_the_turn_as_plain_never_retried(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="refusal-anthropic",
        build=refusing_agent(),
        script=[ModelReply.refuse(REFUSAL), ModelReply.say("never asked")],
        turns=["help me with something bad"],
        api="anthropic",
        plain_call="invoke",
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert_refused_once(plain.errors, plain.requests)
    assert_same_run(plain, session, state=False)
    # The failed turn keeps the user's message and the turn-failure note, as every failed turn.
    assert [m["data"]["content"] for m in session.transcript][:1] == ["help me with something bad"]


async def test_a_responses_api_refusal_ends_the_turn_as_plain_never_retried(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="refusal-responses",
        build=refusing_agent(responses_api=True),
        script=[ModelReply.refuse(REFUSAL), ModelReply.say("never asked")],
        turns=["help me with something bad"],
        plain_call="invoke",
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert_refused_once(plain.errors, plain.requests)
    assert_same_run(plain, session, state=False)


async def test_a_streamed_chat_completions_refusal_is_dropped_by_langchain_openai_as_in_plain_stream(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="refusal-chat",
        build=refusing_agent(),
        script=[ModelReply.refuse(REFUSAL)],
        turns=["help me with something bad"],
        plain_call="invoke",
    )
    key = unique("lg-diff-refusal-chat")
    invoked = await run_plain(scenario, model_server, f"{key}-invoke", tmp_path / "invoke")
    streamed = await run_plain(
        dataclasses.replace(scenario, plain_call="astream"),
        model_server,
        f"{key}-stream",
        tmp_path / "stream",
    )
    session = await run_session(scenario, model_server, f"{key}-session", tmp_path, temporal_address)

    # Plain invoke: langchain-openai keeps `message.refusal`, and the middleware raises.
    assert invoked.errors == [REFUSED]
    # Plain stream: langchain-openai drops `delta.refusal`; the run answers with an empty message.
    assert streamed.errors == []
    answer = streamed.state["messages"][-1]
    assert (answer["type"], answer["data"]["content"]) == ("ai", "")
    assert "refusal" not in answer["data"]["additional_kwargs"]
    assert model_server.requests(f"{key}-stream")[0].stream
    # The session streams every call, so it is plain stream's run: requests, state, transcript.
    assert_same_run(streamed, session)
