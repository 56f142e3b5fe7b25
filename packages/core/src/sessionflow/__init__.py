"""sessionflow: durable agent sessions on Temporal.

One session is one workflow; every model call and every tool call is its own durable step.
Framework adapters implement `AgentFrameworkRunner`; `AgentSessionFlow` serves a runner.
"""

from importlib.metadata import PackageNotFoundError, version

from sessionflow.session import (
    AgentEvent,
    AgentEventType,
    AgentEventWriter,
    AgentFrameworkRunner,
    AgentInterrupt,
    AgentMessage,
    AgentMessagesPage,
    AgentSessionOptions,
    AgentSnapshot,
    AgentState,
    AgentStatus,
    AgentToolCall,
    AgentToolCallStatus,
    AgentTurnContext,
    AgentTurnOutcome,
    AgentUsage,
    DeferredToolCall,
    DeferredToolExecution,
    FrameworkMessage,
    ImageInput,
    InvalidToolCallError,
    MessageRole,
    SessionError,
    SessionStateError,
    SessionTimings,
    SupportsImageMessages,
    ToolCallsRequested,
    ToolEffect,
    ToolExecutionError,
    ToolExecutionResult,
    ToolPolicy,
    TurnCompleted,
    build_turn_failure_note,
    describe_tool_call_outcome,
    idempotency_key,
)
from sessionflow.temporal import (
    AgentSessionClient,
    AgentSessionFlow,
    SessionExistsError,
    connect,
    run_agent_worker,
    serve_agent_flows,
)

try:
    __version__ = version("sessionflow")
except PackageNotFoundError:  # running from a source tree without metadata
    __version__ = "0.0.0"

__all__ = [
    "AgentEvent",
    "AgentEventType",
    "AgentEventWriter",
    "AgentFrameworkRunner",
    "AgentInterrupt",
    "AgentMessage",
    "AgentMessagesPage",
    "AgentSessionClient",
    "AgentSessionFlow",
    "AgentSessionOptions",
    "AgentSnapshot",
    "AgentState",
    "AgentStatus",
    "AgentToolCall",
    "AgentToolCallStatus",
    "AgentTurnContext",
    "AgentTurnOutcome",
    "AgentUsage",
    "DeferredToolCall",
    "DeferredToolExecution",
    "FrameworkMessage",
    "ImageInput",
    "InvalidToolCallError",
    "MessageRole",
    "SessionError",
    "SessionExistsError",
    "SessionStateError",
    "SessionTimings",
    "SupportsImageMessages",
    "ToolCallsRequested",
    "ToolEffect",
    "ToolExecutionError",
    "ToolExecutionResult",
    "ToolPolicy",
    "TurnCompleted",
    "__version__",
    "build_turn_failure_note",
    "connect",
    "describe_tool_call_outcome",
    "idempotency_key",
    "run_agent_worker",
    "serve_agent_flows",
]
