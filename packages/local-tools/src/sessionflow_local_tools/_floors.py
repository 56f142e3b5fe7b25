"""The approval floors of the hardened tools, the same under every front end's tool names.

A floor is the least caution a tool gets: reads run without approval; writing a whole
file (an idempotent write) and editing one (not idempotent) ask on every call; a shell
command is a non-idempotent write whose approval is left to the effect's default (ask),
so a front end's shell allow list can lift it for one exact command. The local tools
(``read_file``, ``write_file``, ``run_shell_command``..., `_tool_floors`) get these floors;
so do a framework's own tools that stand for them (the Claude Agent SDK adapter maps
Claude Code's ``Read``, ``Write``, ``Bash``... onto the local tools).
"""

from __future__ import annotations

from sessionflow import ToolEffect, ToolPolicy

__all__ = [
    "EDIT_FLOOR",
    "READ_FLOOR",
    "SHELL_FLOOR",
    "WRITE_FLOOR",
    "with_floor",
]

READ_FLOOR = ToolPolicy(effect=ToolEffect.READ, requires_approval=False)
WRITE_FLOOR = ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=True)
EDIT_FLOOR = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True)
SHELL_FLOOR = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)
"""No explicit approval: the effect's default (ask) holds, and an allow list may lift it."""


def with_floor(floor: ToolPolicy, policy: ToolPolicy) -> ToolPolicy:
    """``policy`` raised to ``floor``: the more cautious effect, and approval if either asks.

    An approval left to the effect's default stays so (None) when neither side asks
    explicitly, so an allow list further on can still lift it.
    """
    effect = policy.effect.more_cautious(floor.effect)
    if floor.requires_approval is True or policy.requires_approval is True:
        approval: bool | None = True
    elif floor.requires_approval is None or policy.requires_approval is None:
        approval = None
    else:
        approval = False
    return ToolPolicy(effect=effect, requires_approval=approval, allow_repeats=policy.allow_repeats)
