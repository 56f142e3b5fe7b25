"""The errors the frameworks' own HTTP clients raise on a scripted 429/503 carry the
`Retry-After` the model step reads; and what the SDKs' own retries do with it.

Real clients against the scripted model server: openai (the OpenAI Agents SDK and
langchain-openai raise its errors), anthropic, and pydantic-ai's `ModelHTTPError`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sessionflow.demo import ModelReply, ScriptedModelServer
from sessionflow.temporal.activities._retry_after import provider_retry_delay

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")


@pytest.fixture
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


async def test_openai_errors_carry_retry_after(model_server: ScriptedModelServer) -> None:
    model_server.script(
        "oa",
        [
            ModelReply.fail("http_429", headers={"retry-after": "3"}),
            ModelReply.fail("http_503", headers={"retry-after-ms": "2500"}),
        ],
    )
    client = openai.AsyncOpenAI(base_url=model_server.base_url("oa"), api_key="k", max_retries=0)
    for expected in (3.0, 2.5):
        with pytest.raises(openai.APIStatusError) as raised:
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert provider_retry_delay(raised.value) == expected


async def test_anthropic_errors_carry_retry_after(model_server: ScriptedModelServer) -> None:
    model_server.script("an", [ModelReply.fail("http_429", headers={"retry-after": "4"})])
    client = anthropic.AsyncAnthropic(
        base_url=model_server.base_url("an", api="anthropic"), api_key="k", max_retries=0
    )
    with pytest.raises(anthropic.RateLimitError) as raised:
        await client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert provider_retry_delay(raised.value) == 4.0


async def test_pydantic_ai_model_http_error_carries_retry_after(model_server: ScriptedModelServer) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.exceptions import ModelHTTPError
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.settings import ModelSettings

    model_server.script("pa", [ModelReply.fail("http_429", headers={"retry-after": "5"})])
    model = OpenAIChatModel("m", provider=OpenAIProvider(base_url=model_server.base_url("pa"), api_key="k"))
    agent = Agent(model, model_settings=ModelSettings(max_retries=0))
    with pytest.raises(ModelHTTPError) as raised:
        await agent.run("hi")
    assert raised.value.status_code == 429
    assert provider_retry_delay(raised.value) == 5.0


async def test_the_openai_sdk_retries_a_short_retry_after_itself(model_server: ScriptedModelServer) -> None:
    # With its default max_retries (2), the SDK waits out a Retry-After of up to 120 s and
    # asks again inside the same model step: the session never sees that 429.
    model_server.script(
        "own", [ModelReply.fail("http_429", headers={"retry-after": "1"}), ModelReply.say("ok")]
    )
    client = openai.AsyncOpenAI(base_url=model_server.base_url("own"), api_key="k")
    reply = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content == "ok"
    assert len(model_server.requests("own")) == 2


async def test_the_openai_sdk_gives_up_on_a_long_retry_after(model_server: ScriptedModelServer) -> None:
    # Over 120 s the SDK does not retry at all: the error, and its header, reach the step.
    model_server.script("long", [ModelReply.fail("http_429", headers={"retry-after": "200"})])
    client = openai.AsyncOpenAI(base_url=model_server.base_url("long"), api_key="k")
    with pytest.raises(openai.RateLimitError) as raised:
        await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert len(model_server.requests("long")) == 1
    assert provider_retry_delay(raised.value) == 200.0
