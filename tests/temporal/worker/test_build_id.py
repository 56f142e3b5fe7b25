"""The build ID a worker reports: sessionflow's own by default, not a hash of every module.

Temporal's default walks the bytecode of every loaded module when a worker is built (2-11 s
here with the agent SDKs imported); `build_workers` names the code instead. The history
shows what each workflow task's worker reported.
"""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType

from sessionflow.temporal import default_build_id
from tests.harness import Harness
from tests.harness_helpers import idle_after


async def test_workflow_tasks_carry_sessionflow_s_build_id(harness: Harness) -> None:
    harness.script("s-build-id", [[{"text": "one"}]])
    await harness.sessions.start_session("s-build-id", "hi")
    await idle_after(harness, "s-build-id", 1)
    history = await harness.sessions.client.get_workflow_handle("s-build-id").fetch_history()
    reported = {
        e.workflow_task_completed_event_attributes.binary_checksum
        or e.workflow_task_completed_event_attributes.worker_version.build_id
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    }
    assert reported == {default_build_id()}
    assert default_build_id().startswith("sessionflow-0.")
