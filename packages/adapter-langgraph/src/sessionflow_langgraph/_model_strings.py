"""``"provider:model"`` strings, read as LangChain reads them when `langchain` is installed.

``langgraph_session_flow(model="openai:gpt-4.1", ...)`` builds the model with
`langchain.chat_models.init_chat_model`, the same call `langchain.agents.create_agent`
makes for a string, so any provider LangChain knows works (``"groq:..."``,
``"google_genai:..."``, ``"ollama:..."``, a bare ``"gpt-4.1"`` or ``"claude-..."``), read
from the provider's own environment variables. Without `langchain` the adapter's own
`chat_model` reads the string (``anthropic:`` is `ChatAnthropic`, anything else an
OpenAI-compatible model).

One difference from LangChain, on purpose: a model class with a ``max_retries`` setting
gets ``max_retries=0``, because sessionflow retries the whole model step and the SDK's own
retries would only multiply requests (as `chat_model` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessionflow import UnsupportedOptionError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["model_from_string"]


def model_from_string(model: str) -> BaseChatModel:
    """The chat model a ``"provider:model"`` string names.

    Raises:
        UnsupportedOptionError: LangChain cannot tell the provider, or the provider's
            package is not installed (option ``model``; also a `ValueError`). A provider
            SDK that refuses to start without a key raises its own error.
    """
    try:
        from langchain.chat_models import init_chat_model
    except ImportError:
        from sessionflow_langgraph._models import chat_model

        return chat_model(model)
    try:
        built = init_chat_model(model)
        if "max_retries" in type(built).model_fields:
            built = init_chat_model(model, max_retries=0)
    except (ImportError, ValueError) as error:
        raise UnsupportedOptionError(
            "model", f"LangChain cannot build the model {model!r}: {error}"
        ) from None
    return built
