"""State a runner carries from one turn into the next (issue 20, gain 5).

A runner that ends a turn with `TurnCompleted(carry=...)` hands the session a string in
its own encoding: the OpenAI SDK's last agent, a LangGraph thread's non-message keys. The
session keeps it across turns and continue-as-new, and gives it to every model step of
the next turn as `AgentTurnContext.carried_state`.

The rule is replace, never merge: the carry a turn completes with is the whole state for
the next turn, and None (or "") means none. A runner that never carries always answers
None, so nothing changes for it; a runner that carries passes on what it was given to keep
it, and answers None to clear it. Only a completed turn commits a carry: a turn that
failed, was cancelled or was stopped keeps the one it started with.
"""

from __future__ import annotations

from sessionflow.session.bodies import BodyRef, preview_text
from sessionflow.session.outcomes import TurnCompleted

__all__ = ["CARRY_PREVIEW_CHARS", "carry_of", "carry_preview"]

CARRY_PREVIEW_CHARS = 2048
"""Characters of the carried state a snapshot shows (`AgentSnapshot.carried_state_preview`),
and that the session keeps of a carry stored by reference."""


def carry_preview(text: str | None) -> str | None:
    """What a snapshot shows of a carry: its first `CARRY_PREVIEW_CHARS`, with a marker when cut."""
    return None if text is None else preview_text(text, CARRY_PREVIEW_CHARS)


def carry_of(outcome: TurnCompleted) -> tuple[str | None, BodyRef | None]:
    """The carry a completed turn commits: (its text or, when stored, its preview; its reference)."""
    if outcome.carry_ref is not None:
        return outcome.carry, outcome.carry_ref
    return outcome.carry or None, None
