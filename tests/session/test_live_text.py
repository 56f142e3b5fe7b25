"""LiveText: a turn's live text from its deltas, each step's latest attempt only."""

from __future__ import annotations

from sessionflow import AgentEvent, AgentEventType
from sessionflow.session.live_text import LiveText


def _event(
    kind: AgentEventType, text: str = "", *, turn: str = "t1", step: str = "s1", attempt: int = 1
) -> AgentEvent:
    return AgentEvent(
        type=kind, turn_id=turn, step_execution_id=step, attempt=attempt, data={"text": text} if text else {}
    )


def test_deltas_add_up_per_kind() -> None:
    live = LiveText()
    live.apply(_event(AgentEventType.TEXT_DELTA, "Hel"))
    live.apply(_event(AgentEventType.REASONING_DELTA, "hmm"))
    live.apply(_event(AgentEventType.TEXT_DELTA, "lo"))
    assert live.text("t1") == "Hello"
    assert live.reasoning("t1") == "hmm"
    assert live.text("t2") == ""


def test_steps_of_a_turn_join_in_order_and_turns_stay_apart() -> None:
    live = LiveText()
    live.apply(_event(AgentEventType.TEXT_DELTA, "one ", step="s1"))
    live.apply(_event(AgentEventType.TEXT_DELTA, "two", step="s2"))
    live.apply(_event(AgentEventType.TEXT_DELTA, "other", turn="t2"))
    assert live.text("t1") == "one two"
    assert live.text("t2") == "other"


def test_a_higher_attempt_replaces_and_a_late_lower_one_is_dropped() -> None:
    live = LiveText()
    live.apply(_event(AgentEventType.TEXT_DELTA, "first try", attempt=1))
    live.apply(_event(AgentEventType.REASONING_DELTA, "old thought", attempt=1))
    live.apply(_event(AgentEventType.TEXT_DELTA, "second", attempt=2))
    assert live.text("t1") == "second"
    assert live.reasoning("t1") == ""
    live.apply(_event(AgentEventType.TEXT_DELTA, " late", attempt=1))
    assert live.text("t1") == "second"
    live.apply(_event(AgentEventType.TEXT_DELTA, " more", attempt=2))
    assert live.text("t1") == "second more"


def test_a_restart_clears_the_step_even_before_new_text() -> None:
    live = LiveText()
    live.apply(_event(AgentEventType.TEXT_DELTA, "lost", attempt=1))
    live.apply(_event(AgentEventType.ATTEMPT_RESTARTED, attempt=2))
    assert live.text("t1") == ""
    live.apply(_event(AgentEventType.TEXT_DELTA, "kept", attempt=2))
    assert live.text("t1") == "kept"


def test_other_events_change_nothing() -> None:
    live = LiveText()
    live.apply(_event(AgentEventType.TEXT_DELTA, "a", attempt=1))
    live.apply(_event(AgentEventType.TOOL_CALL_STARTED, "ignored", attempt=5))
    live.apply(_event(AgentEventType.TURN_STARTED, "ignored", attempt=5))
    assert live.text("t1") == "a"
    live.apply(_event(AgentEventType.TEXT_DELTA, "b", attempt=1))
    assert live.text("t1") == "ab"


def test_a_finished_turn_drops_only_its_own_text() -> None:
    for end in (AgentEventType.TURN_COMPLETED, AgentEventType.TURN_FAILED):
        live = LiveText()
        live.apply(_event(AgentEventType.TEXT_DELTA, "a", step="s1"))
        live.apply(_event(AgentEventType.TEXT_DELTA, "b", step="s2"))
        live.apply(_event(AgentEventType.TEXT_DELTA, "c", turn="t2"))
        live.apply(_event(end, step="other"))
        assert live.text("t1") == ""
        assert live.text("t2") == "c"
        live.clear("t2")
        assert live.text("t2") == ""


def _step_completed(text: str, *, step: str = "s1", text_cut: int = 0) -> AgentEvent:
    return AgentEvent(
        type=AgentEventType.MODEL_STEP_COMPLETED,
        turn_id="t1",
        step_execution_id=step,
        attempt=1,
        data={"step": step, "text": text, "text_cut": text_cut, "tool_calls": []},
    )


def test_a_recorded_step_shows_its_text_without_deltas_and_settles_it() -> None:
    live = LiveText()
    live.apply(_step_completed("Let me look.", step="s1"))  # no delta reached this client
    live.apply(_event(AgentEventType.TEXT_DELTA, "Now ", step="s2", attempt=2))
    assert live.text("t1") == "Let me look.Now "
    live.apply(_step_completed("Now done.", step="s2"))
    assert live.text("t1") == "Let me look.Now done."
    # A delta that comes late, of any attempt, changes nothing.
    live.apply(_event(AgentEventType.TEXT_DELTA, " late", step="s2", attempt=3))
    assert live.text("t1") == "Let me look.Now done."


def test_a_recorded_text_cut_short_keeps_whole_deltas() -> None:
    live = LiveText()
    live.apply(_event(AgentEventType.TEXT_DELTA, "abcdef"))
    live.apply(_step_completed("abc", text_cut=3))
    assert live.text("t1") == "abcdef"
    live.apply(_event(AgentEventType.TEXT_DELTA, "wrong", step="s2"))
    live.apply(_step_completed("right", step="s2"))
    assert live.text("t1") == "abcdefright"
