"""A streamed answer, kept as the non-streamed call returns it: each provider, through its real client.

Each model answers the same script twice on the scripted server, once streamed (a streaming
callback handler attached, as LangGraph's ``stream_mode="messages"`` attaches one) and once
not; `unstream` turns the streamed message's content into the non-streamed one's.
"""

from __future__ import annotations

from typing import Any, Literal, cast
from uuid import UUID

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langchain_core.tracers._streaming import _StreamingCallbackHandler
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow_langgraph._unstreamed import unstream
from tests.adapter_langgraph.conftest import unique

Api = Literal["anthropic", "responses", "chat"]


class Streaming(BaseCallbackHandler, _StreamingCallbackHandler[Any]):
    """What makes LangChain stream the call (LangGraph's messages handler is one)."""

    def tap_output_aiter(self, run_id: UUID, output: Any) -> Any:
        return output

    def tap_output_iter(self, run_id: UUID, output: Any) -> Any:
        return output


@tool
def search(query: str) -> str:
    """Search."""
    return query


SCRIPT = [
    ModelReply.call(
        ScriptedToolCall("call_1", "search", {"query": "x"}), text="Let me look.", reasoning="Hmm."
    ),
    ModelReply.say("Done here.", chunks=["Done ", "here."]),
]


def model(server: ScriptedModelServer, key: str, api: Api) -> BaseChatModel:
    if api == "anthropic":
        return ChatAnthropic(
            model_name="claude-test",
            base_url=server.base_url(key, api="anthropic"),
            api_key=SecretStr("k"),
            max_retries=0,
            timeout=None,
            stop=None,
        )
    return ChatOpenAI(
        model="gpt-test",
        base_url=server.base_url(key),
        api_key=SecretStr("k"),
        max_retries=0,
        use_responses_api=api == "responses",
    )


async def answers(server: ScriptedModelServer, api: Api, *, streamed: bool) -> list[AIMessage]:
    key = unique(f"unstream-{api}")
    server.script(key, SCRIPT)
    bound = model(server, key, api).bind_tools([search])
    config: dict[str, Any] = {"callbacks": [Streaming()]} if streamed else {}
    return [await bound.ainvoke([HumanMessage("hi")], config) for _ in SCRIPT]  # pyright: ignore[reportArgumentType]


def without_ids(content: Any) -> Any:
    """The content with the server's per-response IDs and signatures left out (they count responses)."""
    if not isinstance(content, list):
        return content
    blocks: list[Any] = []
    for block in cast(list[Any], content):
        if isinstance(block, dict):
            fields = cast(dict[str, Any], block)
            block = {k: v for k, v in fields.items() if k not in ("id", "signature")}
        blocks.append(block)
    return blocks


async def test_claude_streamed_answers_become_what_invoke_returns(model_server: ScriptedModelServer) -> None:
    streamed = await answers(model_server, "anthropic", streamed=True)
    invoked = await answers(model_server, "anthropic", streamed=False)
    assert "partial_json" in str(streamed[0].content) and isinstance(streamed[1].content, list)

    for message in streamed:
        unstream(message)

    assert [without_ids(m.content) for m in streamed] == [without_ids(m.content) for m in invoked]
    assert streamed[1].content == "Done here."


async def test_responses_streamed_answers_lose_their_stream_index(model_server: ScriptedModelServer) -> None:
    streamed = await answers(model_server, "responses", streamed=True)
    invoked = await answers(model_server, "responses", streamed=False)
    for message in streamed:
        unstream(message)

    assert "'index'" not in str([m.content for m in streamed])
    # What the stream does not carry stays the stream's (the adapter README): a text block's
    # empty annotations, a function call's status.
    for kept, whole in zip(streamed, invoked, strict=True):
        for a, b in zip(without_ids(kept.content), without_ids(whole.content), strict=True):
            missing = {k: v for k, v in b.items() if k not in a}
            assert missing in ({}, {"annotations": []}, {"status": "completed"})
            assert {k: v for k, v in a.items()} == {k: v for k, v in b.items() if k in a}


@pytest.mark.parametrize("api", ["chat"])
async def test_a_chat_completions_answer_is_left_alone(model_server: ScriptedModelServer, api: Api) -> None:
    streamed = await answers(model_server, api, streamed=True)
    before = [m.content for m in streamed]
    for message in streamed:
        unstream(message)
    assert [m.content for m in streamed] == before == ["Let me look.", "Done here."]
