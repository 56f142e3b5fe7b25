"""Message keys, the rolling digest, and usage arithmetic."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionflow import AgentMessage, AgentUsage, MessageRole
from sessionflow.kit import FrameworkMessage, message_digest
from sessionflow.session.bodies import BodyRef
from sessionflow.session.messages import message_sequence_key
from tests.session.helpers import assistant, user


@pytest.mark.parametrize(
    ("sequence", "key"),
    [(1, "000000000001"), (42, "000000000042"), (999_999_999_999, "999999999999"), (10**12, "1000000000000")],
)
def test_sequence_key_is_zero_padded(sequence: int, key: str) -> None:
    assert message_sequence_key(sequence) == key


@pytest.mark.parametrize("sequence", [0, -1, -(10**6)])
def test_sequence_key_refuses_sequences_below_one(sequence: int) -> None:
    with pytest.raises(ValueError, match=f"message sequences start at 1, got {sequence}"):
        message_sequence_key(sequence)


@settings(max_examples=200, deadline=None, database=None)
@given(a=st.integers(min_value=1, max_value=10**12 - 1), b=st.integers(min_value=1, max_value=10**12 - 1))
def test_sequence_keys_sort_like_sequences(a: int, b: int) -> None:
    assert (message_sequence_key(a) < message_sequence_key(b)) is (a < b)
    assert len(message_sequence_key(a)) == 12


def test_message_digest_is_a_sha256_chain() -> None:
    first = AgentMessage(sequence=1, turn_id="turn-1", message=user("hi"))
    encoded = json.dumps(
        {
            "message": {"framework_item": {"content": "hi", "role": "user"}, "role": "user", "text": "hi"},
            "sequence": 1,
            "turn_id": "turn-1",
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    assert message_digest("", first) == hashlib.sha256(f"\n{encoded}".encode()).hexdigest()


def test_message_digest_depends_on_prefix_and_content() -> None:
    first = AgentMessage(sequence=1, turn_id="turn-1", message=user("hi"))
    second = AgentMessage(sequence=2, turn_id="turn-1", message=assistant("yo"))
    d1 = message_digest("", first)
    assert message_digest(d1, second) != message_digest("", second)
    assert message_digest("", first) == d1
    assert message_digest("", AgentMessage(sequence=1, turn_id="turn-1", message=user("hi!"))) != d1
    assert message_digest("", AgentMessage(sequence=2, turn_id="turn-1", message=user("hi"))) != d1
    assert len(d1) == 64


usages = st.builds(
    AgentUsage,
    requests=st.integers(min_value=0, max_value=10**9),
    input_tokens=st.integers(min_value=0, max_value=10**12),
    output_tokens=st.integers(min_value=0, max_value=10**12),
)


def test_usage_defaults_and_total() -> None:
    assert AgentUsage() == AgentUsage(requests=0, input_tokens=0, output_tokens=0)
    assert AgentUsage(requests=2, input_tokens=30, output_tokens=12).total_tokens == 42
    assert AgentUsage(requests=1, input_tokens=3, output_tokens=4) + AgentUsage(
        requests=2, input_tokens=5, output_tokens=6
    ) == AgentUsage(requests=3, input_tokens=8, output_tokens=10)


@settings(max_examples=200, deadline=None, database=None)
@given(a=usages, b=usages, c=usages)
def test_usage_addition_is_a_commutative_monoid(a: AgentUsage, b: AgentUsage, c: AgentUsage) -> None:
    assert (a + b) + c == a + (b + c)
    assert a + b == b + a
    assert a + AgentUsage() == a == AgentUsage() + a
    assert (a + b).total_tokens == a.total_tokens + b.total_tokens
    assert (a + b).requests == a.requests + b.requests


def test_a_message_is_stored_when_it_has_a_body_reference() -> None:
    ref = BodyRef(driver="local", claim={"key": "k"}, size=3, sha256="0" * 64)
    inline = FrameworkMessage(role=MessageRole.USER, framework_item={"content": "hi"}, text="hi")
    stored = FrameworkMessage(role=MessageRole.USER, framework_item=None, text="hi", body=ref)
    assert (inline.is_stored, stored.is_stored) == (False, True)
