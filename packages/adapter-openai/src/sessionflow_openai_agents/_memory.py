"""The SDK's `Session` memory (``SQLiteSession``, ...): refused, since the session is the memory.

A sessionflow session stores every message of the conversation in its workflow and
rebuilds each turn's input from them, which is what an SDK `Session` does for a plain
`Runner.run`. A second memory would add its items to the input again (the model would
see the conversation twice) and keep them outside the durable history, where a crash or
a replay cannot see them. So it is refused when the flow is built, saying what to do.
"""

from __future__ import annotations

from agents import Session

from sessionflow_openai_agents._errors import UnsupportedAgentOptionError

__all__ = ["refuse_sdk_session"]


def refuse_sdk_session(session: Session | None) -> None:
    if session is not None:
        raise UnsupportedAgentOptionError(
            "session",
            f"{type(session).__name__} is a second conversation memory: the sessionflow session "
            "already stores every message and gives the model the whole conversation each turn; "
            "leave session out and send each turn's user message to the session",
        )
