"""What a tool's handler is told about the one run it serves."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

__all__ = ["ToolInvocation"]


@dataclass(frozen=True, kw_only=True)
class ToolInvocation:
    """Facts about one run of a tool, handed to its handler.

    `DeferredToolExecution` and this class carry the same facts, and there is one concept:
    the execution is the runner-facing record of the call (the stored `AgentToolCall` with
    its arguments and policy, plus the step's event writer and heartbeat), and this is its
    handler-facing view, `DeferredToolExecution.invocation`, the one place it is built from
    a session. The two stay separate classes because a handler is user code: it gets plain
    facts, no engine hooks, and tests and plain framework runs outside a session can build
    one by hand. Neither class is serialized; the activity builds the execution from its
    input, so payload formats do not depend on this split.

    Attributes:
        tool_call_id: The model's ID for the call.
        idempotency_key: Equal on every attempt of this call; pass it to the system the
            tool writes to so a retried write is applied once.
        attempt: 1 on the first run, higher on retries.
        session_id: The session (workflow) ID.
        turn_id: The turn that made the call.
        tool_name: The tool's name as the model called it.
        session_settings: Settings of the turn that made the call; a tool authorizes
            its call again against them on the worker that runs it.
        answer: The person's answer given with the approval, for question tools.
        run_state: The framework run state of the model step that deferred the call
            (framework-encoded), or None; a tool reads the framework's state from it.
        approved_digest: `approval_digest` of what a person approved for this call, or
            None when it never waited; `sessionflow.kit.check_run_arguments` holds the run
            to it.
        effect: The call's effect value, as the digest covers it.
    """

    tool_call_id: str
    idempotency_key: str
    attempt: int
    session_id: str = ""
    turn_id: str = ""
    tool_name: str = ""
    session_settings: Mapping[str, Any] = field(default_factory=lambda: {})
    answer: str | None = None
    run_state: str | None = None
    approved_digest: str | None = None
    effect: str = "unclassified"
