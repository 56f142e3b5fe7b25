"""The Temporal binding: the session workflow, its activities, client, worker and dev server.

This is the only part of sessionflow that imports `temporalio`.
"""

from sessionflow.temporal._dev_server import (
    DevServer,
    DevServerConfig,
    DevServerError,
    DevServerHandle,
    find_temporal_binary,
    free_port,
    stop_dev_server,
)
from sessionflow.temporal.client import AgentSessionClient, SessionExistsError, validate_session_id
from sessionflow.temporal.flow import AgentSessionFlow
from sessionflow.temporal.history import StepHistoryEntry, history_size, read_step_history
from sessionflow.temporal.worker import (
    DEFAULT_SERVER_ADDRESS,
    build_workers,
    connect,
    run_agent_worker,
    serve_agent_flows,
)

__all__ = [
    "DEFAULT_SERVER_ADDRESS",
    "AgentSessionClient",
    "AgentSessionFlow",
    "DevServer",
    "DevServerConfig",
    "DevServerError",
    "DevServerHandle",
    "SessionExistsError",
    "StepHistoryEntry",
    "build_workers",
    "connect",
    "find_temporal_binary",
    "free_port",
    "history_size",
    "read_step_history",
    "run_agent_worker",
    "serve_agent_flows",
    "stop_dev_server",
    "validate_session_id",
]
