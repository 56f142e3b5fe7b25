"""Message bodies keep their long texts as parts of their own, so a tool output is stored once.

The tool step stores a long output by reference; the turn's messages then carry the same
text in the tool result. The store is content-addressed, and a stored message's long texts
are parts, so the second copy is the same object: one copy on disk, not two (issue 49).
Each check reads back through a fresh store, from disk, not from a cache.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from temporalio.converter import ExternalStorage

from sessionflow.session.bodies import INLINE_BODY_BYTES
from sessionflow.session.messages import FrameworkMessage, MessageRole
from sessionflow.temporal.storage._bodies import BodyStore, StoreScope
from sessionflow.temporal.storage._compact_payloads import COMPACT_DATA_CONVERTER
from sessionflow.temporal.storage._local_driver import LocalFolderDriver

SCOPE = StoreScope(namespace="default", session_id="parts-1")
OUTPUT = "".join(f"line {n} of a long tool output\n" for n in range(20_000))  # ~600 KB


def _bodies(root: Path, threshold: int = 256 * 1024) -> BodyStore:
    storage = ExternalStorage(drivers=[LocalFolderDriver(root)], payload_size_threshold=threshold)
    return BodyStore(storage, COMPACT_DATA_CONVERTER)


def _stored_bytes(root: Path) -> int:
    return sum(path.stat().st_size for path in root.rglob("*") if path.is_file())


def _object_count(root: Path) -> int:
    return sum(1 for path in root.rglob("*") if path.is_file())


def _tool_message(output: str) -> FrameworkMessage:
    return FrameworkMessage(
        role=MessageRole.TOOL,
        framework_item={"type": "function_call_output", "call_id": "c1", "output": output},
        text=output,
    )


async def test_a_tool_result_holding_a_stored_output_adds_no_second_copy(tmp_path: Path) -> None:
    bodies = _bodies(tmp_path)
    assert await bodies.store_text(OUTPUT, SCOPE) is not None
    after_output = _stored_bytes(tmp_path)
    assert after_output > len(OUTPUT)

    stored = await bodies.store_message(_tool_message(OUTPUT), SCOPE)
    assert stored.body is not None and stored.framework_item is None
    # The message's body is its envelope only: the output's bytes are the part already there.
    assert _stored_bytes(tmp_path) - after_output < 2_000

    loaded = await _bodies(tmp_path).load_message(stored)
    assert loaded == _tool_message(OUTPUT)


async def test_nested_long_texts_come_back_whole_and_short_ones_stay_in_the_body(tmp_path: Path) -> None:
    long_a, long_b = "a" * (INLINE_BODY_BYTES + 1), "é" * INLINE_BODY_BYTES  # the second by UTF-8 size
    item: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": long_a}, {"type": "text", "text": "short"}],
        "meta": {"notes": [long_b, 7, None, True, 1.5]},
    }
    message = FrameworkMessage(role=MessageRole.ASSISTANT, framework_item=item, text="summary " + long_a)
    bodies = _bodies(tmp_path)
    stored = await bodies.store_message(message, SCOPE)
    # The envelope, long_a, the message's own text (it differs from long_a) and long_b.
    assert _object_count(tmp_path) == 4
    assert await _bodies(tmp_path).load_message(stored) == message


async def test_the_same_long_text_twice_in_one_message_is_stored_once(tmp_path: Path) -> None:
    item = {"role": "tool", "content": OUTPUT, "echo": [OUTPUT]}
    message = FrameworkMessage(role=MessageRole.TOOL, framework_item=item, text="x" * 10)
    stored = await _bodies(tmp_path).store_message(message, SCOPE)
    assert _object_count(tmp_path) == 2  # the envelope and the text
    # One copy of the text (JSON escapes its newlines), not two.
    assert _stored_bytes(tmp_path) < len(OUTPUT) * 1.05
    assert await _bodies(tmp_path).load_message(stored) == message


async def test_a_body_written_whole_before_parts_still_loads(tmp_path: Path) -> None:
    # What store_message wrote before parts: the item and text whole, in one body.
    bodies = _bodies(tmp_path)
    item = {"role": "tool", "content": OUTPUT}
    ref = await bodies.put({"framework_item": item, "text": OUTPUT}, SCOPE)
    legacy = FrameworkMessage(role=MessageRole.TOOL, framework_item=None, text="preview", body=ref)
    loaded = await _bodies(tmp_path).load_message(legacy)
    assert loaded.framework_item == item and loaded.text == OUTPUT


async def test_a_framework_item_that_looks_like_a_part_is_not_taken_for_one(tmp_path: Path) -> None:
    # The part marker's key starts with NUL, which no framework's keys hold; an item with a
    # look-alike key under another name comes back as it was.
    look_alike: dict[str, Any] = {"driver": "x", "claim": {}, "size": 1, "sha256": "0"}
    item: dict[str, Any] = {"sessionflow.part": look_alike, "content": OUTPUT}
    message = FrameworkMessage(role=MessageRole.TOOL, framework_item=item, text=None)
    stored = await _bodies(tmp_path).store_message(message, SCOPE)
    assert await _bodies(tmp_path).load_message(stored) == message


async def test_under_threshold_zero_short_texts_stay_in_their_body(tmp_path: Path) -> None:
    # Everything is by reference, but a part per short text would only add objects.
    message = _tool_message("a short output")
    stored = await _bodies(tmp_path, threshold=0).store_message(message, SCOPE)
    assert stored.body is not None
    assert _object_count(tmp_path) == 1
    assert await _bodies(tmp_path, threshold=0).load_message(stored) == message
