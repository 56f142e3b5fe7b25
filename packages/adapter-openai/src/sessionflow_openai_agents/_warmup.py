"""Build the `openai` client's response models before the first model step, not during it.

The `openai` package defers building the pydantic validators of its response and stream
event models until first use. The first streamed model call of a process then spends a
second or more (far more on a busy machine) building them while holding the event loop,
so the step misses heartbeats and can be timed out and retried. Doing it once when a
runner is constructed, before the worker serves, moves that cost to start-up.
"""

from __future__ import annotations

import functools
import typing
from typing import Any

from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseFunctionToolCall, ResponseStreamEvent
from pydantic import BaseModel

__all__ = ["build_response_models"]


@functools.cache
def build_response_models() -> None:
    models: list[Any] = [Response, ResponseFunctionToolCall, ChatCompletion, ChatCompletionChunk]
    models += typing.get_args(_union_of(ResponseStreamEvent))
    for model in models:
        if isinstance(model, type) and issubclass(model, BaseModel):
            model.model_rebuild()


def _union_of(alias: Any) -> Any:
    # ResponseStreamEvent is `Annotated[Union[...], PropertyInfo(discriminator="type")]`.
    return typing.get_args(alias)[0] if typing.get_origin(alias) is typing.Annotated else alias
