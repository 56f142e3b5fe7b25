"""Tiny real PNG files for image cases, written with the standard library only."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

__all__ = ["solid_png", "write_png"]


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


def solid_png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """An 8-bit RGB PNG of one colour."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    row = b"\x00" + bytes(rgb) * width  # filter type 0, then the pixels
    pixels = zlib.compress(row * height)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", pixels) + _chunk(b"IEND", b"")


def write_png(path: Path, width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """Write the PNG to ``path`` and return its bytes."""
    data = solid_png(width, height, rgb)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data
