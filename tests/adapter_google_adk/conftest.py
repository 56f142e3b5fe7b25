"""Fixtures: a scripted model server per test, and a dummy Gemini API key (google-genai
refuses to build a client without one; the scripted server ignores it)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sessionflow.demo import ScriptedModelServer


@pytest.fixture
async def model_server(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ScriptedModelServer]:
    monkeypatch.setenv("GOOGLE_API_KEY", "dummy")
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    async with ScriptedModelServer() as server:
        yield server
