"""The state one workflow run shares among its parts: the model it drives, its settings, the turn's cancel."""

from __future__ import annotations

from dataclasses import replace

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from sessionflow.session.model import SessionModel
    from sessionflow.session.state import AgentSnapshot
    from sessionflow.temporal._payloads import SessionRunConfig
    from sessionflow.temporal.workflow._cancel import TURN_CANCELLED, TurnCancellation


class SessionContext:
    """One per run; the turn driver, the tool calls and the handlers read and change it."""

    def __init__(self) -> None:
        # Replaced when the run starts from a carried model (continue-as-new).
        self.model = SessionModel()
        self.started = False
        self.config: SessionRunConfig | None = None
        self.environment: dict[str, str] = {}
        self.nonce = ""
        self.cancel = TurnCancellation()
        # Set while a model step runs: an answer may arrive before the approval it answers.
        self.model_step_running = False

    @property
    def settings(self) -> SessionRunConfig:
        """The run's settings, set before any turn starts."""
        assert self.config is not None
        return self.config

    def request_cancel(self) -> None:
        self.cancel.request()
        # Open approvals are answered "no" at once, so the turn unwinds without waiting.
        self.model.reject_pending_interrupts(TURN_CANCELLED, workflow.now())

    def snapshot(self) -> AgentSnapshot:
        snapshot = self.model.snapshot(workflow.info().workflow_id, started=self.started)
        return replace(snapshot, environment=dict(self.environment))
