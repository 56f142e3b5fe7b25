"""The one reader of stored image references (`sessionflow.kit._images`)."""

from __future__ import annotations

from pathlib import Path

from sessionflow import ImageInput
from sessionflow.kit import (
    image_base64,
    image_bytes,
    image_data_url,
    image_ref_part,
    stored_image,
    with_images_read,
)


def test_a_stored_reference_reads_back_as_bytes_base64_and_a_data_url(tmp_path: Path) -> None:
    path = tmp_path / "dot.png"
    path.write_bytes(b"\x89PNG")
    image = ImageInput(path=str(path), media_type="image/png")
    part = image_ref_part(image)
    assert part == {"type": "image_ref", "path": str(path), "media_type": "image/png"}
    assert stored_image(part) == image
    assert stored_image({"type": "input_text", "text": "hi"}) is None
    assert image_bytes(image) == b"\x89PNG"
    assert image_base64(image) == "iVBORw=="
    assert image_data_url(image) == "data:image/png;base64,iVBORw=="


def test_stored_references_in_an_item_are_replaced_by_the_wire_part(tmp_path: Path) -> None:
    path = tmp_path / "dot.png"
    path.write_bytes(b"\x89PNG")
    image = ImageInput(path=str(path), media_type="image/png")
    item = {"role": "user", "content": [{"type": "text", "text": "look"}, image_ref_part(image)]}
    assert with_images_read(item, image_data_url) == {
        "role": "user",
        "content": [{"type": "text", "text": "look"}, "data:image/png;base64,iVBORw=="],
    }
    assert with_images_read({"role": "user", "content": "hi"}, image_data_url) == {
        "role": "user",
        "content": "hi",
    }
