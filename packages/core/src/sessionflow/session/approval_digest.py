"""What a person approved, as a digest: the tool, its effect and its exact arguments.

An approval is bound to what was shown. The session stores the digest of the call as the
interrupt showed it, a client may send the digest it showed back with its answer (a stale
screen is then refused), and the tool step runs the call only while the arguments it is
about to run still have that digest. A framework that rewrites the arguments after the
approval (a LangChain ``wrap_tool_call`` middleware, an edit) gets a new approval instead.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from sessionflow.session.tools import AgentToolCall, ToolEffect

__all__ = ["approval_digest", "approved_digest_of", "canonical_arguments", "run_arguments_of"]


def canonical_arguments(arguments: str | Mapping[str, Any]) -> str:
    """The arguments as one canonical JSON text (sorted keys, no spaces).

    Two spellings of the same JSON object (key order, spacing, escapes) are one set of
    arguments. Text that is not JSON is kept as it is: it is compared byte for byte.
    """
    value: Any
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except ValueError:
            return arguments
    else:
        value = arguments
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        # A value JSON cannot hold (a framework object in a rewritten call): its repr is
        # still what would run, so it is what the digest covers.
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr)


def approval_digest(tool_name: str, arguments: str | Mapping[str, Any], effect: ToolEffect) -> str:
    """``sha256:<hex>`` of the tool's name, its effect and its canonical arguments."""
    body = json.dumps(
        {"tool": tool_name, "effect": effect.value, "arguments": canonical_arguments(arguments)},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return "sha256:" + hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


def approved_digest_of(record: AgentToolCall) -> str | None:
    """The digest a person approved for this call, or None when it never waited for one."""
    approval = record.approval
    if approval is None or not approval.approved:
        return None
    return approval.digest


def run_arguments_of(record: AgentToolCall) -> str:
    """The arguments the call's approval covers: the rewritten ones once a rewrite was approved."""
    return record.rebound_arguments if record.rebound_arguments is not None else record.arguments
