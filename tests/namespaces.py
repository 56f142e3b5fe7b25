"""A namespace of a test's own on the run's dev server: registered, and ready for calls."""

from __future__ import annotations

import uuid
from datetime import timedelta

from google.protobuf.duration_pb2 import Duration
from temporalio.api.workflowservice.v1 import RegisterNamespaceRequest
from temporalio.client import Client

from sessionflow.testing import wait_until

__all__ = ["register_namespace"]


async def register_namespace(address: str, prefix: str = "test") -> str:
    """Register a fresh namespace on the server at `address`; its name, once it takes calls."""
    name = f"{prefix}-{uuid.uuid4().hex[:10]}"
    admin = await Client.connect(address, namespace="default")
    retention = Duration()
    retention.FromTimedelta(timedelta(days=1))
    await admin.workflow_service.register_namespace(
        RegisterNamespaceRequest(namespace=name, workflow_execution_retention_period=retention)
    )
    client = await Client.connect(address, namespace=name)

    async def ready() -> bool:
        await client.count_workflows()  # NOT_FOUND until the frontend knows the namespace
        return True

    await wait_until(f"namespace {name} takes calls", ready, timeout=60)
    return name
