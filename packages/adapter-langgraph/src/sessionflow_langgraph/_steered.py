"""Messages that steer a running turn (`AgentTurnContext.steered_messages`), as LangChain messages.

Plain LangGraph adds a user's message to a paused run with ``update_state``: the message
goes into the messages channel through its reducer, as if the node before had written it,
and the run goes on from there. The model step does the same, after the tool node's
results (`ModelStep`), so the next model call sees the tool results, then the message.
"""

from __future__ import annotations

import hashlib

from langchain_core.messages import BaseMessage

from sessionflow import AgentMessage
from sessionflow.kit import AgentTurnContext
from sessionflow_langgraph._messages import history_message

__all__ = ["steered_messages"]


def steered_messages(turn: AgentTurnContext) -> list[BaseMessage]:
    """The step's steered messages, each with an ID every attempt of this step gives it alike.

    The ID keeps `add_messages` from merging two different messages; the transcript keeps
    it, so later turns see the message under the same ID.
    """
    seed = hashlib.sha256(f"{turn.turn_id}\0{turn.framework_run_state or ''}".encode()).hexdigest()[:12]
    messages: list[BaseMessage] = []
    for index, steered in enumerate(turn.steered_messages):
        message = history_message(AgentMessage(sequence=1, turn_id=turn.turn_id, message=steered))
        if message.id == "sessionflow-1":  # no ID of its own: one for this step's position
            message.id = f"sessionflow-steered-{seed}-{index}"
        messages.append(message)
    return messages
