"""Rebuild the live text of a turn from deltas, keeping only each step's latest attempt."""

from __future__ import annotations

from dataclasses import dataclass, field

from sessionflow.session.events import AgentEvent, AgentEventType

__all__ = ["LiveText"]


@dataclass
class _StepText:
    attempt: int
    text: str = ""
    reasoning: str = ""


@dataclass
class LiveText:
    """Groups deltas by (turn, step execution). A higher attempt replaces a lower one's text.

    After `turn_completed` or `turn_failed` the stored messages are the truth, so the turn's
    live text is dropped.
    """

    _steps: dict[tuple[str, str], _StepText] = field(default_factory=lambda: {})

    def apply(self, event: AgentEvent) -> None:
        key = (event.turn_id, event.step_execution_id)
        if event.type in (AgentEventType.TURN_COMPLETED, AgentEventType.TURN_FAILED):
            self.clear(event.turn_id)
            return
        if not (event.type.is_delta or event.type is AgentEventType.ATTEMPT_RESTARTED):
            return
        current = self._steps.get(key)
        if current is None or event.attempt > current.attempt:
            current = self._steps[key] = _StepText(attempt=event.attempt)
        elif event.attempt < current.attempt:
            return  # a late delta of an attempt that was already replaced
        text = str(event.data.get("text", ""))
        if event.type is AgentEventType.TEXT_DELTA:
            current.text += text
        elif event.type is AgentEventType.REASONING_DELTA:
            current.reasoning += text

    def text(self, turn_id: str) -> str:
        return "".join(step.text for (turn, _), step in self._steps.items() if turn == turn_id)

    def reasoning(self, turn_id: str) -> str:
        return "".join(step.reasoning for (turn, _), step in self._steps.items() if turn == turn_id)

    def clear(self, turn_id: str) -> None:
        for key in [k for k in self._steps if k[0] == turn_id]:
            del self._steps[key]
