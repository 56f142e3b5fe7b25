"""Guardrail arithmetic: token estimates, costs, and call fingerprints."""

from __future__ import annotations

from sessionflow import MessageRole
from sessionflow.kit import FrameworkMessage
from sessionflow.session.bodies import BodyRef
from sessionflow.session.guardrails import (
    DEFAULT_MAX_STUCK,
    Budget,
    call_fingerprint,
    estimate_tokens,
    message_tokens,
    tokens_of_size,
)


def test_estimates_round_up_at_three_characters_or_bytes_a_token() -> None:
    assert [estimate_tokens("x" * n) for n in (0, 1, 2, 3, 4, 6, 7)] == [0, 1, 1, 1, 2, 2, 3]
    assert [tokens_of_size(n) for n in (0, 1, 3, 4, 9, 10)] == [0, 1, 1, 2, 3, 4]


def test_a_message_is_estimated_by_its_body_size_else_its_text_else_its_item() -> None:
    ref = BodyRef(driver="local", claim={}, size=30, sha256="0" * 64)
    stored = FrameworkMessage(role=MessageRole.USER, framework_item=None, text="x", body=ref)
    assert message_tokens(stored) == 10
    inline = FrameworkMessage(role=MessageRole.USER, framework_item={"a": 1}, text="x" * 7)
    assert message_tokens(inline) == 3
    no_text = FrameworkMessage(role=MessageRole.USER, framework_item={"a": 1}, text=None)
    assert message_tokens(no_text) == estimate_tokens(str({"a": 1}))


def test_cost_is_input_and_output_tokens_at_their_prices() -> None:
    budget = Budget(input_price=0.5, output_price=2.0, max_output_tokens=10)
    assert budget.cost_of(4, 3) == 4 * 0.5 + 3 * 2.0
    assert budget.worst_case_next_call(6) == 6 * 0.5 + 10 * 2.0
    assert Budget().max_output_tokens == 4096
    assert Budget().max_stuck == DEFAULT_MAX_STUCK == 3


def test_fingerprints_ignore_json_spelling_and_whitespace() -> None:
    assert (
        call_fingerprint("t", '{"b": 1, "a": 2}')
        == call_fingerprint("t", '{"a":2,"b":1}')
        == 't\n{"a":2,"b":1}'
    )
    assert call_fingerprint("t", "not  json\n here") == "t\nnot json here"
    assert call_fingerprint("t", "{}") != call_fingerprint("u", "{}")
