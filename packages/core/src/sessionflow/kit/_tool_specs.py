"""Framework-neutral tools: what a harness hands an adapter, and what a handler is told.

A `ToolSpec` is the tool the CLI harness and the conformance suite give every framework;
`ToolInvocation` is what its handler learns about the one run it serves.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from sessionflow.kit._tool_output import ToolOutput
from sessionflow.session.invocation import ToolInvocation
from sessionflow.session.options import AgentSessionOptions
from sessionflow.session.tools import ToolEffect, ToolExecutionError, ToolPolicy
from sessionflow.session.verify import EffectUnknown, NoEffect, TookEffect, VerifyCall, VerifyResult

__all__ = [
    "ToolHandler",
    "ToolInvocation",
    "ToolOutput",
    "ToolSpec",
    "ToolVerifier",
    "ToolVerifyBasis",
    "effect_from_mcp_annotations",
    "merge_tool_policies",
]


ToolHandler = Callable[[dict[str, Any], ToolInvocation], Awaitable[str | ToolOutput] | str | ToolOutput]
"""Runs a tool: parsed JSON arguments and the invocation in, model-visible text out (or a
`ToolOutput`: the text plus a state update, for frameworks with the `tool_state` ability)."""

ToolVerifier = Callable[[dict[str, Any], VerifyCall], Awaitable[VerifyResult] | VerifyResult]
"""Checks whether a write whose step died took effect: the write's arguments and a
`VerifyCall` (its idempotency key, the basis recorded at deferral) in, a `VerifyResult` out."""

ToolVerifyBasis = Callable[[dict[str, Any]], Awaitable[str | None] | str | None]
"""Records, when the call is deferred, what its verify will need from before the write
(hashes, an ID; small); None records nothing."""


def effect_from_mcp_annotations(annotations: Mapping[str, Any] | None) -> ToolEffect | None:
    """The effect MCP tool annotations promise, or None when they promise none.

    The one mapping every adapter, the MCP tool source and the CLI use. ``readOnlyHint``
    gives READ; otherwise ``idempotentHint`` gives IDEMPOTENT_WRITE. A hint only counts
    when it is literally ``true``: hints come from tool servers we do not control, so a
    missing, false or malformed hint must never make a tool look safer to retry.
    ``destructiveHint: false`` alone promises nothing, because "not destructive" does
    not mean "safe to repeat".

    "No hint" is None, not UNCLASSIFIED: None lets the session decide (an explicit
    `ToolPolicy`, else `AgentSessionOptions.default_tool_effect`), exactly as for a tool
    without annotations. With the default effect left at UNCLASSIFIED the two agree.

    Args:
        annotations: The ``annotations`` object of an MCP tool (camelCase names), or None.
    """
    if not annotations:
        return None
    if annotations.get("readOnlyHint") is True:
        return ToolEffect.READ
    if annotations.get("idempotentHint") is True:
        return ToolEffect.IDEMPOTENT_WRITE
    return None


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    """A framework-neutral tool: what the CLI harness and the conformance suite hand an adapter.

    Attributes:
        name: The name the model calls the tool by.
        description: Shown to the model.
        parameters: JSON schema of the arguments; its ``type`` must be ``"object"``.
        effect: The tool's effect as framework metadata, or None to derive it from
            ``mcp_annotations`` (see `framework_effect`).
        policy: An explicit policy for this tool. It wins over ``effect``; harnesses put
            it into `AgentSessionOptions.tool_policies` (`merge_tool_policies`).
        handler: Runs the tool; may be sync or async.
        mcp_annotations: MCP ``annotations`` of the tool, when it came from an MCP server.
        needs_approval: The framework's own approval rule (as OpenAI's ``needs_approval``):
            True, or a callable of the parsed arguments that answers whether this call
            asks. It adds an approval to the session's floor, never removes one.
        pre_approved: The framework allows the tool without asking (as Claude's
            ``allowed_tools``). Recorded only: the session's floor still asks where it must.
        question: Makes each call a question to the person: a callable of the parsed
            arguments that answers the question text (see `sessionflow.kit._tool_asks`).
            Runners that declare ``framework_approvals`` / ``questions`` honour this and
            the two above (`sessionflow.kit.with_tool_asks`); others ignore them.
        verify: Checks the outcome of a write whose step died mid-call (see
            `sessionflow.session.verify`); None: the outcome stays unknown. A runner that
            declares ``verified_outcomes`` defers the tool's calls as verifiable and
            answers `verify_tool_call` with it.
        verify_basis: Runs when a call is deferred (in the model step), so what it
            returns is durable before the write can start; handed to ``verify`` as
            `VerifyCall.basis`. Only used with ``verify``.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    effect: ToolEffect | None
    policy: ToolPolicy | None
    handler: ToolHandler
    mcp_annotations: Mapping[str, Any] | None = None
    needs_approval: bool | Callable[[Mapping[str, Any]], bool] = False
    pre_approved: bool = False
    question: Callable[[Mapping[str, Any]], str] | None = None
    verify: ToolVerifier | None = None
    verify_basis: ToolVerifyBasis | None = None

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("tool name must not be empty")
        if self.parameters.get("type") != "object":
            raise ValueError(
                f"tool {self.name!r}: parameters must be a JSON schema with type 'object', "
                f"got type {self.parameters.get('type')!r}"
            )

    @property
    def framework_effect(self) -> ToolEffect | None:
        """`effect` if set, else the effect a true MCP hint implies, else None.

        None lets the session's `default_tool_effect` decide: an MCP tool with neither
        `readOnlyHint` nor `idempotentHint` says nothing about its effect.
        """
        if self.effect is not None:
            return self.effect
        return effect_from_mcp_annotations(self.mcp_annotations)

    async def call(self, arguments: dict[str, Any], invocation: ToolInvocation) -> str:
        """Run the handler, awaiting it if it is async, and check it returned text.

        For a runner that applies no tool state: a `ToolOutput` with a state update is
        refused (a `TypeError`) rather than its update silently lost.
        """
        output = await self.call_output(arguments, invocation)
        if output.state_update:
            raise TypeError(
                f"tool {self.name!r} returned a state update, and this framework's runner "
                "does not apply tool state (capability tool_state)"
            )
        return output.text

    async def call_output(self, arguments: dict[str, Any], invocation: ToolInvocation) -> ToolOutput:
        """Run the handler like `call`, keeping a state update it returns with its text."""
        result = self.handler(arguments, invocation)
        value = await result if inspect.isawaitable(result) else result
        if isinstance(value, ToolOutput):
            return ToolOutput(text=_checked_text(self.name, value.text), state_update=value.state_update)
        # Handlers are plugin or user code; check the promise the type hints make.
        return ToolOutput(text=_checked_text(self.name, value))

    async def run_verify(self, arguments: dict[str, Any], call: VerifyCall) -> VerifyResult:
        """Run ``verify`` (sync or async) and check its answer; no verify answers unknown."""
        if self.verify is None:
            return EffectUnknown(reason=f"tool {self.name!r} has no verify")
        result = self.verify(arguments, call)
        answer = await result if inspect.isawaitable(result) else result
        if not isinstance(answer, TookEffect | NoEffect | EffectUnknown):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(
                f"tool {self.name!r}: verify returned {type(answer).__name__}, expected a VerifyResult"
            )
        return answer

    async def deferral_basis(self, arguments: dict[str, Any]) -> str | None:
        """What ``verify_basis`` records for a call now; None without one, or when it refuses.

        A basis that cannot be taken (`ToolExecutionError`: the file is missing) records
        nothing, and the verify then decides without it.
        """
        if self.verify is None or self.verify_basis is None:
            return None
        try:
            result = self.verify_basis(arguments)
            basis = await result if inspect.isawaitable(result) else result
        except ToolExecutionError:
            return None
        if basis is not None and not isinstance(basis, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"tool {self.name!r}: verify_basis returned {type(basis).__name__}, expected str")
        return basis


def _checked_text(tool_name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"tool {tool_name!r} returned {type(value).__name__}, expected str")
    return value


def merge_tool_policies(options: AgentSessionOptions, tool_specs: Iterable[ToolSpec]) -> AgentSessionOptions:
    """``options`` with the `ToolSpec.policy` of each spec whose tool the options name no policy for.

    A policy the options already give a tool wins over its spec's: the person who builds
    the flow decides. Of two specs with the same name, the first one's policy counts.
    `AgentSessionFlow` applies this to its ``tool_specs``; the CLI harness calls it too.
    """
    added: dict[str, ToolPolicy] = {}
    for spec in tool_specs:
        if spec.policy is not None and spec.name not in options.tool_policies and spec.name not in added:
            added[spec.name] = spec.policy
    if not added:
        return options
    return replace(options, tool_policies={**options.tool_policies, **added})
