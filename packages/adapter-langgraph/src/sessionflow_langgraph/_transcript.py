"""The turn's stored messages after it ends: the transcript becomes the graph's message channel.

Usually the channel starts with the stored messages and the turn's new ones follow. A node
may replace the channel instead (``SummarizationMiddleware``'s
``RemoveMessage(REMOVE_ALL_MESSAGES)``, a summary, then the messages it kept): plain
LangGraph's thread then holds only that channel. Stored messages are only ever appended,
so the turn supersedes (`TurnCompleted.superseded`) the stored messages before the longest
run of them the channel starts with, and appends the rest of the channel, the summary and
the kept messages after it as copies under their IDs. The transcript (stored minus
superseded) is then the channel, in its order. The next turn's input is unchanged: the
carry keeps the channel and counts the copies among the stored messages
(`ThreadCarry.stored`), so they never go in twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from sessionflow.kit import AgentTurnContext, FrameworkMessage
from sessionflow_langgraph._messages import framework_message
from sessionflow_langgraph._run_state import starts_with

__all__ = ["turn_transcript"]


def turn_transcript(
    turn: AgentTurnContext, history: Sequence[BaseMessage], channel: Sequence[BaseMessage], first_live: int
) -> tuple[list[FrameworkMessage], list[int]]:
    """The messages the turn appends and the stored sequences it supersedes.

    ``history``: the stored messages (``turn.messages``, in order, as the graph saw them);
    ``first_live``: no stored message before it is in the transcript any more
    (`ThreadCarry.first_live`), so none before it is kept.
    """
    if starts_with(channel, history):  # the usual case: the turn's messages follow
        return [framework_message(m) for m in channel[len(history) :]], []
    cut = next(
        (at for at in range(max(first_live, 1), len(history)) if starts_with(channel, history[at:])),
        len(history),
    )
    kept = len(history) - cut
    superseded = [stored.sequence for stored in turn.messages[:cut]]
    return [framework_message(m) for m in channel[kept:]], superseded
