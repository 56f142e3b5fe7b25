"""Guarded memory: the edges of its rules (lengths, digits, expiry) and how notes render."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sessionflow.session.memory import MemoryCode, MemoryNote, MemoryStore

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _check(text: str, store: MemoryStore | None = None) -> MemoryCode:
    return (store or MemoryStore(owner="ada")).check("k", text, "model:turn-1", "ada")


def test_a_note_of_exactly_max_chars_is_allowed() -> None:
    store = MemoryStore(owner="ada", max_chars=10)
    assert _check("x" * 10, store) is MemoryCode.OK
    assert _check("x" * 11, store) is MemoryCode.TOO_LONG


def test_an_iban_alone_is_personal_data() -> None:
    assert _check("pay to DE89370400440532013000 please") is MemoryCode.PERSONAL_DATA


def test_a_phone_number_needs_nine_digits() -> None:
    assert _check("call 123 456 789") is MemoryCode.PERSONAL_DATA
    assert _check("code 1234-5678 here") is MemoryCode.OK


def test_a_note_expires_at_its_time_exactly() -> None:
    store = MemoryStore(owner="ada", ttl_seconds=60)
    assert store.write("k", "fine", source="model:turn-1", user="ada", now=NOW) is MemoryCode.OK
    assert [note.key for note in store.recall(user="ada", now=NOW + timedelta(seconds=59))] == ["k"]
    assert store.recall(user="ada", now=NOW + timedelta(seconds=60)) == []


def test_render_works_on_a_store_too() -> None:
    note = MemoryNote(key="k", text="a < b", source="user", written_at=NOW.isoformat())
    assert MemoryStore(owner="ada").render([note]) == MemoryStore.render([note])
    assert MemoryStore.render([]) == "No notes are remembered."
