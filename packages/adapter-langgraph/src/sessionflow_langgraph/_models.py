"""Chat models by name: ``provider:model`` picks `ChatAnthropic` or `ChatOpenAI`.

The provider packages are imported only when a model of theirs is built: the anthropic
SDK alone takes seconds to import, and every process that loads sessionflow's plugins
imports this adapter's plugin module.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["ModelWireApi", "chat_model"]

ModelWireApi = Literal["chat_completions", "responses", "anthropic_messages"]

_PLACEHOLDER_KEY = "sessionflow-no-key"
_ANTHROPIC_PREFIXES = ("anthropic:",)
_OPENAI_PREFIXES = ("openai:",)


def chat_model(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    api: ModelWireApi | None = None,
    max_retries: int = 0,
    settings: Mapping[str, Any] | None = None,
) -> BaseChatModel:
    """The chat model for ``model``.

    ``anthropic:<name>`` (or ``api="anthropic_messages"``) gives `ChatAnthropic`;
    ``openai:<name>`` or a bare name gives `ChatOpenAICompatible` (the Responses API when
    ``api="responses"``). Keys and base URLs default to the providers' usual environment
    variables (``OPENAI_API_KEY``/``OPENAI_BASE_URL``, ``ANTHROPIC_API_KEY``/``ANTHROPIC_BASE_URL``);
    with a base URL and no key anywhere, a placeholder key is sent (local servers need none).
    ``max_retries`` defaults to 0 because sessionflow retries the whole model step itself.
    ``settings`` are passed to the model's constructor as extra keyword arguments.
    """
    extra = dict(settings or {})
    if model.startswith(_ANTHROPIC_PREFIXES) or (
        api == "anthropic_messages" and not model.startswith(_OPENAI_PREFIXES)
    ):
        name = model.split(":", 1)[1] if model.startswith(_ANTHROPIC_PREFIXES) else model
        anthropic_kwargs: dict[str, Any] = {"model": name, "max_retries": max_retries, **extra}
        if base_url:
            anthropic_kwargs["base_url"] = base_url
        if api_key or base_url:
            anthropic_kwargs["api_key"] = api_key or _env_key("ANTHROPIC_API_KEY")
        from langchain_anthropic import ChatAnthropic

        return ChatAnthropic(**anthropic_kwargs)
    name = model.split(":", 1)[1] if model.startswith(_OPENAI_PREFIXES) else model
    openai_kwargs: dict[str, Any] = {"model": name, "max_retries": max_retries, "stream_usage": True, **extra}
    # Explicit either way: left unset, ChatOpenAI switches to Responses for some requests.
    openai_kwargs.setdefault("use_responses_api", api == "responses")
    if base_url:
        openai_kwargs["base_url"] = base_url
    if api_key or base_url:
        openai_kwargs["api_key"] = api_key or _env_key("OPENAI_API_KEY")
    from sessionflow_langgraph._openai_compat import ChatOpenAICompatible

    return ChatOpenAICompatible(**openai_kwargs)


def _env_key(name: str) -> str:
    return os.environ.get(name) or _PLACEHOLDER_KEY
