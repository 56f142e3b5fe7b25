"""A user message with an image: the same content blocks reach the model in both runs.

Plain: `ClaudeSDKClient.query` with a streamed user message whose content is a text block
and a base64 PNG image block. The session: the image uploaded to the payload store and
sent with the message (``send_user_message(..., images=[...])``); the adapter's prompt is
the text block first, then the image blocks (`harness.Scenario.images`).
"""

from __future__ import annotations

import base64
import re
import struct
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from sessionflow.demo import ModelReply, ScriptedModelServer
from tests.adapter_claude.differential import sdk_examples
from tests.adapter_claude.differential.harness import Run, Scenario, assert_same_run, run_both


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A PNG of one colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


RED = png(8, 8, (255, 0, 0))
BLUE = png(4, 4, (0, 0, 255))


IMAGE_SOURCE = re.compile(r"^\[Image: source: (.*)/(\d+)\.png\]$")
"""The text block the CLI adds after a prompt's images: where it saved each image, under
its temp folder (plain ``<run>/tmp/claude-<uid>/...``; the session's step has its own)."""


def image_sources(request: dict[str, Any]) -> list[str]:
    """The folders of the request's ``[Image: source: ...]`` blocks."""
    found: list[str] = []
    for block in _last_user_content(request):
        match = IMAGE_SOURCE.match(str(block.get("text", "")))
        if match:
            found.append(match.group(1))
    return found


def _sourceless(value: Any) -> Any:
    if isinstance(value, list):
        items: list[Any] = [
            v
            for v in cast(list[Any], value)
            if not (isinstance(v, dict) and IMAGE_SOURCE.match(str(cast(dict[str, Any], v).get("text", ""))))
        ]
        return [_sourceless(item) for item in items]
    if isinstance(value, dict):
        return {k: _sourceless(v) for k, v in cast(dict[str, Any], value).items()}
    return value


def without_image_sources(run: Run) -> Run:
    """A plain run as the session shows it: the deliberate difference (adapter README). The
    CLI adds ``[Image: source: <path>]`` after a prompt's images, naming where it saved them;
    a session's step saves them in a private folder removed when the step ends, so the
    session's relay takes that block off rather than point the model at nothing."""
    return replace(run, requests=[cast(dict[str, Any], _sourceless(r)) for r in run.requests])


def _last_user_content(request: dict[str, Any]) -> list[dict[str, Any]]:
    users = [m for m in cast(list[dict[str, Any]], request["messages"]) if m.get("role") == "user"]
    return cast(list[dict[str, Any]], users[-1]["content"])


async def test_an_image_in_the_first_message(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="image",
        build=sdk_examples.system_prompt_none,
        script=[ModelReply.say("A red square.")],
        turns=["What colour is this image?"],
        images={1: [RED]},
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 1
    # The CLI keeps the blocks as sent and adds where it saved the image (after its own
    # reminders of a session's first message, such as the commit attribution).
    content = [
        b
        for b in _last_user_content(plain.requests[0])
        if not str(b.get("text", "")).startswith("<system-reminder>")
    ]
    assert [block["type"] for block in content] == ["text", "image", "text"]
    assert content[0]["text"] == "What colour is this image?"
    assert content[1]["source"]["media_type"] == "image/png"
    assert base64.b64decode(content[1]["source"]["data"]) == RED
    assert len(image_sources(plain.requests[0])) == 1
    assert plain.results == ["A red square."]
    assert_same_run(without_image_sources(plain), session)


async def test_two_images_in_a_later_message(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="images-later",
        build=sdk_examples.system_prompt_none,
        script=[ModelReply.say("Hello."), ModelReply.say("Red, then blue.")],
        turns=["Hi", "What colours are these two images?"],
        images={2: [RED, BLUE]},
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 2
    content = _last_user_content(plain.requests[1])
    assert [block["type"] for block in content] == ["text", "image", "image", "text", "text"]
    assert [base64.b64decode(block["source"]["data"]) for block in content[1:3]] == [RED, BLUE]
    assert len(image_sources(plain.requests[1])) == 2
    assert plain.results == ["Hello.", "Red, then blue."]
    assert_same_run(without_image_sources(plain), session)
