"""Bodies by reference (`sessionflow.session.bodies`): sizes, the inline rule, previews, caps."""

from __future__ import annotations

from sessionflow.session.bodies import (
    MEDIA_PREFIX,
    PREVIEW_CHARS,
    cap_text,
    fits_inline,
    inline_size,
    is_media_ref,
    preview_text,
    utf8_size,
)


def test_utf8_size_counts_bytes_and_a_lone_surrogate_as_one_replacement() -> None:
    assert utf8_size("abc") == 3
    assert utf8_size("é") == 2
    assert utf8_size("\ud800") == 1


def test_inline_size_is_the_item_as_json_plus_the_text() -> None:
    assert inline_size({"a": "é"}, "xy") == len('{"a": "é"}'.encode()) + 2
    assert inline_size(None, None) == len(b"null")


def test_fits_inline_up_to_the_limit_and_never_at_a_limit_of_zero() -> None:
    size = inline_size({"a": 1}, "text")
    assert fits_inline({"a": 1}, "text", size)
    assert not fits_inline({"a": 1}, "text", size - 1)
    assert not fits_inline(None, "", 0)  # zero: everything goes to the store
    assert not fits_inline(None, "", -1)
    assert fits_inline(None, None, 4)
    assert fits_inline(0, "", 1)  # the smallest message fits the smallest positive limit


def test_a_preview_keeps_the_first_256_characters_and_says_how_many_more() -> None:
    assert PREVIEW_CHARS == 256
    exact = "p" * 256
    assert preview_text(exact) == exact
    longer = "q" * 1300
    assert (
        preview_text(longer) == "q" * 256 + "\n[... cut: 1,044 more characters are stored with the session]"
    )
    assert preview_text("abcdef", 5) == "abcde\n[... cut: 1 more characters are stored with the session]"


def test_cap_text_keeps_a_byte_budget_without_splitting_a_character() -> None:
    assert cap_text("abc", 3) == "abc"
    capped = cap_text("ééé", 3)  # 6 bytes; 3 bytes hold one whole "é"
    assert capped == (
        "é\n\n[sessionflow: this output was cut to its first 2 of 6 bytes; "
        "the whole of it is stored with the session]"
    )
    assert cap_text("x" * 5000, 1000, what="result").startswith(
        "x" * 1000 + "\n\n[sessionflow: this result was cut"
    )
    assert "first 1,000 of 5,000 bytes" in cap_text("x" * 5000, 1000)


def test_media_references_carry_the_prefix() -> None:
    assert is_media_ref(MEDIA_PREFIX + "abc")
    assert not is_media_ref("images/cat.png")
