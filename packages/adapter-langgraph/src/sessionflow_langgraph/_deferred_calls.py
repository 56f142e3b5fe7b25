"""The calls a model step defers at a tool node, and the messages it reads back from the graph.

A step that stops before a tool node defers the latest AI message's tool calls, each with
the session's policy for its tool (`CallDeferral`). A step that reaches the end takes the
turn's rewritten messages back (`rewritten_turn_messages`; the rest is `_transcript`). A
call that did not run in the tool node reaches
the graph as the `ToolMessage` of its recorded outcome (`tool_message`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.types import StateSnapshot

from sessionflow import AgentMessage, AgentToolCallStatus, ToolEffect, ToolPolicy
from sessionflow.kit import (
    AgentTurnContext,
    DeferredToolCall,
    ToolSpec,
    TurnAborted,
    describe_tool_call_outcome,
    tool_arguments_object,
    with_tool_asks,
)
from sessionflow_langgraph._messages import framework_message

__all__ = ["CallDeferral", "paused_tool_node", "rewritten_turn_messages", "tool_message"]


@dataclass(frozen=True)
class CallDeferral:
    """Defers a tool node's calls with each tool's declared effect and `ToolSpec` asks and verify."""

    effects: Mapping[str, ToolEffect | None]
    specs: Mapping[str, ToolSpec]
    policies: Mapping[str, ToolPolicy | None] = field(default_factory=lambda: {})
    """The whole policy each tool is marked with (`sessionflow.effect(..., policy=...)`)."""

    def calls_of(
        self,
        turn: AgentTurnContext,
        messages: list[BaseMessage],
        tool_node: str,
        sent: Collection[str] | None = None,
    ) -> list[DeferredToolCall]:
        """The calls ``tool_node`` is about to run: the latest AI message's, invalid ones last.

        ``sent``: the tool node's tasks are `Send`s carrying these call IDs (``create_agent``
        sends one per call it has no `ToolMessage` for yet): only those calls run, as in
        plain LangGraph, so a call a middleware already answered (a tool call limit) is not
        deferred. None: the node takes the whole message (a `ToolNode` on an edge).
        """
        # A ToolNode runs the latest AI message's calls, wherever it is in the list.
        last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if last is None or not (last.tool_calls or last.invalid_tool_calls):
            raise TurnAborted(
                f"the graph reached its tool node {tool_node!r} but the last message is not an AI "
                "message with tool calls"
            )
        calls: list[DeferredToolCall] = []
        for call in last.tool_calls:
            if sent is not None and call["id"] not in sent:
                continue
            arguments = json.dumps(call["args"], ensure_ascii=False)
            calls.append(self.deferred(turn, call["id"] or "", call["name"], arguments))
        if sent is not None:
            if not calls:
                raise TurnAborted(
                    f"the graph sent tool calls {sorted(sent)!r} to its tool node {tool_node!r}, and the "
                    "latest AI message has none of them"
                )
            return calls  # a Send carries valid calls only; plain LangGraph runs no invalid one
        for invalid in last.invalid_tool_calls:
            # Malformed arguments are deferred as sent; running them reports the error to the model.
            calls.append(
                self.deferred(turn, invalid["id"] or "", invalid["name"] or "", invalid["args"] or "")
            )
        return calls

    def deferred(
        self, turn: AgentTurnContext, tool_call_id: str, name: str, arguments: str
    ) -> DeferredToolCall:
        policy = turn.resolve_tool_policy(
            name, self.effects.get(name), declared_policy=self.policies.get(name)
        )
        call = DeferredToolCall(tool_call_id=tool_call_id, tool_name=name, arguments=arguments, policy=policy)
        return with_tool_asks(call, self.specs.get(name))

    async def verifiable(self, call: DeferredToolCall) -> DeferredToolCall:
        """``call`` deferred verifiable when its tool's `ToolSpec` has a verify, the basis taken now.

        The basis is taken from the arguments the call runs with (a person's edit included),
        in the model step, so it is durable before the write can start.
        """
        spec = self.specs.get(call.tool_name)
        if spec is None or spec.verify is None:
            return call
        arguments = tool_arguments_object(call.arguments)
        basis = await spec.deferral_basis(arguments) if arguments is not None else None
        return dataclasses.replace(call, verifiable=True, verify_basis=basis)


def paused_tool_node(snapshot: StateSnapshot, tool_nodes: Sequence[str]) -> str:
    """The one tool node the graph stopped before; any other stop fails the turn."""
    paused = sorted(set(snapshot.next))
    others = [node for node in paused if node not in tool_nodes]
    if others or len(paused) != 1:
        raise TurnAborted(
            f"the graph stopped before node(s) {', '.join(repr(n) for n in paused)}; a RunModel step may "
            f"only pause before one tool node ({', '.join(repr(n) for n in tool_nodes)}), alone"
        )
    return paused[0]


def rewritten_turn_messages(
    turn: AgentTurnContext, history: list[BaseMessage], messages: list[BaseMessage]
) -> tuple[list[AgentMessage], list[BaseMessage]]:
    """The turn's stored messages the graph rewrote (a redaction), and the history with them.

    A node may replace a message the turn stored before it ran (``PIIMiddleware`` puts the
    user's message back redacted, under its ID): the stored transcript takes the graph's
    version, as plain LangGraph's thread holds it. Messages of earlier turns are not
    rewritten (the session's transcript keeps them; see `TurnCompleted.replaced_messages`).
    """
    by_id = {m.id: m for m in messages if m.id is not None}
    replaced: list[AgentMessage] = []
    current = list(history)
    for index, stored in enumerate(turn.messages):
        if stored.turn_id != turn.turn_id or index >= len(history):
            continue
        now = by_id.get(history[index].id or "")
        if now is None or now == history[index]:
            continue
        replaced.append(
            AgentMessage(sequence=stored.sequence, turn_id=stored.turn_id, message=framework_message(now))
        )
        current[index] = now
    return replaced, current


def tool_message(turn: AgentTurnContext, tool_call_id: str) -> ToolMessage:
    """The recorded outcome of a call that did not run in the tool node, as its `ToolMessage`."""
    record = turn.recorded_tool_call(tool_call_id)
    status = "success" if record.status is AgentToolCallStatus.SUCCEEDED else "error"
    return ToolMessage(
        content=describe_tool_call_outcome(record),
        tool_call_id=tool_call_id,
        name=record.tool_name,
        status=status,
    )
