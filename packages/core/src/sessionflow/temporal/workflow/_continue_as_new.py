"""Continue-as-new: how a run starts from its input (a new session or a carried model) and when it hands over.

A run carries its whole `SessionModel` to the next one; between turns it continues as new
when its history grows long, or onto a new current version of the worker deployment.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import NoReturn

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from sessionflow.session.double_texting import DoubleTexting
    from sessionflow.session.memory import MemoryStore
    from sessionflow.session.queued_message import QueuedUserMessage
    from sessionflow.session.tools import AgentToolCallStatus
    from sessionflow.temporal._payloads import FLOW_RUN_CONFIG, SessionRunConfig, SessionStartInput
    from sessionflow.temporal.workflow._context import SessionContext

VERSION_UPGRADE_PATCH = "sessionflow-version-upgrade"
"""Marks runs that continued as new onto a new current worker deployment version (issue 26)."""

MID_TURN_PATCH = "sessionflow-mid-turn-continue"
"""Marks runs that continued as new inside a turn, between two of its steps (issue 41)."""


async def run_config_of(start: SessionStartInput) -> SessionRunConfig:
    """The run's configuration: its input's, else (a client that had only the flow type
    started the session) what the worker's flow says, recorded once in this history."""
    if start.timings is not None:
        return start.timings
    config = await workflow.execute_local_activity(
        FLOW_RUN_CONFIG,
        result_type=SessionRunConfig,
        start_to_close_timeout=timedelta(seconds=30),
        # A worker of the queue that does not serve this flow fails it retryably: another may.
        retry_policy=RetryPolicy(maximum_interval=timedelta(seconds=10)),
    )
    return replace(config, search_attributes=start.search_attributes)


def begin_run(session: SessionContext, start: SessionStartInput, config: SessionRunConfig) -> None:
    """Set up the run from its input: the model the previous run carried, or a new session's."""
    session.config = config
    session.environment = dict(start.environment)
    session.nonce = start.session_nonce or str(workflow.uuid4())
    if start.carried is not None:
        session.model = start.carried
    else:
        _load_history(session, start)
        session.model.double_texting = start.double_texting or DoubleTexting.ENQUEUE
        session.model.forked_from = start.forked_from
        if start.initial_message is not None:
            session.model.queue_user_message(
                QueuedUserMessage(
                    text=start.initial_message,
                    settings=start.initial_settings,
                    message=start.initial_user_message,
                )
            )
    session.model.event_log.max_bytes = config.event_retention_bytes
    memory = config.memory
    if memory is not None and session.model.memory is None:
        session.model.memory = MemoryStore(
            owner=start.environment.get("user", "user"),
            max_notes=memory.max_notes,
            max_chars=memory.max_chars,
            ttl_seconds=memory.ttl_seconds,
        )


def _load_history(session: SessionContext, start: SessionStartInput) -> None:
    # Inputs recorded before histories have none: nothing changes for them.
    if not start.history:
        return
    model = session.model
    model.load_history(start.history)
    if start.history_index_ref is not None:
        # The digest is the workflow's own: a model step checks the chunk it reads against it.
        model.record_index(start.history_index_ref, len(model.messages), model.digest)


class Continuation:
    """Decides, between turns, whether the run continues as new, and does it."""

    def __init__(self, session: SessionContext) -> None:
        self._session = session
        self._upgrade_declined = False

    def new_version_offered(self) -> bool:
        # Only a run pinned to a worker deployment version is told; unversioned runs never are.
        return not self._upgrade_declined and workflow.info().is_target_worker_deployment_version_changed()

    def should_upgrade(self) -> bool:
        """Continue as new onto the deployment's current version (checked between turns only)."""
        if not self.new_version_offered():
            return False
        if workflow.patched(VERSION_UPGRADE_PATCH):
            return True
        # A run recorded before this code was told too, and went on waiting: so does its replay.
        self._upgrade_declined = True
        return False

    def should_continue_as_new(self) -> bool:
        info = workflow.info()
        return (
            info.is_continue_as_new_suggested()
            or info.get_current_history_length() >= self._session.settings.continue_as_new_after_events
        )

    async def continue_mid_turn(self) -> None:
        """Continue as new between two steps of the running turn, when the history asks for it.

        Called where nothing of the turn runs: no step, no approval. The next run carries
        the turn whole in the model (its records, counts, budget spent, queue and events)
        and goes on with it (`TurnDriver.resume`). Returns when the run does not move: the
        history is short enough, the run was recorded before this code, or a cancel came
        in while handlers finished (the turn unwinds here, so the cancel is not lost).
        """
        if not self.should_continue_as_new() or not workflow.patched(MID_TURN_PATCH):
            return
        await workflow.wait_condition(workflow.all_handlers_finished)
        if self._session.cancel.requested:
            return
        self._carry_over(upgrade=False)

    def move_wanted_while_waiting(self) -> bool:
        """The history asks for a new run, and every open call of the turn waits for a person."""
        calls = self._session.model.tool_calls.values()
        return self.should_continue_as_new() and all(
            record.status is AgentToolCallStatus.AWAITING_APPROVAL for record in calls if not record.is_final
        )

    async def move_while_waiting(self) -> None:
        """Continue as new while the turn waits on approvals (see `move_wanted_while_waiting`).

        The next run carries them with their deadlines and waits on (`TurnDriver.resume`).
        Returns when a cancel came in while handlers finished: the turn unwinds here.
        """
        await workflow.wait_condition(workflow.all_handlers_finished)
        if self._session.cancel.requested:
            return
        self._carry_over(upgrade=False)

    async def continue_as_new(self, *, upgrade: bool) -> NoReturn:
        """Carry the model to the next run, once every handler has finished."""
        await workflow.wait_condition(workflow.all_handlers_finished)
        self._carry_over(upgrade=upgrade)

    def _carry_over(self, *, upgrade: bool) -> NoReturn:
        session = self._session
        workflow.continue_as_new(
            SessionStartInput(
                timings=session.settings,
                environment=session.environment,
                session_nonce=session.nonce,
                carried=session.model,
            ),
            # The next run starts on the current version, then is pinned there.
            initial_versioning_behavior=workflow.ContinueAsNewVersioningBehavior.AUTO_UPGRADE
            if upgrade
            else None,
        )
