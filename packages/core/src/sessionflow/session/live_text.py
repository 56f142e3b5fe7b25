"""Rebuild the live text of a turn from deltas, keeping only each step's latest attempt."""

from __future__ import annotations

from dataclasses import dataclass, field

from sessionflow.session.events import AgentEvent, AgentEventType

__all__ = ["LiveText"]

_SETTLED = 1 << 30
"""The attempt a settled step counts as: higher than any real attempt, so no delta changes it."""


@dataclass
class _StepText:
    attempt: int
    text: str = ""
    reasoning: str = ""


@dataclass
class LiveText:
    """Groups deltas by (turn, step execution). A higher attempt replaces a lower one's text,
    and a step's `model_step_completed` event replaces its deltas with the recorded text.

    After `turn_completed` or `turn_failed` the stored messages are the truth, so the turn's
    live text is dropped.
    """

    _steps: dict[tuple[str, str], _StepText] = field(default_factory=lambda: {})

    def apply(self, event: AgentEvent) -> None:
        key = (event.turn_id, event.step_execution_id)
        if event.type in (AgentEventType.TURN_COMPLETED, AgentEventType.TURN_FAILED):
            self.clear(event.turn_id)
            return
        if event.type is AgentEventType.MODEL_STEP_COMPLETED:
            self._settle(key, event)
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

    def _settle(self, key: tuple[str, str], event: AgentEvent) -> None:
        """The step ended: its recorded text is the truth, whatever deltas arrived or did not
        (a turn another process's worker runs sends this process none). A recorded text cut
        short never replaces whole deltas."""
        recorded = str(event.data.get("text", ""))
        current = self._steps.get(key)
        if current is None:
            current = self._steps[key] = _StepText(attempt=_SETTLED, text=recorded)
        elif not (event.data.get("text_cut") and len(current.text) >= len(recorded)):
            current.text = recorded
        current.attempt = _SETTLED  # a delta that arrives late (another host's transport) adds nothing

    def text(self, turn_id: str) -> str:
        return "".join(step.text for (turn, _), step in self._steps.items() if turn == turn_id)

    def reasoning(self, turn_id: str) -> str:
        return "".join(step.reasoning for (turn, _), step in self._steps.items() if turn == turn_id)

    def clear(self, turn_id: str) -> None:
        for key in [k for k in self._steps if k[0] == turn_id]:
            del self._steps[key]
