"""`AgentSessionFlow`: one agent, its runner and options, served as one flow type.

The flow is engine-neutral: an adapter's flow builder makes one without loading the
engine. The engine derives what each session runs under from it
(`sessionflow.temporal.worker._run_config.run_config`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypedDict

from sessionflow.kit._deltas import DeltaTransport, InProcessDeltaBus
from sessionflow.kit._tool_specs import ToolSpec, merge_tool_policies
from sessionflow.session.errors import UserError
from sessionflow.session.options import AgentSessionOptions
from sessionflow.session.runner import AgentFrameworkRunner, is_runner

__all__ = ["AgentSessionFlow", "FlowArguments", "check_flow_name"]

_FLOW_TYPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$")


def check_flow_name(what: str, name: str) -> str:
    """`name`, when it may be a flow type or a task queue; else a `ValueError` naming `what`."""
    if not _FLOW_TYPE.match(name):
        raise ValueError(f"{what} {name!r} must be 1-200 characters of letters, digits, '.', '_', ':' or '-'")
    return name


class FlowArguments(TypedDict, total=False):
    """The arguments of `AgentSessionFlow` that a framework's flow builder passes on unchanged.

    A builder such as ``langgraph_session_flow(..., **flow_args: Unpack[FlowArguments])``
    takes them as keywords, so every builder accepts each of them (a delta transport too)
    and a new one needs adding here only.
    """

    options: AgentSessionOptions | None
    continue_as_new_after_events: int
    delta_transport: DeltaTransport | None
    delta_fallback: bool
    task_queue: str | None


class AgentSessionFlow:
    """A flow type: its name is the workflow type of its sessions, and by default their task queue."""

    def __init__(
        self,
        runner: AgentFrameworkRunner,
        *,
        flow_type: str,
        options: AgentSessionOptions | None = None,
        tool_specs: Iterable[ToolSpec] = (),
        continue_as_new_after_events: int = 10_000,
        delta_transport: DeltaTransport | None = None,
        delta_fallback: bool = True,
        task_queue: str | None = None,
    ) -> None:
        """Create a flow type.

        Args:
            runner: the adapter that drives the framework.
            flow_type: workflow type and task queue name.
            options: tool policies, timeouts and retry counts.
            tool_specs: neutral tools the runner offers; the `ToolSpec.policy` of each goes
                into ``options.tool_policies`` unless the options have one for that tool
                (`merge_tool_policies`).
            continue_as_new_after_events: history length after which a session continues
                as new at the next turn boundary (Temporal's own suggestion also triggers it).
            delta_transport: where live deltas go; the process-wide in-process bus by default.
            delta_fallback: when no subscriber is reachable through the transport, send
                deltas to the workflow in a few coarse batches per model call instead.
            task_queue: the Temporal task queue its sessions run on; by default `flow_type`.
                Flows that name one queue share it, and one worker serves them all
                (`sessionflow.temporal.SessionflowPlugin`).
        """
        check_flow_name("flow_type", flow_type)
        check_flow_name("task_queue", task_queue or flow_type)
        if not is_runner(runner):
            # Caught here, not at the first step: the session calls the contract's optional
            # methods on every runner, and only a subclass has their defaults.
            raise UserError(
                f"runner {type(runner).__name__} does not implement AgentFrameworkRunner; "
                "subclass sessionflow.kit.AgentFrameworkRunner (it gives the optional methods their defaults)"
            )
        self.runner = runner
        self.flow_type = flow_type
        self.options = merge_tool_policies(options or AgentSessionOptions(), tool_specs)
        self.continue_as_new_after_events = continue_as_new_after_events
        self.delta_transport: DeltaTransport = delta_transport or InProcessDeltaBus.shared()
        self.delta_fallback = delta_fallback
        self.task_queue = task_queue or flow_type

    @property
    def model_name(self) -> str | None:
        """The runner's model, when it names one (a ``model_name`` or ``model`` string attribute).

        Step summaries in the Temporal UI and trace attributes show it; a turn's ``model``
        setting overrides it.
        """
        for attribute in ("model_name", "model"):
            value = getattr(self.runner, attribute, None)
            if isinstance(value, str) and value:
                return value
        return None

    def __repr__(self) -> str:
        return f"AgentSessionFlow(flow_type={self.flow_type!r}, runner={type(self.runner).__name__})"
