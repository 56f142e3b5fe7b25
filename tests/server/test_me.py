"""`GET /api/v1/me`: the user, the sessions' namespace, and the Temporal UI's address when configured."""

from __future__ import annotations

import pytest

from sessionflow_server import ServerConfig
from tests.server.conftest import Api, ApiFactory


async def test_me_names_the_namespace_and_the_temporal_ui(api_factory: ApiFactory) -> None:
    plain: Api = await api_factory()
    assert (await plain.get("/api/v1/me")).json() == {
        "user": "alice",
        "namespace": "default",
        "temporal_ui_url": None,
    }
    linked: Api = await api_factory(config=ServerConfig(temporal_ui_url="http://localhost:8233/"))
    me = (await linked.get("/api/v1/me", user="bob")).json()
    assert me == {"user": "bob", "namespace": "default", "temporal_ui_url": "http://localhost:8233"}


@pytest.mark.parametrize(
    "url",
    ["javascript:alert(1)", "localhost:8233", "ftp://example.com", "http://", "http://x/?a=1", "http://x/#f"],
)
def test_a_temporal_ui_url_must_be_a_web_address(url: str) -> None:
    with pytest.raises(ValueError, match="must be an http:// or https:// address"):
        ServerConfig(temporal_ui_url=url)
