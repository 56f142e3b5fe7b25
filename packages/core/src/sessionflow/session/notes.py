"""The note a failed turn leaves behind so the next turn does not repeat its writes."""

from __future__ import annotations

from collections.abc import Iterable

from sessionflow.session.tools import AgentToolCall, describe_tool_call_outcome, render_arguments

__all__ = ["TURN_FAILURE_NOTE_FOOTER", "TURN_FAILURE_NOTE_HEADER", "build_turn_failure_note"]

TURN_FAILURE_NOTE_HEADER = "[sessionflow] The previous turn failed after these tool calls ran:"
TURN_FAILURE_NOTE_FOOTER = "Do not repeat these tool calls unless the user asks again."


def build_turn_failure_note(records: Iterable[AgentToolCall]) -> str | None:
    """One line per final record, in the order the model asked for them; None if there are none."""
    final = sorted((r for r in records if r.is_final), key=lambda r: r.deferral_order)
    if not final:
        return None
    lines = [TURN_FAILURE_NOTE_HEADER]
    for record in final:
        outcome = describe_tool_call_outcome(record).replace("\n", " ")
        lines.append(
            f"- {record.tool_name} {render_arguments(record.arguments)} -> {record.status.value}: {outcome}"
        )
    lines.append(TURN_FAILURE_NOTE_FOOTER)
    return "\n".join(lines)
