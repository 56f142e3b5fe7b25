"""Media in MCP tool results go to the payload store too, not only to the media folder."""

from __future__ import annotations

from pathlib import Path

from sessionflow.kit._media_sink import MEDIA_SINK
from sessionflow.mcp import McpConnectionPool, McpServerConfig, McpToolSource
from sessionflow.session.bodies import BodyRef
from sessionflow.temporal import PayloadStore, build_data_converter
from sessionflow.temporal.storage._bodies import BodyStore, StoreScope
from tests.mcp.helpers import everything_entry, invocation


async def test_an_mcp_image_is_handed_to_the_steps_payload_store(tmp_path: Path) -> None:
    converter = build_data_converter(PayloadStore(location=str(tmp_path / "payloads")))
    assert converter.external_storage is not None
    bodies = BodyStore(converter.external_storage, converter)
    stored: list[tuple[BodyRef, str]] = []

    async def sink(data: bytes, mime_type: str) -> None:
        # What the tool step's sink does: put the bytes on the session's store.
        stored.append(
            (await bodies.put(data, StoreScope(namespace="default", session_id="mcp-media")), mime_type)
        )

    config = McpServerConfig(name="everything", command="node", args=(str(everything_entry()), "stdio"))
    pool = McpConnectionPool()
    token = MEDIA_SINK.set(sink)
    try:
        specs = {
            s.name: s
            for s in await McpToolSource([config], pool=pool, media_dir=tmp_path / "media").list_tools()
        }
        output = await specs["get-tiny-image"].call({}, invocation("img"))
    finally:
        MEDIA_SINK.reset(token)
        await pool.close()
    assert "[image: " in output
    [(ref, mime_type)] = stored
    assert mime_type == "image/png"
    data = await BodyStore(converter.external_storage, converter).get(ref)
    assert isinstance(data, bytes) and data.startswith(b"\x89PNG\r\n\x1a\n")
    assert [p for p in (tmp_path / "payloads" / "default" / "mcp-media").rglob("*") if p.is_file()]
