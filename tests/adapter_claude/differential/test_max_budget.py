"""``max_budget_usd``: Claude Code ends the turn as ``error_max_budget_usd``, never retried.

Plain (`ClaudeSDKClient`): the CLI adds up what its requests cost. Once that reaches the
budget it ends the turn right after the response that reached it (the calls of that response
still run), and ends every later turn of the client at once, without a request. The model is
shown where it stands ("USD budget: $used/$total; $left remaining") with each later turn's
prompt and after tool results.

The session must make the same requests, show the same numbers, run the same tools and end
each turn the same way, and never retry a step for it: every model step ends at attempt 1.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_claude.differential import custom_tools
from tests.adapter_claude.differential.custom_tools import BIG_USAGE
from tests.adapter_claude.differential.harness import Scenario, assert_same_run, run_both

CALL = ModelReply.call(
    ScriptedToolCall("toolu_look", custom_tools.LOOKUP, {"topic": "Temporal"}), usage=BIG_USAGE
)
BUDGET_SPENT = "error_max_budget_usd: None"


def _texts(request: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for message in cast(list[dict[str, Any]], request["messages"]):
        content = message.get("content")
        blocks = [{"text": content}] if isinstance(content, str) else cast(list[dict[str, Any]], content)
        found += [str(b["text"]) for b in blocks if isinstance(b.get("text"), str)]
    return found


def _reminders(request: dict[str, Any]) -> list[str]:
    return [t.strip() for t in _texts(request) if t.strip().startswith("USD budget:")]


async def test_the_budget_ends_the_turn_after_the_answer_that_spent_it_and_every_later_turn(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="budget",
        build=custom_tools.lookup_budget_one,
        script=[
            CALL,
            ModelReply.say("Found three entries.", usage=BIG_USAGE),
            ModelReply.say("Still three.", usage=BIG_USAGE),
            ModelReply.say("never sent", usage=BIG_USAGE),
        ],
        turns=["Look up Temporal", "And again?", "Once more?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # $0.42 a request: the third reaches $1; the third turn makes none.
    assert len(plain.requests) == 3
    assert plain.subtypes == ["success", "error_max_budget_usd", "error_max_budget_usd"]
    assert plain.errors == [None, BUDGET_SPENT, BUDGET_SPENT]
    assert plain.results == ["Found three entries.", None, None]
    assert plain.tool_runs == [{"name": "lookup", "args": {"topic": "Temporal"}}]
    assert _reminders(plain.requests[1]) == ["USD budget: $0.42000000000000004/$1; $0.58 remaining"]
    assert _reminders(plain.requests[2])[-1] == (
        "USD budget: $0.8400000000000001/$1; $0.15999999999999992 remaining"
    )
    # Never retried: one attempt per model step (the third turn ends in its only step).
    assert session.model_step_attempts == [1, 1, 1, 1]
    assert len(session.requests) == 3
    assert_same_run(plain, session)


async def test_a_response_that_spends_the_budget_still_has_its_call_run(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="budget-call",
        build=custom_tools.lookup_budget_small,
        script=[CALL, ModelReply.say("never sent", usage=BIG_USAGE)],
        turns=["Look up Temporal", "And again?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 1
    assert plain.subtypes == ["error_max_budget_usd", "error_max_budget_usd"]
    assert plain.errors == [BUDGET_SPENT, BUDGET_SPENT]
    assert plain.tool_runs == [{"name": "lookup", "args": {"topic": "Temporal"}}]
    # The call's step, then the step that ends the turn, then the second turn's only step.
    assert session.model_step_attempts == [1, 1, 1]
    # Deliberate (docs/extension-points/claude-agent-sdk.md, max_budget_usd): Claude Code ran
    # the call but stopped before it wrote the result into its history; the session keeps the
    # result of a call that ran. Nothing else differs.
    result = ["tool", [["toolu_look", custom_tools.lookup_text("Temporal"), False]]]
    assert result not in plain.transcript
    assert [item for item in session.transcript if item != result] == plain.transcript
    assert_same_run(replace(plain, transcript=session.transcript), session)
