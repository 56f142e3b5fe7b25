"""Model calls made in one piece inside a streamed run (``stream_model_calls=False``).

A model step always runs the SDK's streamed loop (`Runner.run_streamed`: its graceful
``cancel(mode="after_turn")`` is what stops the run after one model call). With live deltas
off, the models are wrapped so that ``stream_response`` makes the same call as
``get_response`` (no server-sent events for the client to parse one by one) and hands the
loop the whole response as its one ``response.completed`` event, which is all the loop
needs to build the turn. This is how the SDK's own non-streamed ``Runner.run`` calls the
model, and what the temporalio-openai-agents plugin's model activity does.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, Model, ModelProvider, ModelResponse, RunConfig
from openai.types.responses import Response, ResponseCompletedEvent, ResponseUsage

__all__ = ["WholeResponseModel", "WholeResponseProvider", "whole_response_agent", "whole_response_config"]


class WholeResponseModel(Model):
    """``inner``, with ``stream_response`` made of one ``get_response`` call."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return await self.inner.get_response(*args, **kwargs)

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        response = await self.inner.get_response(*args, **kwargs)
        yield ResponseCompletedEvent.model_construct(
            type="response.completed", sequence_number=0, response=_as_response(response)
        )

    def get_retry_advice(self, request: Any) -> Any:
        return self.inner.get_retry_advice(request)

    async def close(self) -> None:
        await self.inner.close()


class WholeResponseProvider(ModelProvider):
    """``inner``'s models, wrapped (`WholeResponseModel`)."""

    def __init__(self, inner: ModelProvider) -> None:
        self.inner = inner

    def get_model(self, model_name: str | None) -> Model:
        return WholeResponseModel(self.inner.get_model(model_name))

    async def aclose(self) -> None:
        await self.inner.aclose()


def whole_response_config(config: RunConfig) -> RunConfig:
    """The run config with its provider (and its ``model``, if it names one object) wrapped."""
    model = config.model
    return dataclasses.replace(
        config,
        model=WholeResponseModel(model) if isinstance(model, Model) else model,
        model_provider=WholeResponseProvider(config.model_provider),
    )


def whole_response_agent(agent: Agent[Any]) -> Agent[Any]:
    """``agent`` with its own model object wrapped (a named model goes through the provider)."""
    model = agent.model
    if isinstance(model, Model) and not isinstance(model, WholeResponseModel):
        return agent.clone(model=WholeResponseModel(model))
    return agent


def _as_response(response: ModelResponse) -> Response:
    usage = response.usage
    # Built without validation: the items were validated when the client parsed the reply.
    whole = Response.model_construct(
        id=response.response_id or "",
        object="response",
        created_at=time.time(),
        model="",
        output=list(response.output),
        parallel_tool_calls=True,
        tool_choice="auto",
        tools=[],
        usage=ResponseUsage.model_construct(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            total_tokens=usage.total_tokens,
            input_tokens_details=usage.input_tokens_details,
            output_tokens_details=usage.output_tokens_details,
        ),
    )
    whole._request_id = response.request_id  # pyright: ignore[reportPrivateUsage]  # the streamed loop reads it
    return whole
