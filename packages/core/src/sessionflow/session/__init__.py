"""The pure session model: records, statuses, policies and the turn state machine. No I/O."""

from sessionflow.session.bodies import BodyRef, is_media_ref
from sessionflow.session.errors import (
    InvalidToolCallError,
    SessionError,
    SessionRunError,
    SessionStateError,
    TurnAborted,
    UnsupportedOptionError,
    UserError,
)
from sessionflow.session.events import (
    AgentEvent,
    AgentEventsPage,
    AgentEventType,
    AgentEventWriter,
    EventLog,
    EventSink,
)
from sessionflow.session.guardrails import Budget, ProposalCode, StopReason, call_fingerprint
from sessionflow.session.invocation import ToolInvocation
from sessionflow.session.live_text import LiveText
from sessionflow.session.memory import MEMORY_TOOL_NAMES, MemoryCode, MemoryNote, MemoryStore
from sessionflow.session.messages import (
    AgentMessage,
    FrameworkMessage,
    MessageRole,
    message_digest,
    message_sequence_key,
)
from sessionflow.session.model import QueuedUserMessage, SessionModel
from sessionflow.session.notes import build_turn_failure_note
from sessionflow.session.options import (
    AgentSessionOptions,
    CallPolicy,
    MemoryOptions,
    SessionBudget,
    SessionTimings,
)
from sessionflow.session.outcomes import (
    AgentTurnOutcome,
    ContinueRequested,
    ToolCallsRequested,
    TurnCompleted,
)
from sessionflow.session.runner import (
    AgentFrameworkRunner,
    AgentTurnContext,
    DeferredToolExecution,
    ImageInput,
    idempotency_key,
)
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
    DeferredToolCall,
    ToolEffect,
    ToolExecutionError,
    ToolExecutionResult,
    ToolPolicy,
    describe_tool_call_outcome,
    parse_tool_arguments,
    tool_arguments_object,
    validate_tool_call_ids,
)
from sessionflow.session.usage import AgentUsage
from sessionflow.session.verify import EffectUnknown, NoEffect, TookEffect, VerifyCall, VerifyResult

__all__ = [
    "MEMORY_TOOL_NAMES",
    "AgentEvent",
    "AgentEventType",
    "AgentEventWriter",
    "AgentEventsPage",
    "AgentFrameworkRunner",
    "AgentInterrupt",
    "AgentMessage",
    "AgentMessagesPage",
    "AgentSessionOptions",
    "AgentSnapshot",
    "AgentState",
    "AgentStatus",
    "AgentToolCall",
    "AgentToolCallStatus",
    "AgentTurnContext",
    "AgentTurnOutcome",
    "AgentUsage",
    "BodyRef",
    "Budget",
    "CallPolicy",
    "ContinueRequested",
    "DeferredToolCall",
    "DeferredToolExecution",
    "EffectUnknown",
    "EventLog",
    "EventSink",
    "FrameworkMessage",
    "ImageInput",
    "InvalidToolCallError",
    "LiveText",
    "MemoryCode",
    "MemoryNote",
    "MemoryOptions",
    "MemoryStore",
    "MessageRole",
    "NoEffect",
    "ProposalCode",
    "QueuedUserMessage",
    "SessionBudget",
    "SessionError",
    "SessionModel",
    "SessionRunError",
    "SessionStateError",
    "SessionTimings",
    "StopReason",
    "TookEffect",
    "ToolCallsRequested",
    "ToolEffect",
    "ToolExecutionError",
    "ToolExecutionResult",
    "ToolInvocation",
    "ToolPolicy",
    "TurnAborted",
    "TurnCompleted",
    "UnsupportedOptionError",
    "UserError",
    "VerifyCall",
    "VerifyResult",
    "build_turn_failure_note",
    "call_fingerprint",
    "describe_tool_call_outcome",
    "idempotency_key",
    "is_media_ref",
    "message_digest",
    "message_sequence_key",
    "parse_tool_arguments",
    "tool_arguments_object",
    "validate_tool_call_ids",
]
