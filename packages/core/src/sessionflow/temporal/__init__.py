"""The Temporal binding: the session workflow, its activities, client, worker and dev server.

This is the only part of sessionflow that imports `temporalio`; code outside it (such as
the `sessionflow` command) connects, probes and lists sessions through these functions.
"""

from sessionflow.temporal._dev_server import (
    RAISED_HISTORY_LIMITS,
    DevServer,
    DevServerConfig,
    DevServerError,
    DevServerHandle,
    find_temporal_binary,
    free_port,
    stop_dev_server,
)
from sessionflow.temporal.client import AgentSessionClient, SessionExistsError, validate_session_id
from sessionflow.temporal.connection import (
    DEFAULT_SERVER_ADDRESS,
    ServerUnreachableError,
    TemporalClient,
    TlsSettings,
    connect,
    with_payload_store,
)
from sessionflow.temporal.flow import AgentSessionFlow, FlowArguments
from sessionflow.temporal.history import StepHistoryEntry, history_size, read_step_history
from sessionflow.temporal.payload_gc import PayloadGcReport, collect_payloads, parse_age
from sessionflow.temporal.payload_store import (
    DEFAULT_PAYLOAD_THRESHOLD,
    PayloadStore,
    PayloadStoreError,
    build_data_converter,
    default_payload_folder,
)
from sessionflow.temporal.probe import FrontendProbe, FrontendState, probe_frontend
from sessionflow.temporal.sessions import (
    SessionStatus,
    SessionSummary,
    describe_session,
    list_sessions,
    read_start_environment,
    reset_sticky_task_queue,
)
from sessionflow.temporal.worker import (
    SHUTDOWN_GRACE_ENV,
    build_workers,
    default_build_id,
    exit_worker_process,
    run_agent_worker,
    serve_agent_flows,
    shutdown_grace,
)

__all__ = [
    "DEFAULT_PAYLOAD_THRESHOLD",
    "DEFAULT_SERVER_ADDRESS",
    "RAISED_HISTORY_LIMITS",
    "SHUTDOWN_GRACE_ENV",
    "AgentSessionClient",
    "AgentSessionFlow",
    "DevServer",
    "DevServerConfig",
    "DevServerError",
    "DevServerHandle",
    "FlowArguments",
    "FrontendProbe",
    "FrontendState",
    "PayloadGcReport",
    "PayloadStore",
    "PayloadStoreError",
    "ServerUnreachableError",
    "SessionExistsError",
    "SessionStatus",
    "SessionSummary",
    "StepHistoryEntry",
    "TemporalClient",
    "TlsSettings",
    "build_data_converter",
    "build_workers",
    "collect_payloads",
    "connect",
    "default_build_id",
    "default_payload_folder",
    "describe_session",
    "exit_worker_process",
    "find_temporal_binary",
    "free_port",
    "history_size",
    "list_sessions",
    "parse_age",
    "probe_frontend",
    "read_start_environment",
    "read_step_history",
    "reset_sticky_task_queue",
    "run_agent_worker",
    "serve_agent_flows",
    "shutdown_grace",
    "stop_dev_server",
    "validate_session_id",
    "with_payload_store",
]
