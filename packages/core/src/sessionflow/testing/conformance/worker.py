"""Worker child of the conformance suite: ``python -m sessionflow.testing.conformance.worker``.

It reads the case file, framework name, flow type and model base URL from the environment
(the state folder comes from ``SESSIONFLOW_TEST_STATE_DIR``), loads plugins through
`SessionflowPlugins` like the test process (the ``SESSIONFLOW_*PLUGIN*`` controls apply;
unless the user set ``SESSIONFLOW_LOAD_PLUGINS``, the driver sets it to the one plugin
that provides the framework, so a child does not import every installed adapter), builds
the same flow and serves it until SIGTERM, or until the test SIGKILLs its process group.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from sessionflow._environment import read_env
from sessionflow.kit._flow import AgentSessionFlow
from sessionflow.plugins import SessionflowPlugins
from sessionflow.temporal.client._connection import connect
from sessionflow.temporal.worker._worker import run_agent_worker, serve_agent_flows
from sessionflow.testing._scripted_flow import STATE_DIR_ENV
from sessionflow.testing.conformance._cases import KillWorkerStep, load_case
from sessionflow.testing.conformance._driver import build_case_flow
from sessionflow.testing.conformance._runtime import (
    CASE_FILE_ENV,
    FLOW_TYPE_ENV,
    FRAMEWORK_ENV,
    MODEL_BASE_URL_ENV,
)

__all__ = ["main"]


def _required(name: str) -> str:
    value = read_env(name, "").strip()
    if not value:
        sys.exit(f"sessionflow conformance worker: environment variable {name} is not set")
    return value


def run_without_workflow_cache(flow: AgentSessionFlow) -> None:
    """`run_agent_worker`, but with no sticky workflow cache.

    When a worker that holds a session in its cache is SIGKILLed, the server keeps the
    session's next workflow task on that worker's sticky queue for the SDK's
    ``sticky_queue_schedule_to_start_timeout`` (10 s) before a replacement can take it.
    Without a cache every task goes to the flow's task queue, so kill cases do not wait
    those 10 s; adapters see no difference (workflow code is the core's).
    """

    async def serve() -> None:
        client = await connect()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        print("sessionflow worker ready", flush=True)
        await serve_agent_flows(client, [flow], stop=stop, max_cached_workflows=0)

    asyncio.run(serve())


def main() -> None:
    plugins = SessionflowPlugins()
    plugins.load()
    framework = plugins.framework(_required(FRAMEWORK_ENV))
    case = load_case(Path(_required(CASE_FILE_ENV)))
    flow = build_case_flow(
        case,
        framework,
        flow_type=_required(FLOW_TYPE_ENV),
        model_base_url=_required(MODEL_BASE_URL_ENV),
        state_dir=Path(_required(STATE_DIR_ENV)),
    )
    if any(isinstance(step, KillWorkerStep) for step in case.steps):
        run_without_workflow_cache(flow)
    else:
        run_agent_worker([flow])


if __name__ == "__main__":
    main()
