"""The note a failed turn leaves behind so the next turn does not repeat its writes."""

from __future__ import annotations

from collections.abc import Iterable

from sessionflow.session.tools import AgentToolCall, describe_tool_call_outcome, render_arguments

__all__ = ["TURN_FAILURE_NOTE_FOOTER", "TURN_FAILURE_NOTE_HEADER", "build_turn_failure_note"]

TURN_FAILURE_NOTE_HEADER = "[sessionflow] The previous turn failed after these tool calls ran:"
TURN_FAILURE_NOTE_FOOTER = "Do not repeat these tool calls unless the user asks again."


def build_turn_failure_note(
    records: Iterable[AgentToolCall], *, stop_reason: str | None = None, stop_detail: str = ""
) -> str | None:
    """One line per final record, in the order the model asked for them; None if there are none.

    A turn the session stopped on its own (a budget, a loop) always leaves a note that
    names the reason, so the next turn's model knows why it was cut off.
    """
    final = sorted((r for r in records if r.is_final), key=lambda r: r.deferral_order)
    if stop_reason is not None:
        head = f"[sessionflow] The previous turn was stopped ({stop_reason})" + (
            f": {stop_detail}" if stop_detail else "."
        )
        if not final:
            return head
        lines = [head, "These tool calls ran before it stopped:"]
        lines += [_line(record) for record in final]
        lines.append(TURN_FAILURE_NOTE_FOOTER)
        return "\n".join(lines)
    if not final:
        return None
    lines = [TURN_FAILURE_NOTE_HEADER]
    lines += [_line(record) for record in final]
    lines.append(TURN_FAILURE_NOTE_FOOTER)
    return "\n".join(lines)


def _line(record: AgentToolCall) -> str:
    outcome = describe_tool_call_outcome(record).replace("\n", " ")
    # A verified outcome was checked by the tool after its step died: say so, so the next
    # model trusts it more than an outcome nobody looked at.
    status = f"{record.status.value} (verified)" if record.verified else record.status.value
    return f"- {record.tool_name} {render_arguments(record.arguments)} -> {status}: {outcome}"
