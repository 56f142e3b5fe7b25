"""The turn's final output, stored as JSON in the snapshot and read back typed.

The last assistant message's text is the output rendered for people (a string as is,
anything else as JSON), which cannot tell ``"42"`` the text from ``42`` the number, or a
`Box` from a string that looks like one. So a completed turn also stores the output as a
JSON value under `OUTPUT_KEY` of `TurnCompleted.framework_state`, and `read_output`
validates it against the agent's output type.
"""

from __future__ import annotations

from typing import Any, TypeVar, Union

import pydantic_core
from pydantic import TypeAdapter
from pydantic_ai._output import types_from_output_spec
from pydantic_ai.output import OutputSpec

from sessionflow import AgentSnapshot

__all__ = ["OUTPUT_KEY", "output_json", "read_output"]

OUTPUT_KEY = "output"
"""The key of `TurnCompleted.framework_state` the final output is stored under."""

OutputT = TypeVar("OutputT")


def output_json(output: object) -> Any:
    """``output`` as a JSON value; what JSON cannot hold becomes its `str`, so the view
    of a turn never fails it (the turn's text has the output already)."""
    return pydantic_core.to_jsonable_python(output, fallback=str)


def read_output(snapshot: AgentSnapshot, output_type: OutputSpec[OutputT]) -> OutputT:
    """The final output of the session's last completed turn, as ``output_type``.

    ``output_type`` is what the agent was built with (``agent.output_type``): a type, a
    list of types (``[Box, str]``: their union), `ToolOutput`, `NativeOutput`,
    `PromptedOutput`, `TextOutput` or an output function (its return type). The stored JSON
    is validated with pydantic's `TypeAdapter`, so it comes back as the plain run's
    ``result.output`` did.

    Raises:
        LookupError: No completed turn stored an output (none completed yet, or the
            output was larger than the snapshot's framework state may hold).
        pydantic.ValidationError: The stored output is not an ``output_type``.
    """
    if OUTPUT_KEY in snapshot.framework_state_omitted:
        raise LookupError(
            f"session {snapshot.session_id!r}: the last turn's output was too large for the snapshot; "
            "read it from the last assistant message"
        )
    state = snapshot.framework_state or {}
    if OUTPUT_KEY not in state:
        raise LookupError(f"session {snapshot.session_id!r} has no completed turn with an output")
    adapter: TypeAdapter[OutputT] = TypeAdapter(_output_type(output_type))
    # JSON in, as it was stored: dates, enums and models validate as they were dumped.
    return adapter.validate_json(pydantic_core.to_json(state[OUTPUT_KEY]))


def _output_type(output_type: OutputSpec[Any]) -> Any:
    """The one type the output validates as: the union of the spec's output types, with
    output functions standing for their return types (Pydantic AI's own reading)."""
    types = list(types_from_output_spec(output_type))
    # `Union[...]`, not `|`: a bare `None` (an output type that allows no output) has no `|`.
    union: Any = Union
    return types[0] if len(types) == 1 else union[tuple(types)]
