"""Where the builtin runner shows a carried state: one system message before the turn's own."""

from __future__ import annotations

from typing import Any

from sessionflow import AgentMessage, AgentSessionOptions, MessageRole
from sessionflow.builtin._carry import CARRIED_PREFIX, with_carried
from sessionflow.kit import AgentEventWriter, AgentTurnContext, FrameworkMessage


def _message(sequence: int, turn_id: str, role: MessageRole, text: str) -> AgentMessage:
    item = {"role": role.value, "content": text}
    return AgentMessage(
        sequence=sequence,
        turn_id=turn_id,
        message=FrameworkMessage(role=role, framework_item=item, text=text),
    )


def _turn(carried: str | None) -> AgentTurnContext:
    return AgentTurnContext(
        flow_id="s",
        turn_id="turn-2",
        attempt=1,
        messages=[
            _message(1, "turn-1", MessageRole.USER, "one"),
            _message(2, "turn-1", MessageRole.ASSISTANT, "first"),
            _message(3, "turn-2", MessageRole.USER, "two"),
        ],
        framework_run_state=None,
        tool_calls={},
        policy_resolver=AgentSessionOptions().resolve_tool_policy,
        events=AgentEventWriter(None, turn_id="turn-2", step_execution_id="x", attempt=1),
        heartbeat=lambda *_: None,
        carried_state=carried,
    )


def _history(turn: AgentTurnContext) -> list[dict[str, Any]]:
    return [dict(m.message.framework_item) for m in turn.messages]


def test_the_carry_comes_right_before_the_running_turns_messages() -> None:
    turn = _turn("agent=billing")
    assert [m["content"] for m in with_carried(turn, _history(turn))] == [
        "one",
        "first",
        f"{CARRIED_PREFIX}agent=billing",
        "two",
    ]
    assert with_carried(turn, _history(turn))[2]["role"] == "system"


def test_without_a_carry_the_history_is_unchanged() -> None:
    turn = _turn(None)
    assert with_carried(turn, _history(turn)) == _history(turn)
