"""ToolPolicy and ToolEffect: the values a policy refuses, and how effects rank."""

from __future__ import annotations

import itertools
import math

import pytest

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.session.tools import MAX_LOCAL_TIMEOUT

_RANKED = [
    ToolEffect.READ,
    ToolEffect.IDEMPOTENT_WRITE,
    ToolEffect.NON_IDEMPOTENT_WRITE,
    ToolEffect.UNCLASSIFIED,
]


def test_effects_rank_from_read_to_unclassified() -> None:
    assert [effect.caution for effect in _RANKED] == [0, 1, 2, 3]
    for lower, higher in itertools.pairwise(_RANKED):
        assert lower.more_cautious(higher) is higher
        assert higher.more_cautious(lower) is higher
    assert ToolEffect.READ.more_cautious(ToolEffect.READ) is ToolEffect.READ


def test_only_repeatable_effects_retry_and_the_rest_ask() -> None:
    assert [effect.is_retryable for effect in _RANKED] == [True, True, False, False]
    assert [effect.requires_approval_by_default for effect in _RANKED] == [False, False, True, True]


def test_max_output_bytes_starts_at_one() -> None:
    assert ToolPolicy(effect=ToolEffect.READ, max_output_bytes=1).max_output_bytes == 1
    with pytest.raises(ValueError, match="max_output_bytes must be at least 1, got 0"):
        ToolPolicy(effect=ToolEffect.READ, max_output_bytes=0)


def test_a_local_timeout_is_for_reads_only() -> None:
    with pytest.raises(ValueError, match="local_timeout is for read tools only, not 'idempotent_write' ones"):
        ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, local_timeout=1.0)
    assert ToolPolicy(effect=ToolEffect.READ, local_timeout=1).local_timeout == 1.0


def test_a_local_timeout_is_above_zero_and_at_most_thirty_seconds() -> None:
    assert MAX_LOCAL_TIMEOUT == 30.0
    assert ToolPolicy(effect=ToolEffect.READ, local_timeout=30).local_timeout == 30.0
    assert ToolPolicy(effect=ToolEffect.READ, local_timeout=0.5).local_timeout == 0.5
    for bad in (0, -1, 30.5, math.nan):
        with pytest.raises(ValueError, match="local_timeout must be more than 0 and at most 30 seconds"):
            ToolPolicy(effect=ToolEffect.READ, local_timeout=bad)
