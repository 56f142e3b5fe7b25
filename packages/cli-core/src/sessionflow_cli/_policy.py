"""The CLI's one call-policy engine, and how "does this call need approval?" is decided.

A proposed call passes these steps, in this order:

1. The runner resolves the call's policy with `AgentTurnContext.resolve_tool_policy`, that
   is `AgentSessionOptions.resolve_tool_policy`: the explicit policy of ``tool_policies``
   (the CLI puts every tool's own `ToolSpec.policy` there), else the framework's effect
   (`ToolSpec.framework_effect`, MCP hints included), else ``default_tool_effect``
   (`unclassified`). The Claude adapter raises Claude Code's own tools to their floors
   here (`sessionflow_local_tools.with_floor`).
2. When the runner offers a tool catalog (`AgentFrameworkRunner.tool_catalog`), the model
   step checks the proposal (`sessionflow.session.proposals.check_proposal`): a tool the
   turn does not offer is refused as `not_allowed`, arguments that fail the schema as
   `invalid_arguments`. A refused call never runs and never asks.
3. The session's ``call_policy``, built here by `build_call_policy`, decides the final
   policy (below); it only adds caution.
4. The workflow (`SessionModel.request_tools`) waits for approval when the final policy's
   `ToolPolicy.is_approval_required` says so: an explicit ``requires_approval``, else the
   effect's default (`non_idempotent_write` and `unclassified` ask). In the terminal a
   person answers; with ``-p`` only ``--approve <tool>`` approves.
5. The final effect picks the tool step: `read` and `idempotent_write` may run up to 3
   times, `non_idempotent_write` and `unclassified` exactly once.

What `build_call_policy` decides for each call:

- the effect is the most cautious (`ToolEffect.caution`: read < idempotent write <
  non-idempotent write < unclassified) of the runner's, the tool's own floor and an
  explicit policy of the session options;
- approval is required when the tool's own policy or effect requires it, when an explicit
  policy of the session options does, or when the turn's ``approval.always`` names it;
- `run_shell_command` (and a framework's own twin of it, Claude Code's `Bash`) is the
  exception to the tool's own approval: it runs without approval only when the whole
  command text is on the turn's shell allow list, and even then ``approval.always`` or an
  explicit policy still ask. Either is lifted only when it runs sandboxed (bubblewrap,
  or Landlock that can refuse the network when it is off:
  `sessionflow_local_tools.SandboxStatus.allow_list_applies`): without the sandbox every
  command asks. A framework's twin runs in the same sandbox (`HarnessContext.shell_sandbox`;
  Claude Code's `Bash` through `ClaudeAgentRunner(bash_sandbox=...)`);
- a framework's own tools that stand for a local tool (`FrameworkSpec.local_tool_twins`:
  Claude Code's `Read`, `Write`, `Edit`, `Bash`, ...) get the floors of their twins
  (`sessionflow_local_tools.LOCAL_TOOL_FLOORS`), so `Write` and `Edit` ask on every call
  under ``-f claude-agent-sdk`` as `write_file` and `edit_file` do.

Nothing here can make a call less cautious than the runner's effect or an explicit policy.
The local tools' floors (`sessionflow_local_tools.LOCAL_TOOL_FLOORS`) are data; this
is the only place that applies them to a call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sessionflow import CallPolicy, ToolEffect, ToolPolicy
from sessionflow.kit import DeferredToolCall, ToolSpec, approval_reason, tool_arguments_object
from sessionflow_cli._local_tools import shell_sandbox
from sessionflow_cli.config import TurnConfig
from sessionflow_local_tools import LOCAL_TOOL_FLOORS, SHELL_TOOL, sandbox_status

__all__ = ["build_call_policy", "own_policy", "shell_command"]


def shell_command(arguments: str) -> str | None:
    """The ``command`` argument of a shell call, or None when there is none."""
    command: object = (tool_arguments_object(arguments) or {}).get("command")
    return command if isinstance(command, str) else None


def own_policy(spec: ToolSpec) -> ToolPolicy:
    """A tool's floor: its own policy, else its effect (MCP hints included), else unclassified."""
    if spec.policy is not None:
        return spec.policy
    return ToolPolicy(effect=spec.framework_effect or ToolEffect.UNCLASSIFIED)


def build_call_policy(
    tools: Sequence[ToolSpec],
    resolve_settings: Callable[[Mapping[str, Any]], TurnConfig],
    explicit: Mapping[str, ToolPolicy] | None = None,
    *,
    twins: Mapping[str, str] | None = None,
) -> CallPolicy:
    """The `AgentSessionOptions.call_policy` for `tools`.

    Args:
        tools: The tools the command gives the framework; their policies are the floor.
        resolve_settings: The turn's configuration from its session settings.
        explicit: Explicit policies of the session options; they can only add caution.
        twins: The framework's own tools that stand for a local tool
            (`FrameworkSpec.local_tool_twins`); each gets its twin's floor.

    Raises:
        ValueError: A twin is not a local tool.
    """
    twins = dict(twins or {})
    unknown = sorted(set(twins.values()) - set(LOCAL_TOOL_FLOORS))
    if unknown:
        raise ValueError(f"the framework's tools stand for unknown local tools: {', '.join(unknown)}")
    floors = {name: LOCAL_TOOL_FLOORS[twin] for name, twin in twins.items()}
    own = {**floors, **{spec.name: own_policy(spec) for spec in tools}}
    shell_tools = {SHELL_TOOL, *(name for name, twin in twins.items() if twin == SHELL_TOOL)}
    extra = dict(explicit or {})

    def policy(call: DeferredToolCall, settings: Mapping[str, Any]) -> ToolPolicy:
        turn = resolve_settings(settings)
        name = call.tool_name
        floor = own.get(name)
        stated = extra.get(name)
        effect = call.policy.effect
        for other in (floor, stated):
            if other is not None:
                effect = effect.more_cautious(other.effect)
        # Why it asks, in the order a person would look: the CLI's own rules first.
        reasons: list[str] = []
        if name in shell_tools and floor is not None:
            command = shell_command(call.arguments)
            shell = turn.local_tools.shell
            if command is None or not shell.is_allowed(command):
                reasons.append("the command is not on the shell allow list")
            # The framework's twin (Bash) runs in the same sandbox (HarnessContext.shell_sandbox).
            elif not sandbox_status(shell_sandbox(shell.sandbox)).allow_list_applies:
                reasons.append("the shell is not sandboxed here, so every command asks")
            if call.policy.requires_approval is True:
                reasons.append("the framework's policy for this tool requires approval")
        elif floor is not None:
            if floor.is_approval_required:
                reasons.append(f"sessionflow asks before every {name} call (the tool's own floor)")
            elif call.policy.is_approval_required:
                reasons.append(approval_reason(call.policy))
        elif call.policy.is_approval_required:
            reasons.append(approval_reason(call.policy))
        if stated is not None and stated.requires_approval is True:
            reasons.append(f"an explicit policy for {name} requires approval")
        if turn.requires_approval(name):
            reasons.append(f"the configuration's approval.always names {name}")
        return ToolPolicy(
            effect=effect, requires_approval=bool(reasons), approval_reason="; ".join(reasons) or None
        )

    return policy
