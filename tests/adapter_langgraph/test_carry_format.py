"""The thread carry is versioned: a carry this adapter cannot read fails the step, by name."""

from __future__ import annotations

import json

import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from sessionflow.session import SessionStateError
from sessionflow_langgraph._carry import CARRY_VERSION, ThreadCarry


def test_a_carry_of_another_version_or_encoding_is_refused_with_its_version() -> None:
    serde = JsonPlusSerializer()
    with pytest.raises(SessionStateError, match="unsupported sessionflow-langgraph carry version 99"):
        ThreadCarry.loads(json.dumps({"v": 99, "state": {}}), serde)
    with pytest.raises(SessionStateError, match="not a sessionflow-langgraph thread carry"):
        ThreadCarry.loads("carried turns: 1", serde)
    assert CARRY_VERSION == 1
