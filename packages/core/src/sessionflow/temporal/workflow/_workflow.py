"""The session workflow: one execution per session, driving the pure `SessionModel`.

The class holds the main loop and composes its parts: the turn driver (`_turn`), the tool
calls (`_tool_calls`), continue-as-new (`_continue_as_new`) and what visibility shows
(`_visibility`), sharing one `SessionContext`; its handlers come from `SessionHandlers`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from temporalio import workflow
from temporalio.common import RawValue

with workflow.unsafe.imports_passed_through():
    from sessionflow.session.state import AgentSnapshot
    from sessionflow.temporal._payloads import SessionStartInput
    from sessionflow.temporal.workflow._context import SessionContext
    from sessionflow.temporal.workflow._continue_as_new import Continuation, begin_run, run_config_of
    from sessionflow.temporal.workflow._handlers import SessionHandlers
    from sessionflow.temporal.workflow._tool_calls import ToolCalls
    from sessionflow.temporal.workflow._turn import TurnDriver
    from sessionflow.temporal.workflow._visibility import Visibility


CARRIED_BEFORE_HANDLERS_PATCH = "sessionflow-carried-before-handlers"
"""Marks runs whose carried model was in place before their first handlers ran (issue 41)."""


@workflow.defn(dynamic=True)
class AgentSessionWorkflow(SessionHandlers):
    """Serves every flow type: the workflow type is the flow type, and so is the task queue."""

    @workflow.init
    def __init__(self, args: Sequence[RawValue]) -> None:
        self._start = workflow.payload_converter().from_payload(args[0].payload, SessionStartInput)
        self._session = SessionContext()
        if self._start.carried is not None and workflow.patched(CARRIED_BEFORE_HANDLERS_PATCH):
            # A message (an update) that reaches a run in its first workflow task is handled
            # before `run` starts: it must land in the carried model, not in a fresh one
            # that `run` then replaces. Runs recorded before this lost such a message.
            self._session.model = self._start.carried
        self._visibility = Visibility(self._session)
        self._continuation = Continuation(self._session)
        self._turns = TurnDriver(
            self._session,
            ToolCalls(self._session, self._visibility, self._continuation),
            self._visibility,
            self._continuation,
        )
        self._turn_task: asyncio.Task[None] | None = None

    @workflow.run
    async def run(self, args: Sequence[RawValue]) -> AgentSnapshot:
        start = self._start
        session = self._session
        if start.timings is None:
            # The configuration comes from a local activity: decide before awaiting it.
            self._visibility.decide_search_attributes(start.search_attributes)
        begin_run(session, start, await run_config_of(start))
        session.started = True
        self._visibility.show_state()
        if session.model.turn_active:
            # The previous run continued as new inside this turn: it goes on from there.
            await self._run(self._turns.resume())
        while True:
            # Between turns, a new current version of the worker deployment is a reason to
            # wake up too: the session leaves the old version as soon as its turn ends.
            await workflow.wait_condition(
                lambda: (
                    bool(session.model.queued)
                    or session.model.stopped
                    or self._continuation.new_version_offered()
                )
            )
            if session.model.stopped:
                break
            upgrade = self._continuation.should_upgrade()
            if not upgrade and not session.model.queued:
                continue
            if upgrade or self._continuation.should_continue_as_new():
                await self._continuation.continue_as_new(upgrade=upgrade)
            await self._run(self._turns.start(session.model.next_queued()))
        self._visibility.show_state()
        await workflow.wait_condition(workflow.all_handlers_finished)
        return session.snapshot()

    async def _run(self, turn: asyncio.Task[None]) -> None:
        self._turn_task = turn
        await turn
        self._turn_task = None
        self._visibility.show_state()
