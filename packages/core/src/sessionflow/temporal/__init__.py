"""The engine binding, for operators: the embedded dev server, connections, workers and
their releases, payload storage and encryption, and what a session's history holds.

This is the only part of sessionflow that imports `temporalio`. It is split by role:
`workflow/` (the session workflow), `activities/` (one class per kind of step),
`client/`, `worker/`, `storage/` and `devserver/`; the wire formats (`_payloads`) and the
helpers several roles share stay at this level. Applications start with `sessionflow`
(`AgentSessionClient`, `connect`, `serve_agent_flows`); what is here is what running
them takes.
"""

from sessionflow.temporal._plugin import SessionflowPlugin, default_build_id
from sessionflow.temporal._prices import lookup_prices
from sessionflow.temporal._process_exit import exit_without_teardown
from sessionflow.temporal._search_attributes import (
    SearchAttributesMissingError,
    SessionState,
    register_search_attributes,
    try_register_search_attributes,
)
from sessionflow.temporal.client._client import validate_session_id
from sessionflow.temporal.client._connection import (
    DEFAULT_SERVER_ADDRESS,
    TemporalClient,
    TlsSettings,
    with_payload_store,
)
from sessionflow.temporal.client._envconfig import TemporalConfigError, configured_address
from sessionflow.temporal.client._probe import FrontendProbe, FrontendState, probe_frontend
from sessionflow.temporal.client._sessions import (
    SessionStatus,
    SessionSummary,
    describe_session,
    list_sessions,
    read_start_environment,
    reset_sticky_task_queue,
)
from sessionflow.temporal.client._step_history import StepHistoryEntry, history_size, read_step_history
from sessionflow.temporal.devserver._binary import BINARY_ENV_VAR, find_temporal_binary
from sessionflow.temporal.devserver._config import RAISED_HISTORY_LIMITS, DevServerConfig
from sessionflow.temporal.devserver._errors import DevServerError
from sessionflow.temporal.devserver._probe import free_port
from sessionflow.temporal.devserver._server import DevServer, stop_dev_server
from sessionflow.temporal.devserver._state import DevServerHandle
from sessionflow.temporal.storage._codec_protocol import CodecRequestError, apply_codec
from sessionflow.temporal.storage._encryption import (
    EncryptionCodec,
    EncryptionKeyError,
    KeyRing,
    PayloadDecryptionError,
    PlaintextPayloadError,
    encryption_codec_from_environment,
)
from sessionflow.temporal.storage._payload_gc import PayloadGcReport, collect_payloads, parse_age
from sessionflow.temporal.storage._payload_store import (
    DEFAULT_PAYLOAD_THRESHOLD,
    PAYLOADS_ENV,
    PayloadStore,
    build_data_converter,
    default_payload_folder,
)
from sessionflow.temporal.worker._deployment import WorkerDeployment
from sessionflow.temporal.worker._model_call_limits import MODEL_CALL_LIMITS_ENV, ModelCallLimits
from sessionflow.temporal.worker._sticky import STICKY_QUEUE_TIMEOUT_ENV
from sessionflow.temporal.worker._upgrades import (
    DrainageStatus,
    current_version,
    drainage_status,
    sessions_on_old_versions,
    set_current_version,
    wake_sessions_on_old_versions,
)
from sessionflow.temporal.worker._worker import (
    SHUTDOWN_GRACE_ENV,
    build_workers,
    exit_worker_process,
    shutdown_grace,
)
from sessionflow.temporal.workflow._replay import export_history, replay_histories

__all__ = [
    # The Temporal plugin
    "SessionflowPlugin",
    # Connecting
    "DEFAULT_SERVER_ADDRESS",
    "FrontendProbe",
    "FrontendState",
    "TemporalClient",
    "TemporalConfigError",
    "TlsSettings",
    "configured_address",
    "probe_frontend",
    "with_payload_store",
    # The embedded dev server
    "BINARY_ENV_VAR",
    "RAISED_HISTORY_LIMITS",
    "DevServer",
    "DevServerConfig",
    "DevServerError",
    "DevServerHandle",
    "find_temporal_binary",
    "free_port",
    "stop_dev_server",
    # Workers, their limits and releases
    "MODEL_CALL_LIMITS_ENV",
    "SHUTDOWN_GRACE_ENV",
    "STICKY_QUEUE_TIMEOUT_ENV",
    "DrainageStatus",
    "ModelCallLimits",
    "WorkerDeployment",
    "build_workers",
    "current_version",
    "default_build_id",
    "drainage_status",
    "exit_without_teardown",
    "exit_worker_process",
    "sessions_on_old_versions",
    "set_current_version",
    "shutdown_grace",
    "wake_sessions_on_old_versions",
    # Finding sessions and reading their history
    "SearchAttributesMissingError",
    "SessionState",
    "SessionStatus",
    "SessionSummary",
    "StepHistoryEntry",
    "describe_session",
    "export_history",
    "history_size",
    "list_sessions",
    "lookup_prices",
    "read_start_environment",
    "read_step_history",
    "register_search_attributes",
    "replay_histories",
    "reset_sticky_task_queue",
    "try_register_search_attributes",
    "validate_session_id",
    # Payload storage and encryption
    "DEFAULT_PAYLOAD_THRESHOLD",
    "PAYLOADS_ENV",
    "CodecRequestError",
    "EncryptionCodec",
    "EncryptionKeyError",
    "KeyRing",
    "PayloadDecryptionError",
    "PlaintextPayloadError",
    "PayloadGcReport",
    "PayloadStore",
    "apply_codec",
    "build_data_converter",
    "collect_payloads",
    "default_payload_folder",
    "encryption_codec_from_environment",
    "parse_age",
]
