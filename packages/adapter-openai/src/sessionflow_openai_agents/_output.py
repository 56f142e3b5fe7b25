"""Reading a structured final output (`Agent.output_type`) back from the session's messages.

The session stores every answer as text: a structured output as the JSON the model sent
(or, when a tool's result ended the run, the result as JSON). `structured_output` parses the
last assistant answer back into the agent's output type, as ``result.final_output`` had it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from pydantic import TypeAdapter

from sessionflow import AgentMessage, AgentSnapshot, MessageRole

__all__ = ["structured_output"]

T = TypeVar("T")


def structured_output(source: AgentSnapshot | Sequence[AgentMessage], output_type: type[T]) -> T | None:
    """The last assistant answer of ``source`` as an ``output_type``; None if there is none.

    Args:
        source: A session snapshot, or some of its messages (one turn's, say).
        output_type: The agent's ``output_type`` (a pydantic model, a dataclass, a
            TypedDict, ``str``, ...).

    Raises:
        pydantic.ValidationError: The answer is not an ``output_type`` (an answer of a
            turn whose agent had another output type, or a refusal text).
    """
    messages = source.messages if isinstance(source, AgentSnapshot) else source
    answers = [m.message.text for m in messages if m.message.role is MessageRole.ASSISTANT and m.message.text]
    if not answers:
        return None
    if output_type is str:
        return output_type(answers[-1])
    return TypeAdapter(output_type).validate_json(answers[-1])
