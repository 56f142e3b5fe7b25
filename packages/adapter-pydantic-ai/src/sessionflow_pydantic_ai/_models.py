"""Pydantic AI models from a model name, a wire API, and an optional base URL and key."""

from __future__ import annotations

from pydantic_ai.models import Model

from sessionflow.kit import ModelApi

__all__ = ["build_model", "model_for_api"]

_PREFIX_APIS: dict[str, ModelApi] = {
    "openai": "responses",  # as Pydantic AI resolves ``openai:<name>``
    "openai-chat": "chat_completions",
    "openai-responses": "responses",
    "anthropic": "anthropic_messages",
}


def model_for_api(api: ModelApi, name: str, *, base_url: str | None, api_key: str | None) -> Model:
    """The Pydantic AI model speaking `api`; the provider reads its usual env vars for what is None."""
    # Imported here: each SDK takes seconds to import, and only the one in use is needed.
    match api:
        case "chat_completions":
            from pydantic_ai.models.openai import OpenAIChatModel
            from pydantic_ai.providers.openai import OpenAIProvider

            return OpenAIChatModel(name, provider=OpenAIProvider(base_url=base_url, api_key=api_key))
        case "responses":
            from pydantic_ai.models.openai import OpenAIResponsesModel
            from pydantic_ai.providers.openai import OpenAIProvider

            return OpenAIResponsesModel(name, provider=OpenAIProvider(base_url=base_url, api_key=api_key))
        case "anthropic_messages":
            from pydantic_ai.models.anthropic import AnthropicModel
            from pydantic_ai.providers.anthropic import AnthropicProvider

            return AnthropicModel(name, provider=AnthropicProvider(base_url=base_url, api_key=api_key))


def build_model(
    model: str, *, api: ModelApi | None = None, base_url: str | None = None, api_key: str | None = None
) -> Model | str:
    """A model for `model`, which may carry a Pydantic AI provider prefix (``"anthropic:claude-..."``).

    - An OpenAI or Anthropic prefix (``openai``, ``openai-chat``, ``openai-responses``,
      ``anthropic``) picks the wire API and the base URL and key apply to it.
    - Any other prefixed name without a base URL is returned as is, so Pydantic AI's own
      resolution applies (every provider it knows, configured by its environment variables).
    - Anything else is a model name for `api` (default Chat Completions), which is how a
      local server's names such as ``llama3:8b`` are used.
    """
    prefix, colon, name = model.partition(":")
    if colon and prefix in _PREFIX_APIS:
        if base_url is None and api_key is None:
            return model
        return model_for_api(api or _PREFIX_APIS[prefix], name, base_url=base_url, api_key=api_key)
    if colon and base_url is None:
        return model
    return model_for_api(api or "chat_completions", model, base_url=base_url, api_key=api_key)
