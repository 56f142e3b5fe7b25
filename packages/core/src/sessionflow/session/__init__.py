"""The pure session model: records, statuses, policies and the turn state machine. No I/O."""

from sessionflow.session.errors import InvalidToolCallError, SessionError, SessionStateError, TurnAborted
from sessionflow.session.events import (
    AgentEvent,
    AgentEventsPage,
    AgentEventType,
    AgentEventWriter,
    EventLog,
    EventSink,
)
from sessionflow.session.live_text import LiveText
from sessionflow.session.messages import (
    AgentMessage,
    FrameworkMessage,
    MessageRole,
    message_digest,
    message_sequence_key,
)
from sessionflow.session.model import QueuedUserMessage, SessionModel
from sessionflow.session.notes import build_turn_failure_note
from sessionflow.session.options import AgentSessionOptions, CallPolicy, SessionTimings
from sessionflow.session.outcomes import AgentTurnOutcome, ToolCallsRequested, TurnCompleted
from sessionflow.session.runner import (
    AgentFrameworkRunner,
    AgentTurnContext,
    DeferredToolExecution,
    ImageInput,
    SupportsImageMessages,
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
    validate_tool_call_ids,
)
from sessionflow.session.usage import AgentUsage

__all__ = [
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
    "CallPolicy",
    "DeferredToolCall",
    "DeferredToolExecution",
    "EventLog",
    "EventSink",
    "FrameworkMessage",
    "ImageInput",
    "InvalidToolCallError",
    "LiveText",
    "MessageRole",
    "QueuedUserMessage",
    "SessionError",
    "SessionModel",
    "SessionStateError",
    "SessionTimings",
    "SupportsImageMessages",
    "ToolCallsRequested",
    "ToolEffect",
    "ToolExecutionError",
    "ToolExecutionResult",
    "ToolPolicy",
    "TurnAborted",
    "TurnCompleted",
    "build_turn_failure_note",
    "describe_tool_call_outcome",
    "idempotency_key",
    "message_digest",
    "message_sequence_key",
    "validate_tool_call_ids",
]
