"""sessionflow: durable agent sessions on Temporal.

One session is one workflow; every model call and every tool call is its own durable step.
Framework adapters implement `AgentFrameworkRunner`; `AgentSessionFlow` serves a runner.
"""

from typing import TYPE_CHECKING

from sessionflow._current_invocation import current_tool_invocation, tool_invocation_scope
from sessionflow.hookspecs import hookimpl
from sessionflow.lazy import distribution_version, lazy_exports
from sessionflow.plugins import (
    FrameworkCapabilities,
    FrameworkSpec,
    HarnessContext,
    PluginError,
    SessionflowPlugins,
    ToolInvocation,
    ToolSpec,
    get_plugins,
)
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
    CallPolicy,
    ContinueRequested,
    DeferredToolCall,
    DeferredToolExecution,
    EffectUnknown,
    FrameworkMessage,
    ImageInput,
    InvalidAnswerError,
    InvalidToolCallError,
    MemoryOptions,
    MessageRole,
    NoEffect,
    SessionBudget,
    SessionError,
    SessionRunError,
    SessionStateError,
    SessionTimings,
    StopReason,
    TookEffect,
    ToolCallsRequested,
    ToolEffect,
    ToolExecutionError,
    ToolExecutionResult,
    ToolPolicy,
    TurnAborted,
    TurnCompleted,
    UnsupportedOptionError,
    UserError,
    VerifyCall,
    VerifyResult,
    build_turn_failure_note,
    describe_tool_call_outcome,
    idempotency_key,
)
from sessionflow.tool_output import ToolOutput

# Loaded on first use. The engine binding (`sessionflow.temporal`) imports temporalio's
# client and worker, ~0.6 s that plugin discovery, `sessionflow frameworks` and every other
# import of `sessionflow.hookspecs` or `sessionflow.plugins` do not need.
# RedisDeltaTransport needs the `redis` extra, so importing sessionflow never needs redis,
# and a missing extra fails with its install hint.
# `__version__` is read from the installed metadata on first use, too.
if TYPE_CHECKING:
    __version__: str

    from sessionflow.redis_deltas import RedisDeltaTransport
    from sessionflow.temporal import (
        AgentSessionClient,
        AgentSessionFlow,
        PayloadStore,
        PayloadStoreError,
        ServerUnreachableError,
        SessionExistsError,
        connect,
        run_agent_worker,
        serve_agent_flows,
    )


__getattr__, __dir__ = lazy_exports(__name__, computed={"__version__": distribution_version("sessionflow")})


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
    "CallPolicy",
    "ContinueRequested",
    "DeferredToolCall",
    "DeferredToolExecution",
    "EffectUnknown",
    "FrameworkCapabilities",
    "FrameworkMessage",
    "FrameworkSpec",
    "HarnessContext",
    "ImageInput",
    "InvalidAnswerError",
    "InvalidToolCallError",
    "MemoryOptions",
    "MessageRole",
    "NoEffect",
    "PayloadStore",
    "PayloadStoreError",
    "PluginError",
    "RedisDeltaTransport",
    "ServerUnreachableError",
    "SessionBudget",
    "SessionError",
    "SessionExistsError",
    "SessionRunError",
    "SessionStateError",
    "SessionTimings",
    "SessionflowPlugins",
    "StopReason",
    "TookEffect",
    "ToolCallsRequested",
    "ToolEffect",
    "ToolExecutionError",
    "ToolExecutionResult",
    "ToolInvocation",
    "ToolOutput",
    "ToolPolicy",
    "ToolSpec",
    "TurnAborted",
    "TurnCompleted",
    "UnsupportedOptionError",
    "UserError",
    "VerifyCall",
    "VerifyResult",
    "__version__",
    "build_turn_failure_note",
    "connect",
    "current_tool_invocation",
    "describe_tool_call_outcome",
    "get_plugins",
    "hookimpl",
    "idempotency_key",
    "run_agent_worker",
    "serve_agent_flows",
    "tool_invocation_scope",
]
