"""The carry of a completed turn as the workflow records it: inline when small, else by reference."""

from __future__ import annotations

from dataclasses import replace

from sessionflow.session.bodies import preview_text
from sessionflow.session.carry import CARRY_PREVIEW_CHARS
from sessionflow.session.outcomes import TurnCompleted
from sessionflow.temporal.storage._bodies import BodyStore, StoreScope

__all__ = ["stored_carry"]


async def stored_carry(bodies: BodyStore | None, outcome: TurnCompleted, scope: StoreScope) -> TurnCompleted:
    """`outcome` with a large carry in the payload store: `carry_ref` set, `carry` its preview.

    Like a tool output: the session keeps the preview for snapshots, and the next turn's
    model steps read the whole carry back through the reference.
    """
    carry = outcome.carry
    if not carry or bodies is None:
        return outcome
    ref = await bodies.store_text(carry, scope)
    if ref is None:
        return outcome
    return replace(outcome, carry=preview_text(carry, CARRY_PREVIEW_CHARS), carry_ref=ref)
