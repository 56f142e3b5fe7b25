"""`agent.run`'s arguments that a session flow refuses, each with what to use instead.

A plain turn is one ``agent.run(...)`` in one process; a session's turn is many steps, each
a run in whichever worker process takes it, and a retried step may run in another. Three of
`agent.run`'s arguments are things of the calling process or of one run, and so cannot
reach those steps. The flow takes them by name only to refuse them with the session's own
counterpart, instead of an unknown-keyword `TypeError`.
"""

from __future__ import annotations

from typing import Literal

from pydantic_ai import CancellationToken
from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef

from sessionflow import UnsupportedOptionError

__all__ = ["refuse_run_arguments"]


def refuse_run_arguments(
    *,
    cancellation_token: CancellationToken | None,
    timeout: float | None,
    workspace: WorkspaceBackend | WorkspaceRef | Literal["new"] | None,
) -> None:
    """Raise `UnsupportedOptionError` for the first of these `agent.run` arguments that is given."""
    if cancellation_token is not None:
        # Pydantic AI's own durable execution refuses it for the same reason.
        raise UnsupportedOptionError(
            "cancellation_token",
            "a CancellationToken is a handle on runs of this process, and a session's steps run in "
            "worker processes (a retried step perhaps in another), so cancelling it would reach "
            "none of them; cancel a session's turn with AgentSessionClient.cancel_turn(session_id)",
        )
    if timeout is not None:
        raise UnsupportedOptionError(
            "timeout",
            "a run's deadline (RunTimedOut) is one run's clock, and a session's turn is many runs, "
            "in steps that may wait for a person or run again after a crash; bound each step with "
            "AgentSessionOptions.timings (model_start_to_close, tool_start_to_close), and end a turn "
            "that runs too long from the client with AgentSessionClient.cancel_turn(session_id)",
        )
    if workspace is not None:
        raise UnsupportedOptionError(
            "workspace",
            "a run's workspace is a backend of the calling process, and every step of a session is a "
            "run of its own in a worker; give the agent its workspace as a capability "
            "(capabilities=[LocalWorkspace(path)], over a path every worker sees), which each step "
            "selects again, with the WorkspaceRef the stored responses carry",
        )
