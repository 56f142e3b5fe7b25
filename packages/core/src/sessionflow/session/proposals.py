"""Checks a proposed tool call against the tools a turn offers, before anything runs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import jsonschema

from sessionflow.session.guardrails import ProposalCode
from sessionflow.session.tools import DeferredToolCall

__all__ = ["check_proposal"]


def check_proposal(call: DeferredToolCall, catalog: Mapping[str, Mapping[str, Any]]) -> str | None:
    """`<code>: <message>` when the call must not run, else None.

    A made-up tool and a switched-off tool look the same to the model: `not_allowed`.
    """
    schema = catalog.get(call.tool_name)
    if schema is None:
        return f"{ProposalCode.NOT_ALLOWED.value}: no tool named {call.tool_name!r} is available in this turn"
    try:
        arguments = json.loads(call.arguments or "{}")
    except ValueError as error:
        return f"{ProposalCode.INVALID_ARGUMENTS.value}: the arguments are not valid JSON ({error})"
    try:
        jsonschema.validate(arguments, dict(schema))
    except jsonschema.ValidationError as error:
        where = "/" + "/".join(str(p) for p in error.absolute_path)
        return f"{ProposalCode.INVALID_ARGUMENTS.value}: {error.message} (at {where!r})"
    except jsonschema.SchemaError:
        return None  # the tool's own schema is broken; let the tool decide
    return None
