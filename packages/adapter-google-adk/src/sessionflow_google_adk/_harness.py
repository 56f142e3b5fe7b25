"""The harness agent's instruction: the system prompt, then what the builtin runner shows in
its system message, in its words: a carry hook's carry and the tool state.

An instruction provider (ADK's callable ``instruction``) reads both from the session's state
as each model call starts: the carry from the invocation's ``temp:`` state
(`CARRIED_STATE_KEY`), the tool state from the session's other keys (what spec tools set,
`_tool_specs`). A provider's text is not templated by ADK, so braces in a system prompt stay.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.sessions.state import State

from sessionflow_google_adk._step_plugin import CARRIED_STATE_KEY

__all__ = ["CARRIED_PREFIX", "harness_instruction"]

CARRIED_PREFIX = "[sessionflow] Carried from the previous turn: "


def harness_instruction(system_prompt: str | None) -> Callable[[ReadonlyContext], str]:
    def instruction(context: ReadonlyContext) -> str:
        state = dict(context.state)
        lines = [system_prompt] if system_prompt else []
        carried = state.get(CARRIED_STATE_KEY)
        if isinstance(carried, str) and carried:
            lines.append(CARRIED_PREFIX + carried)
        tool_state = {k: v for k, v in state.items() if not k.startswith(State.TEMP_PREFIX)}
        if tool_state:
            lines.append("Tool state: " + json.dumps(tool_state, ensure_ascii=False))
        return "\n\n".join(lines)

    return instruction
