"""A proposed tool call checked against the tools the turn offers, before anything runs."""

from __future__ import annotations

from typing import Any

from sessionflow.session.proposals import check_proposal
from tests.session.helpers import call

CATALOG: dict[str, dict[str, Any]] = {
    "lookup": {
        "type": "object",
        "properties": {"q": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["q"],
    },
    "free": {},
    "broken": {"type": "no-such-type"},
}


def test_a_valid_call_passes() -> None:
    assert check_proposal(call("c", arguments='{"q": 1}'), CATALOG) is None


def test_a_tool_not_offered_is_not_allowed() -> None:
    assert check_proposal(call("c", tool_name="nope"), CATALOG) == (
        "not_allowed: no tool named 'nope' is available in this turn"
    )


def test_empty_arguments_are_an_empty_object() -> None:
    assert check_proposal(call("c", tool_name="free", arguments=""), CATALOG) is None
    assert check_proposal(call("c", arguments=""), CATALOG) == (
        "invalid_arguments: 'q' is a required property (at '/')"
    )


def test_arguments_that_are_not_json_are_invalid() -> None:
    refusal = check_proposal(call("c", arguments="{not json"), CATALOG)
    assert refusal is not None and refusal.startswith("invalid_arguments: the arguments are not valid JSON (")


def test_a_schema_violation_names_where() -> None:
    assert check_proposal(call("c", arguments='{"q": 1, "tags": ["a", 2]}'), CATALOG) == (
        "invalid_arguments: 2 is not of type 'string' (at '/tags/1')"
    )


def test_a_broken_schema_lets_the_tool_decide() -> None:
    assert check_proposal(call("c", tool_name="broken", arguments='{"q": 1}'), CATALOG) is None
