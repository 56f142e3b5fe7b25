"""The adapter kit: what framework adapters, tool sources and plugins build on.

It imports the pure session model only, never the engine binding: an adapter that builds
on the kit loads no temporalio. The runner contract (`AgentFrameworkRunner` and the
records it takes and returns) is defined in `sessionflow.session` and public here.
"""

from sessionflow._environment import (
    ENVIRONMENT_VARIABLES,
    EnvironmentVariable,
    UnknownEnvironmentVariable,
    read_env,
)
from sessionflow.hookspecs import hookimpl
from sessionflow.kit._approved_arguments import ArgumentsRewrittenError, check_run_arguments
from sessionflow.kit._current_invocation import current_tool_invocation, tool_invocation_scope
from sessionflow.kit._deltas import DeltaSubscription, DeltaTransport, InProcessDeltaBus
from sessionflow.kit._demo_tour import DemoTool, DemoTour
from sessionflow.kit._effect_marks import declared_effect, declared_policy
from sessionflow.kit._flow import FlowArguments
from sessionflow.kit._frameworks import (
    FRAMEWORK_MODEL_APIS,
    MODEL_APIS,
    CarryHook,
    FrameworkCapabilities,
    FrameworkModelApi,
    FrameworkSpec,
    HarnessContext,
    ModelApi,
    OutputValidator,
)
from sessionflow.kit._guarded_memory import memory_tools
from sessionflow.kit._images import (
    IMAGE_REF_TYPE,
    image_base64,
    image_bytes,
    image_data_url,
    image_ref_part,
    stored_image,
    with_images_read,
)
from sessionflow.kit._lazy import distribution_version, lazy_exports
from sessionflow.kit._step_journal import StepJournal, current_step_journal, step_journal_scope
from sessionflow.kit._tool_asks import question_tool, with_tool_asks
from sessionflow.kit._tool_output import ToolOutput
from sessionflow.kit._tool_specs import (
    ToolHandler,
    ToolSpec,
    ToolVerifier,
    ToolVerifyBasis,
    effect_from_mcp_annotations,
    merge_tool_policies,
)
from sessionflow.session.approval_digest import approval_digest, canonical_arguments
from sessionflow.session.approvals import approval_reason
from sessionflow.session.errors import InvalidToolCallError, TurnAborted
from sessionflow.session.events import AgentEventWriter
from sessionflow.session.invocation import ToolInvocation
from sessionflow.session.messages import FrameworkMessage, message_digest
from sessionflow.session.notes import build_turn_failure_note
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
    idempotency_key,
)
from sessionflow.session.tools import (
    DeferredToolCall,
    FrameworkApproval,
    ToolExecutionError,
    ToolExecutionResult,
    describe_tool_call_outcome,
    parse_tool_arguments,
    tool_arguments_object,
    validate_tool_call_ids,
)
from sessionflow.session.value_changes import apply_value_change, value_change
from sessionflow.session.verify import EffectUnknown, NoEffect, TookEffect, VerifyCall, VerifyResult

__all__ = [
    # The SESSIONFLOW_* environment variables: the table, and reading one
    "ENVIRONMENT_VARIABLES",
    "EnvironmentVariable",
    "UnknownEnvironmentVariable",
    "read_env",
    # The runner contract
    "AgentFrameworkRunner",
    "AgentTurnContext",
    "AgentTurnOutcome",
    "ContinueRequested",
    "DeferredToolCall",
    "DeferredToolExecution",
    "FrameworkApproval",
    "FrameworkMessage",
    "ToolCallsRequested",
    "ToolExecutionResult",
    "TurnCompleted",
    "build_turn_failure_note",
    "describe_tool_call_outcome",
    "idempotency_key",
    "parse_tool_arguments",
    "tool_arguments_object",
    "validate_tool_call_ids",
    # What a runner stores: message digests, and run-state changes as small patches
    "apply_value_change",
    "message_digest",
    "value_change",
    # Errors a runner raises
    "InvalidToolCallError",
    "ToolExecutionError",
    "TurnAborted",
    # Verified outcomes of a write whose step died
    "EffectUnknown",
    "NoEffect",
    "TookEffect",
    "VerifyCall",
    "VerifyResult",
    # Live events
    "AgentEventWriter",
    "DeltaSubscription",
    "DeltaTransport",
    "InProcessDeltaBus",
    # Holding a tool's run to the arguments a person approved
    "ArgumentsRewrittenError",
    "approval_digest",
    "approval_reason",
    "canonical_arguments",
    "check_run_arguments",
    # What a tool declares of its effect (users write `sessionflow.effect`)
    "declared_effect",
    "declared_policy",
    # Framework-neutral tools
    "ToolHandler",
    "ToolInvocation",
    "ToolOutput",
    "ToolSpec",
    "ToolVerifier",
    "ToolVerifyBasis",
    "current_tool_invocation",
    "effect_from_mcp_annotations",
    "memory_tools",
    "merge_tool_policies",
    "question_tool",
    "tool_invocation_scope",
    # What a tool step does inside itself (a nested agent run), journaled across its attempts
    "StepJournal",
    "current_step_journal",
    "step_journal_scope",
    "with_tool_asks",
    # Images stored by reference
    "IMAGE_REF_TYPE",
    "image_base64",
    "image_bytes",
    "image_data_url",
    "image_ref_part",
    "stored_image",
    "with_images_read",
    # Plugins: a framework's spec, its harness and its demo tour
    "FRAMEWORK_MODEL_APIS",
    "MODEL_APIS",
    "CarryHook",
    "DemoTool",
    "DemoTour",
    "FlowArguments",
    "FrameworkCapabilities",
    "FrameworkModelApi",
    "FrameworkSpec",
    "HarnessContext",
    "ModelApi",
    "OutputValidator",
    "hookimpl",
    # Packages whose names load on first use
    "distribution_version",
    "lazy_exports",
]
