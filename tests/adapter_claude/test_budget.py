"""`_budget`: the CLI's USD budget reminders carry the session's numbers, written as JavaScript writes them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sessionflow_claude_agent_sdk._budget import (
    CLI_BUDGET,
    budget_error,
    budget_spent,
    js_number,
    rewrite_budget_texts,
    with_session_budget,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0"),
        (1.0, "1"),
        (0.5, "0.5"),
        (0.42000000000000004, "0.42000000000000004"),
        (1 - 0.42000000000000004, "0.58"),
        (0.15999999999999992, "0.15999999999999992"),
        (-0.3400000000000001, "-0.3400000000000001"),
        (0.00001, "0.00001"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (1e21, "1e+21"),
        (CLI_BUDGET, "1099511627776"),
    ],
)
def test_numbers_are_written_as_javascript_writes_them(value: float, text: str) -> None:
    assert js_number(value) == text


def test_the_budget_is_spent_once_the_cost_reaches_it() -> None:
    assert not budget_spent(0.99, 1.0)
    assert budget_spent(1.0, 1.0)
    assert budget_spent(0.0, 0.0)
    assert not budget_spent(5.0, None)
    assert budget_error(1.0) == "Reached maximum budget ($1)"


def test_the_relay_rewrites_only_the_cli_budget_reminders() -> None:
    request: dict[str, Any] = {
        "messages": [
            {
                "role": "system",
                "content": [
                    {"type": "text", "text": "USD budget: $0/$1099511627776; $1099511627776 remaining"}
                ],
            },
            {"role": "system", "content": "USD budget: $0.1/$5; $4.9 remaining"},
            {"role": "user", "content": "no reminder"},
        ]
    }
    assert rewrite_budget_texts(request, 0.42000000000000004, 1.0)
    assert (
        request["messages"][0]["content"][0]["text"] == "USD budget: $0.42000000000000004/$1; $0.58 remaining"
    )
    assert request["messages"][1]["content"] == "USD budget: $0.1/$5; $4.9 remaining"
    assert not rewrite_budget_texts({"messages": [{"role": "user", "content": "hi"}]}, 1.0, 2.0)


def test_the_transcript_keeps_the_session_numbers() -> None:
    rendered = (
        "<system-reminder>\nUSD budget: $0/$1099511627776; $1099511627776 remaining\n</system-reminder>"
    )
    entry = {
        "type": "attachment",
        "attachment": {"type": "budget_usd", "used": 0, "total": CLI_BUDGET, "remaining": CLI_BUDGET},
        "rendered": [{"content": rendered}],
    }
    earlier = json.dumps({**entry, "uuid": "earlier"})
    lines = [earlier, json.dumps(entry), json.dumps({"type": "user", "message": {"content": "hi"}})]
    out = with_session_budget(lines, 1, 0.84, 1.0)
    assert out[0] == earlier and out[2] == lines[2]
    fixed = json.loads(out[1])
    assert fixed["attachment"] == {"type": "budget_usd", "used": 0.84, "total": 1.0, "remaining": 1.0 - 0.84}
    assert fixed["rendered"] == [
        {
            "content": "<system-reminder>\nUSD budget: $0.84/$1; $0.16000000000000003 remaining\n</system-reminder>"
        }
    ]
