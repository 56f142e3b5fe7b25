"""What the Temporal UI and visibility show of a session: its current details and state search attributes."""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributeUpdate

with workflow.unsafe.imports_passed_through():
    from sessionflow.session.tools import AgentToolCallStatus
    from sessionflow.temporal._search_attributes import LAST_ACTIVITY_KEY, STATE_KEY, SessionState
    from sessionflow.temporal._summaries import session_details
    from sessionflow.temporal.workflow._context import SessionContext

SEARCH_ATTRIBUTES_PATCH = "sessionflow-search-attributes"
"""Marks runs that upsert their state and last activity as search attributes (issue 26)."""


class Visibility:
    """Shows the session's state; upserts the search attributes only when the state changes."""

    def __init__(self, session: SessionContext) -> None:
        self._session = session
        self._upserts: bool | None = None
        # A session starts idle (its client says so), and continues as new between turns.
        self._upserted_state = SessionState.IDLE

    def show_state(self) -> None:
        """Current details for the UI, and (when registered) the state search attributes."""
        model = self._session.model
        waiting = [
            r.tool_name
            for r in model.tool_calls.values()
            if r.status is AgentToolCallStatus.AWAITING_APPROVAL
        ]
        stopped = model.stopped and not model.turn_active
        workflow.set_current_details(
            session_details(
                stopped=stopped,
                turn_active=model.turn_active,
                turn_count=model.state.turn_count,
                waiting_for=waiting,
            )
        )
        if stopped:
            state = SessionState.STOPPED
        elif waiting:
            state = SessionState.WAITING_FOR_APPROVAL
        elif model.turn_active:
            state = SessionState.RUNNING
        else:
            state = SessionState.IDLE
        if state is self._upserted_state or not self._keeps_search_attributes():
            return
        self._upserted_state = state
        updates: list[SearchAttributeUpdate[Any]] = [
            STATE_KEY.value_set(state.value),
            LAST_ACTIVITY_KEY.value_set(workflow.now()),
        ]
        workflow.upsert_search_attributes(updates)  # pyright: ignore[reportUnknownMemberType]

    def decide_search_attributes(self, registered: bool) -> None:
        """Decide now whether this run upserts the state search attributes.

        For a run that awaits a local activity before its first state change (a flow-type
        session's `FlowRunConfig`): `workflow.patched` answers by the workflow task it runs
        in, and when a query arrives while that local activity runs, the code after it runs
        in the next task, while on replay it runs in the first; asked there, the patch
        fails the replay (`tests/temporal/workflow/test_queries_during_start.py`). Other
        runs decide at their first state change, as they were recorded.
        """
        if self._upserts is None:
            self._upserts = registered and workflow.patched(SEARCH_ATTRIBUTES_PATCH)

    def _keeps_search_attributes(self) -> bool:
        # Only sessions whose client found the attributes registered upsert them (an
        # unregistered one would fail the workflow task); the patch keeps runs recorded
        # without upserts on that path when replayed.
        if self._upserts is None:
            config = self._session.config
            self._upserts = (
                config is not None and config.search_attributes and workflow.patched(SEARCH_ATTRIBUTES_PATCH)
            )
        return self._upserts
