"""Moving sessions to a new release: the current version, sessions left on old ones, drainage.

Workers that join a worker deployment (`WorkerDeployment`) pin each run of a session to
their version. Once a new version is current, a session leaves the old one at its next turn
boundary by continuing as new. A session that was idle when the version changed gets no
workflow task by itself: `wake_sessions_on_old_versions` sends each one a signal, whose
workflow task (on the old version's workers, which must still run) continues it as new
onto the current version. Then the old version drains, and its workers can stop.
"""

from __future__ import annotations

import asyncio
import time
from enum import StrEnum

from temporalio.api.deployment.v1 import WorkerDeploymentVersion as WorkerDeploymentVersionRef
from temporalio.api.enums.v1 import VersionDrainageStatus
from temporalio.api.workflowservice.v1 import (
    DescribeWorkerDeploymentRequest,
    DescribeWorkerDeploymentVersionRequest,
    SetWorkerDeploymentCurrentVersionRequest,
)
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from sessionflow.temporal._payloads import CHECK_VERSION
from sessionflow.temporal.worker._deployment import WorkerDeployment

__all__ = [
    "DrainageStatus",
    "current_version",
    "drainage_status",
    "sessions_on_old_versions",
    "set_current_version",
    "wake_sessions_on_old_versions",
]

_IDENTITY = "sessionflow-upgrades"


class DrainageStatus(StrEnum):
    """Whether sessions may still need a version's workers."""

    ACTIVE = "active"
    """Current or ramping, or never left: the server does not track its drainage."""
    DRAINING = "draining"
    """No longer current; sessions pinned to it are still running."""
    DRAINED = "drained"
    """No longer current, and no running session is pinned to it: its workers can stop."""


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


async def current_version(client: Client, deployment_name: str) -> WorkerDeployment | None:
    """The deployment's current version, or None when unversioned workers are current.

    Raises:
        LookupError: No worker of that deployment ever polled this namespace.
    """
    try:
        response = await client.workflow_service.describe_worker_deployment(
            DescribeWorkerDeploymentRequest(namespace=client.namespace, deployment_name=deployment_name)
        )
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            raise LookupError(
                f"no worker deployment {deployment_name!r} in namespace {client.namespace!r}"
            ) from None
        raise
    current = response.worker_deployment_info.routing_config.current_deployment_version
    return WorkerDeployment(deployment_name, current.build_id) if current.build_id else None


async def set_current_version(client: Client, deployment: WorkerDeployment, *, timeout: float = 60.0) -> None:
    """Make `deployment` current (what ``temporal worker deployment set-current-version`` does).

    A version exists once its workers poll, a moment after they start: until then (at most
    `timeout` seconds) the request is tried again.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            await client.workflow_service.set_worker_deployment_current_version(
                SetWorkerDeploymentCurrentVersionRequest(
                    namespace=client.namespace,
                    deployment_name=deployment.name,
                    build_id=deployment.build_id,
                    identity=_IDENTITY,
                )
            )
            return
        except RPCError as error:
            retryable = error.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.FAILED_PRECONDITION)
            if not retryable or time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.2)


async def sessions_on_old_versions(
    client: Client, deployment_name: str, *, flow_type: str | None = None
) -> list[str]:
    """IDs of running sessions pinned to a version of the deployment that is not current.

    Read from visibility, which lags the sessions by up to a second or so.
    """
    current = await current_version(client, deployment_name)
    query = (
        f"TemporalWorkerDeployment = {_quoted(deployment_name)} AND ExecutionStatus = 'Running'"
        " AND TemporalWorkflowVersioningBehavior = 'Pinned'"
    )
    if current is not None:
        query += f" AND TemporalWorkerDeploymentVersion != {_quoted(current.version)}"
    if flow_type is not None:
        query += f" AND WorkflowType = {_quoted(flow_type)}"
    return sorted({execution.id async for execution in client.list_workflows(query)})


async def wake_sessions_on_old_versions(
    client: Client, deployment_name: str, *, flow_type: str | None = None, concurrency: int = 20
) -> list[str]:
    """Signal every session pinned to an old version, so that an idle one moves to the current version.

    A session between turns continues as new onto the current version in the signal's
    workflow task; one in a turn (running, or waiting for an approval) does so when the
    turn ends, signal or not. The old version's workers must run to take those tasks.
    Returns the IDs signalled (a session that ended meanwhile is skipped).
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    session_ids = await sessions_on_old_versions(client, deployment_name, flow_type=flow_type)
    slots = asyncio.Semaphore(concurrency)

    async def wake(session_id: str) -> str | None:
        async with slots:
            try:
                await client.get_workflow_handle(session_id).signal(CHECK_VERSION)
            except RPCError as error:
                if error.status == RPCStatusCode.NOT_FOUND:
                    return None  # stopped (or moved and ended) since visibility was read
                raise
            return session_id

    woken = await asyncio.gather(*(wake(session_id) for session_id in session_ids))
    return [session_id for session_id in woken if session_id is not None]


async def drainage_status(client: Client, deployment: WorkerDeployment) -> DrainageStatus:
    """Whether running sessions still need `deployment`'s workers, as the server last checked.

    The server refreshes it every few minutes (``matching.wv.VersionDrainageStatusRefreshInterval``,
    after ``matching.wv.VersionDrainageStatusVisibilityGracePeriod``; 3 minutes each by default).
    """
    response = await client.workflow_service.describe_worker_deployment_version(
        DescribeWorkerDeploymentVersionRequest(
            namespace=client.namespace,
            deployment_version=WorkerDeploymentVersionRef(
                deployment_name=deployment.name, build_id=deployment.build_id
            ),
        )
    )
    status = response.worker_deployment_version_info.drainage_info.status
    if status == VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED:
        return DrainageStatus.DRAINED
    if status == VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINING:
        return DrainageStatus.DRAINING
    return DrainageStatus.ACTIVE
