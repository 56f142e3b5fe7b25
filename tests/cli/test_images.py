"""`/image` rules: size checked before reading, type by bytes, at most 20 per message."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sessionflow_cli._images import (
    MAX_IMAGE_BYTES,
    MAX_IMAGES_PER_MESSAGE,
    ImageRejected,
    attach_image,
    sniff_media_type,
)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def test_types_come_from_the_bytes() -> None:
    assert sniff_media_type(PNG) == "image/png"
    assert sniff_media_type(b"\xff\xd8\xff\xe0rest") == "image/jpeg"
    assert sniff_media_type(b"GIF89a....") == "image/gif"
    assert sniff_media_type(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert sniff_media_type(b"RIFF\x00\x00\x00\x00WAVEfmt ") is None
    assert sniff_media_type(b"just text") is None


def test_a_valid_image_is_copied_by_content(tmp_path: Path) -> None:
    media = tmp_path / "media"
    (tmp_path / "chart.txt").write_bytes(PNG)  # the name does not matter
    first = attach_image("chart.txt", cwd=tmp_path, media_folder=media, already=0)
    again = attach_image(str(tmp_path / "chart.txt"), cwd=Path("/"), media_folder=media, already=1)
    assert first.stored == again.stored
    assert first.stored.suffix == ".png" and first.stored.read_bytes() == PNG
    assert first.describe() == f"chart.txt (image/png, {len(PNG)} B)"


def test_home_relative_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "pic.png").write_bytes(PNG)
    assert attach_image("~/pic.png", cwd=Path("/"), media_folder=tmp_path / "m", already=0).name == "pic.png"


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        ("missing", "does not exist"),
        ("folder", "not a regular file"),
        ("fifo", "not a regular file"),
        ("text", "not a PNG, JPEG, GIF or WebP image"),
        ("large", "the limit is 3,750,000"),
    ],
)
def test_refusals(tmp_path: Path, setup: str, reason: str) -> None:
    target = tmp_path / "x"
    if setup == "folder":
        target.mkdir()
    elif setup == "fifo":
        os.mkfifo(target)  # reading it would block: refused before it is opened
    elif setup == "text":
        target.write_text("hello")
    elif setup == "large":
        with target.open("wb") as handle:
            handle.write(PNG)
            handle.truncate(MAX_IMAGE_BYTES + 1)
    with pytest.raises(ImageRejected, match=reason):
        attach_image("x", cwd=tmp_path, media_folder=tmp_path / "media", already=0)
    assert not (tmp_path / "media").exists()


def test_at_most_twenty_per_message(tmp_path: Path) -> None:
    (tmp_path / "p.png").write_bytes(PNG)
    attach_image("p.png", cwd=tmp_path, media_folder=tmp_path / "m", already=MAX_IMAGES_PER_MESSAGE - 1)
    with pytest.raises(ImageRejected, match="at most 20 images"):
        attach_image("p.png", cwd=tmp_path, media_folder=tmp_path / "m", already=MAX_IMAGES_PER_MESSAGE)
