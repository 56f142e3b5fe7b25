"""Bodies by reference: how many bytes of a body the session keeps inline, by the store's threshold.

`inline_limit` is the smaller of `INLINE_BODY_BYTES` and the store's payload threshold, so
threshold 0 ("every payload by reference") keeps no body inline either. Each rule is
checked at its edges, on a real store folder, so a change to any of them fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.converter import ExternalStorage

from sessionflow.session.bodies import INLINE_BODY_BYTES
from sessionflow.session.messages import FrameworkMessage, MessageRole
from sessionflow.temporal.storage._bodies import BodyStore, StoreScope, inline_limit
from sessionflow.temporal.storage._compact_payloads import COMPACT_DATA_CONVERTER
from sessionflow.temporal.storage._local_driver import LocalFolderDriver

SCOPE = StoreScope(namespace="default", session_id="bodies-1")


def _storage(root: Path, threshold: int) -> ExternalStorage:
    return ExternalStorage(drivers=[LocalFolderDriver(root)], payload_size_threshold=threshold)


def _bodies(root: Path, threshold: int) -> BodyStore:
    return BodyStore(_storage(root, threshold), COMPACT_DATA_CONVERTER)


def _objects(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()]


@pytest.mark.parametrize(
    ("threshold", "limit"),
    [
        # Threshold 0 stores every payload by reference, and every body with them.
        (0, 0),
        (1, 1),
        (1000, 1000),
        (INLINE_BODY_BYTES - 1, INLINE_BODY_BYTES - 1),
        (INLINE_BODY_BYTES, INLINE_BODY_BYTES),
        # Above INLINE_BODY_BYTES the body limit holds: a body never fills a step's payload.
        (INLINE_BODY_BYTES + 1, INLINE_BODY_BYTES),
        (128 * 1024, INLINE_BODY_BYTES),
        (256 * 1024 * 1024, INLINE_BODY_BYTES),
    ],
)
def test_the_inline_limit_is_the_smaller_of_the_body_limit_and_the_threshold(
    tmp_path: Path, threshold: int, limit: int
) -> None:
    assert inline_limit(_storage(tmp_path, threshold)) == limit
    assert _bodies(tmp_path, threshold).inline_limit == limit


async def test_threshold_zero_stores_every_text_even_an_empty_one(tmp_path: Path) -> None:
    bodies = _bodies(tmp_path, 0)
    for text in ("", "x", "a short tool output"):
        ref = await bodies.store_text(text, SCOPE)
        assert ref is not None, f"{text!r} stayed inline at threshold 0"
        assert await bodies.load_text(ref, cache=False) == text
    # Each distinct text is one object in the session's folder of the store.
    assert len(_objects(tmp_path / "default" / "bodies-1")) == 3


async def test_a_text_at_the_inline_limit_stays_inline_and_one_byte_more_is_stored(tmp_path: Path) -> None:
    bodies = _bodies(tmp_path, 1000)
    assert await bodies.store_text("y" * 1000, SCOPE) is None
    assert _objects(tmp_path) == []
    ref = await bodies.store_text("y" * 1001, SCOPE)
    assert ref is not None and await bodies.load_text(ref) == "y" * 1001
    assert len(_objects(tmp_path)) == 1


async def test_under_the_default_threshold_a_text_up_to_the_body_limit_stays_inline(tmp_path: Path) -> None:
    bodies = _bodies(tmp_path, 128 * 1024)
    assert await bodies.store_text("z" * INLINE_BODY_BYTES, SCOPE) is None
    assert await bodies.store_text("z" * (INLINE_BODY_BYTES + 1), SCOPE) is not None
    assert len(_objects(tmp_path)) == 1


async def test_threshold_zero_stores_a_one_letter_message_by_reference(tmp_path: Path) -> None:
    message = FrameworkMessage(role=MessageRole.ASSISTANT, framework_item={"content": "k"}, text="k")
    kept = await _bodies(tmp_path, 0).store_message(message, SCOPE)
    assert kept.body is not None and kept.framework_item is None
    assert (await _bodies(tmp_path, 0).load_message(kept)) == message
    # The same message under the default threshold stays as it is.
    assert await _bodies(tmp_path / "other", 128 * 1024).store_message(message, SCOPE) is message
    assert _objects(tmp_path / "other") == []
