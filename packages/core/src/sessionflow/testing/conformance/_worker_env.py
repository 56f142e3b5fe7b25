"""The environment a conformance worker child reads (set by the driver through AgentTestStack)."""

from __future__ import annotations

__all__ = ["CASE_FILE_ENV", "FLOW_TYPE_ENV", "FRAMEWORK_ENV", "MODEL_BASE_URL_ENV", "WORKER_MODULE"]

WORKER_MODULE = "sessionflow.testing.conformance.worker"
CASE_FILE_ENV = "SESSIONFLOW_CONFORMANCE_CASE_FILE"
FRAMEWORK_ENV = "SESSIONFLOW_CONFORMANCE_FRAMEWORK"
FLOW_TYPE_ENV = "SESSIONFLOW_CONFORMANCE_FLOW_TYPE"
MODEL_BASE_URL_ENV = "SESSIONFLOW_CONFORMANCE_MODEL_BASE_URL"
