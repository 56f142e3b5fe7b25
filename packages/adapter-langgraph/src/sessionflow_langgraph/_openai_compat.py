"""`ChatOpenAICompatible`: ChatOpenAI that keeps the reasoning of OpenAI-compatible servers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI

__all__ = ["ChatOpenAICompatible"]


class ChatOpenAICompatible(ChatOpenAI):
    """`ChatOpenAI` that also reads the ``reasoning_content`` (or ``reasoning``) field.

    vLLM, DeepSeek, Ollama, LiteLLM and other OpenAI-compatible servers stream reasoning
    in that non-standard Chat Completions field, which `ChatOpenAI` drops. This class
    keeps it in ``additional_kwargs["reasoning_content"]``, where the sessionflow runner
    (and LangChain's ``content_blocks``) find it. Everything else is `ChatOpenAI`.
    """

    def _convert_chunk_to_generation_chunk(
        self,
        chunk: dict[str, Any],
        default_chunk_class: type,
        base_generation_info: dict[str, Any] | None,
    ) -> ChatGenerationChunk | None:
        # ChatOpenAI annotates this hook with bare `dict`s.
        generation = super()._convert_chunk_to_generation_chunk(  # pyright: ignore[reportUnknownMemberType]
            chunk, default_chunk_class, base_generation_info
        )
        choices: Any = chunk.get("choices") or []
        if generation is not None and choices:
            delta: Any = choices[0].get("delta") or {}
            _keep_reasoning(generation.message.additional_kwargs, delta)
        return generation

    def _create_chat_result(self, response: Any, generation_info: dict[str, Any] | None = None) -> ChatResult:
        result = super()._create_chat_result(response, generation_info)  # pyright: ignore[reportUnknownMemberType] - bare dicts
        raw: Any = response if isinstance(response, dict) else response.model_dump()  # pyright: ignore[reportUnknownVariableType]
        for generation, choice in zip(result.generations, raw.get("choices") or [], strict=False):
            _keep_reasoning(generation.message.additional_kwargs, choice.get("message") or {})
        return result


def _keep_reasoning(additional_kwargs: dict[str, Any], fields: Mapping[str, Any]) -> None:
    reasoning = fields.get("reasoning_content") or fields.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        additional_kwargs["reasoning_content"] = reasoning
