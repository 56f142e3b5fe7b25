"""A worker child as a Temporal user writes one: ``Client.connect`` with `SessionflowPlugin`,
then a plain ``temporalio.worker.Worker`` on one task queue that every flow names.

``python -m tests.temporal.plugin.plain_worker``, with the scripted flows' state folders in
``$SESSIONFLOW_TEST_STATE_DIR`` (separated by ``os.pathsep``) and the queue in
``$PLAIN_WORKER_TASK_QUEUE``.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from temporalio.client import Client
from temporalio.worker import Worker

from sessionflow.temporal import SessionflowPlugin
from sessionflow.testing._scripted_flow import STATE_DIR_ENV, load_scripted_flow


async def main() -> None:
    flows = [load_scripted_flow(Path(folder)) for folder in os.environ[STATE_DIR_ENV].split(os.pathsep)]
    client = await Client.connect(
        os.environ["SESSIONFLOW_SERVER_ADDRESS"], namespace="default", plugins=[SessionflowPlugin(flows)]
    )
    worker = Worker(client, task_queue=os.environ["PLAIN_WORKER_TASK_QUEUE"])
    print("sessionflow worker ready", flush=True)
    await worker.run()


if __name__ == "__main__":
    asyncio.run(main())
