"""sessionflow: durable agent sessions on Temporal.

One session is one workflow; every model call and every tool call is its own durable step.
This is the application's API: build a flow from a runner, serve it, and talk to its
sessions. Adapter authors build on `sessionflow.kit`; operators find the engine binding
(dev server, storage, encryption, deployments) in `sessionflow.temporal`; tests use
`sessionflow.testing`.
"""

from typing import TYPE_CHECKING

from sessionflow.kit._effect_marks import effect, tool_effect
from sessionflow.kit._flow import AgentSessionFlow
from sessionflow.kit._lazy import distribution_version, lazy_exports
from sessionflow.session.approval_preview import ApprovalPreview
from sessionflow.session.approvals import InvalidAnswerError, StaleApprovalError
from sessionflow.session.double_texting import DoubleTexting, MessageRejectedError
from sessionflow.session.errors import (
    SessionError,
    SessionRunError,
    SessionStateError,
    SessionStoppedError,
    UnsupportedOptionError,
    UserError,
)
from sessionflow.session.events import AgentEvent, AgentEventType
from sessionflow.session.fork import ForkedFrom, TurnOutOfRangeError, UnknownSessionError
from sessionflow.session.guardrails import StopReason
from sessionflow.session.live_text import LiveText
from sessionflow.session.messages import AgentMessage, MessageRole
from sessionflow.session.options import (
    AgentSessionOptions,
    ApprovalPreviewer,
    CallPolicy,
    MemoryOptions,
    SessionBudget,
    SessionTimings,
)
from sessionflow.session.runner import ImageInput
from sessionflow.session.state import (
    AgentInterrupt,
    AgentMessagesPage,
    AgentSnapshot,
    AgentState,
    AgentStatus,
)
from sessionflow.session.tools import (
    AgentToolCall,
    AgentToolCallStatus,
    ApprovalRecord,
    ToolEffect,
    ToolPolicy,
)
from sessionflow.session.turn_records import RecordedToolCall, TurnOutcome, TurnRecord, TurnStep
from sessionflow.session.turn_result import Rejection, TurnResult, TurnStatus, TurnToolCall
from sessionflow.session.usage import AgentUsage

# Loaded on first use. The engine binding imports temporalio's client and worker, ~0.6 s
# that plugin discovery, `sessionflow frameworks` and an adapter's flow builder do not
# need. RedisDeltaTransport needs the `redis` extra, so importing sessionflow never needs
# redis, and a missing extra fails with its install hint. `__version__` is read from the
# installed metadata on first use, too.
if TYPE_CHECKING:
    __version__: str

    from sessionflow.kit._redis_deltas import RedisDeltaTransport
    from sessionflow.temporal.client._client import AgentSessionClient, SessionExistsError
    from sessionflow.temporal.client._connection import connect
    from sessionflow.temporal.client._unreachable import ServerUnreachableError
    from sessionflow.temporal.storage._store_errors import PayloadStoreError
    from sessionflow.temporal.worker._worker import run_agent_worker, serve_agent_flows


__getattr__, __dir__ = lazy_exports(__name__, computed={"__version__": distribution_version("sessionflow")})


__all__ = [
    # Flows, the client and the worker
    "AgentSessionClient",
    "AgentSessionFlow",
    "connect",
    "run_agent_worker",
    "serve_agent_flows",
    # Options and policies
    "AgentSessionOptions",
    "ApprovalPreviewer",
    "CallPolicy",
    "DoubleTexting",
    "MemoryOptions",
    "SessionBudget",
    "SessionTimings",
    "ToolEffect",
    "ToolPolicy",
    # What a tool does, declared on the tool in any framework
    "effect",
    "tool_effect",
    # Records a session keeps, and what a client reads of it
    "AgentEvent",
    "AgentEventType",
    "AgentInterrupt",
    "AgentMessage",
    "AgentMessagesPage",
    "AgentSnapshot",
    "AgentState",
    "AgentStatus",
    "AgentToolCall",
    "AgentToolCallStatus",
    "ApprovalRecord",
    "AgentUsage",
    "ApprovalPreview",
    "ForkedFrom",
    "ImageInput",
    "LiveText",
    "MessageRole",
    "StopReason",
    # What each turn did, kept after it ends (`AgentSessionClient.list_turns`)
    "RecordedToolCall",
    "TurnOutcome",
    "TurnRecord",
    "TurnStep",
    # An awaited turn (`AgentSessionClient.run_turn`)
    "Rejection",
    "TurnResult",
    "TurnStatus",
    "TurnToolCall",
    # Live deltas across hosts (the `redis` extra)
    "RedisDeltaTransport",
    # Errors (the whole tree is drawn in `sessionflow.session.errors`)
    "InvalidAnswerError",
    "MessageRejectedError",
    "PayloadStoreError",
    "ServerUnreachableError",
    "SessionError",
    "SessionExistsError",
    "SessionRunError",
    "SessionStateError",
    "SessionStoppedError",
    "StaleApprovalError",
    "TurnOutOfRangeError",
    "UnknownSessionError",
    "UnsupportedOptionError",
    "UserError",
    # The installed version
    "__version__",
]
