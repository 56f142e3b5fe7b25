"""The Pydantic AI adapter: a provider's 503 with `Retry-After` sets the model step's next
retry delay (pydantic-ai's `ModelHTTPError` keeps the provider's headers)."""

from __future__ import annotations

from datetime import timedelta

from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings

from sessionflow import AgentSessionFlow, AgentSessionOptions
from sessionflow.demo import ModelReply, ScriptedModelServer
from sessionflow_pydantic_ai import PydanticAIRunner
from tests.builtin.test_provider_load import first_model_step, run_turns
from tests.harness import FAST


async def test_retry_after_reaches_the_model_step(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = "pa-retry-after"
    model_server.script(
        key, [ModelReply.fail("http_503", headers={"retry-after": "2"}), ModelReply.say("recovered")]
    )
    model = OpenAIChatModel("m", provider=OpenAIProvider(base_url=model_server.base_url(key), api_key="k"))
    # max_retries=0 as the adapter's plugin sets it: the session, not the client, retries.
    agent = Agent(model, model_settings=ModelSettings(max_retries=0))
    flow = AgentSessionFlow(
        PydanticAIRunner(agent), flow_type=f"load-{key}", options=AgentSessionOptions(timings=FAST)
    )
    temporal, [snapshot] = await run_turns(temporal_address, flow, [key])
    assert snapshot.messages[-1].message.text == "recovered"
    assert len(model_server.requests(key)) == 2
    step = await first_model_step(temporal, key)
    # pydantic-ai raises a 503 as `ModelUnavailableError`, a `ModelHTTPError`.
    assert step.attempt == 2 and step.last_failure_type == "ModelUnavailableError"
    assert step.next_retry_delay == timedelta(seconds=2)
    assert step.started_at - step.scheduled_at >= timedelta(seconds=2)
