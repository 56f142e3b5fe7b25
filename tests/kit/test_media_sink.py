"""`hand_over_saved_media`: saved files go to the running step's sink, when there is one."""

from __future__ import annotations

from pathlib import Path

from sessionflow.kit._media_sink import MEDIA_SINK, SAVED_MEDIA, hand_over_saved_media


async def test_every_saved_file_goes_to_the_sink_in_order(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(b"\x89PNG-a")
    (tmp_path / "b.wav").write_bytes(b"RIFF-b")
    received: list[tuple[bytes, str]] = []

    async def sink(data: bytes, mime_type: str) -> None:
        received.append((data, mime_type))

    token = MEDIA_SINK.set(sink)
    try:
        await hand_over_saved_media([(tmp_path / "a.png", "image/png"), (tmp_path / "b.wav", "audio/wav")])
    finally:
        MEDIA_SINK.reset(token)
    assert received == [(b"\x89PNG-a", "image/png"), (b"RIFF-b", "audio/wav")]


async def test_without_a_sink_nothing_is_read(tmp_path: Path) -> None:
    # Outside a tool step (no sink) the files stay where they are and are not even opened.
    assert MEDIA_SINK.get() is None
    assert SAVED_MEDIA.get() is None
    await hand_over_saved_media([(tmp_path / "missing.png", "image/png")])
