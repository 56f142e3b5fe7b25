"""The OpenAI Agents SDK adapter: a provider's 429 with `Retry-After` sets the model step's
next retry delay (the SDK's openai client raises it; sessionflow finds the header on it)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agents import Agent, OpenAIResponsesModel
from openai import AsyncOpenAI

from sessionflow import AgentSessionFlow, AgentSessionOptions
from sessionflow.demo import ModelReply, ScriptedModelServer
from sessionflow_openai_agents import OpenAIAgentsRunner
from tests.builtin.test_provider_load import first_model_step, run_turns
from tests.harness import FAST


async def test_retry_after_reaches_the_model_step(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = "oa-retry-after"
    model_server.script(
        key, [ModelReply.fail("http_429", headers={"retry-after": "2"}), ModelReply.say("recovered")]
    )
    # max_retries=0 as the adapter's plugin sets it: the session, not the client, retries.
    client = AsyncOpenAI(base_url=model_server.base_url(key), api_key="k", max_retries=0)
    agent = Agent[Any](name="assistant", model=OpenAIResponsesModel(model="m", openai_client=client))
    flow = AgentSessionFlow(
        OpenAIAgentsRunner(agent), flow_type=f"load-{key}", options=AgentSessionOptions(timings=FAST)
    )
    temporal, [snapshot] = await run_turns(temporal_address, flow, [key])
    assert snapshot.messages[-1].message.text == "recovered"
    assert len(model_server.requests(key)) == 2
    step = await first_model_step(temporal, key)
    assert step.attempt == 2 and step.last_failure_type == "RateLimitError"
    assert step.next_retry_delay == timedelta(seconds=2)
    assert step.started_at - step.scheduled_at >= timedelta(seconds=2)
