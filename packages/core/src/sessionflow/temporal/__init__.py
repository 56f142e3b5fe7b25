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
from sessionflow.temporal.deployment import WorkerDeployment
from sessionflow.temporal.encryption import (
    EncryptionCodec,
    EncryptionKeyError,
    KeyRing,
    PayloadDecryptionError,
    encryption_codec_from_environment,
)
from sessionflow.temporal.flow import AgentSessionFlow, FlowArguments
from sessionflow.temporal.history import StepHistoryEntry, history_size, read_step_history
from sessionflow.temporal.model_call_limits import MODEL_CALL_LIMITS_ENV, ModelCallLimits
from sessionflow.temporal.payload_gc import PayloadGcReport, collect_payloads, parse_age
from sessionflow.temporal.payload_store import (
    DEFAULT_PAYLOAD_THRESHOLD,
    PayloadStore,
    PayloadStoreError,
    build_data_converter,
    default_payload_folder,
)
from sessionflow.temporal.probe import FrontendProbe, FrontendState, probe_frontend
from sessionflow.temporal.search_attributes import (
    SearchAttributesMissingError,
    SessionState,
    register_search_attributes,
    try_register_search_attributes,
)
from sessionflow.temporal.sessions import (
    SessionStatus,
    SessionSummary,
    describe_session,
    list_sessions,
    read_start_environment,
    reset_sticky_task_queue,
)
from sessionflow.temporal.upgrades import (
    DrainageStatus,
    current_version,
    drainage_status,
    sessions_on_old_versions,
    set_current_version,
    wake_sessions_on_old_versions,
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
    "MODEL_CALL_LIMITS_ENV",
    "RAISED_HISTORY_LIMITS",
    "SHUTDOWN_GRACE_ENV",
    "AgentSessionClient",
    "AgentSessionFlow",
    "DevServer",
    "DevServerConfig",
    "DevServerError",
    "DevServerHandle",
    "DrainageStatus",
    "EncryptionCodec",
    "EncryptionKeyError",
    "FlowArguments",
    "FrontendProbe",
    "FrontendState",
    "KeyRing",
    "ModelCallLimits",
    "PayloadDecryptionError",
    "PayloadGcReport",
    "PayloadStore",
    "PayloadStoreError",
    "SearchAttributesMissingError",
    "ServerUnreachableError",
    "SessionExistsError",
    "SessionState",
    "SessionStatus",
    "SessionSummary",
    "StepHistoryEntry",
    "TemporalClient",
    "TlsSettings",
    "WorkerDeployment",
    "build_data_converter",
    "build_workers",
    "collect_payloads",
    "connect",
    "current_version",
    "default_build_id",
    "default_payload_folder",
    "describe_session",
    "drainage_status",
    "encryption_codec_from_environment",
    "exit_worker_process",
    "find_temporal_binary",
    "free_port",
    "history_size",
    "list_sessions",
    "parse_age",
    "probe_frontend",
    "read_start_environment",
    "read_step_history",
    "register_search_attributes",
    "reset_sticky_task_queue",
    "run_agent_worker",
    "serve_agent_flows",
    "sessions_on_old_versions",
    "set_current_version",
    "shutdown_grace",
    "stop_dev_server",
    "try_register_search_attributes",
    "validate_session_id",
    "wake_sessions_on_old_versions",
    "with_payload_store",
]
