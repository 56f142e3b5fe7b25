"""What the Temporal UI shows of a session: step summaries and the session's current details.

Summaries travel as user metadata on the step's command. temporalio passes user metadata
through the client's payload codec (its payload visitor covers ``UserMetadata``), so with
an encryption codec they are encrypted like the step's input, and the UI shows them
through the codec server. Without a codec they are plaintext, as is the step's input
they are cut from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "MAX_ARGUMENTS_CHARS",
    "MAX_SUMMARY_CHARS",
    "model_name_of",
    "model_summary",
    "session_details",
    "tool_summary",
]

MAX_SUMMARY_CHARS = 200
"""Temporal's UI shows a line; a summary is cut well before that."""
MAX_ARGUMENTS_CHARS = 80
"""The head of a tool's arguments a summary shows: arguments may be huge (or secret)."""


def model_name_of(settings: Mapping[str, Any], default: str | None) -> str | None:
    """The turn's model: its settings' ``model`` (the CLI's per-turn choice), else the flow's."""
    chosen = settings.get("model")
    if isinstance(chosen, str) and chosen:
        return chosen
    return default


def model_summary(call: int, model: str | None) -> str:
    """``model call 2 (gpt-4.1-mini)``; without a known model, ``model call 2``."""
    text = f"model call {call}" + (f" ({_one_line(model)})" if model else "")
    return _cap(text, MAX_SUMMARY_CHARS)


def tool_summary(tool_name: str, arguments: str) -> str:
    """``lookup {"q": 1}``: the tool's name and the head of its arguments, on one line."""
    # Only a head is ever looked at: a multi-megabyte argument costs no more than a short one.
    head = _one_line(arguments[: MAX_ARGUMENTS_CHARS * 4])
    return _cap(f"{_one_line(tool_name)} {_cap(head, MAX_ARGUMENTS_CHARS)}", MAX_SUMMARY_CHARS)


def session_details(*, stopped: bool, turn_active: bool, turn_count: int, waiting_for: Sequence[str]) -> str:
    """The session's state in a line: idle, running turn N, waiting for approval of X, stopped."""
    if stopped:
        return f"stopped after {_turns(turn_count)}"
    if waiting_for:
        names = ", ".join(sorted(set(waiting_for)))
        return _cap(f"turn {turn_count}: waiting for approval of {_one_line(names)}", MAX_SUMMARY_CHARS)
    if turn_active:
        return f"running turn {turn_count}"
    return f"idle after {_turns(turn_count)}"


def _turns(count: int) -> str:
    return "1 turn" if count == 1 else f"{count} turns"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
