"""Agent delegation inside a tool step: what a session shows and what it refuses.

The differential tests (differential/test_delegation.py) compare delegated runs with plain
Pydantic AI, also across a SIGKILL. These pin down the rest: the nested calls' events
under the parent call's ID, the step history of a delegated turn, a nested tool the
session's floor would hold for a person (refused, never run), and a nested
non-idempotent write whose step died while it ran (its outcome unknown, never run again).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.usage import RunUsage
from temporalio import activity

from sessionflow import AgentEvent, AgentEventType
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import current_tool_invocation
from sessionflow.temporal import read_step_history
from sessionflow.testing import InvocationLog
from sessionflow_pydantic_ai._delegation import OUTCOME_UNKNOWN, usage_delta
from tests.adapter_pydantic_ai.differential import delegation_agents
from tests.adapter_pydantic_ai.differential.crash import run_session_with_crash
from tests.adapter_pydantic_ai.differential.harness import Built, Models, Scenario, session_flow, unique
from tests.adapter_pydantic_ai.differential.test_delegation import JOKES, nested_scenario
from tests.adapter_pydantic_ai.test_sessions import follow_turn, idle
from tests.serving import serving


def nested_calls(events: list[AgentEvent]) -> list[tuple[str, str]]:
    """``(kind, call ID)`` of every nested model call and tool call event, in order."""
    return [
        (str(e.data["kind"]), str(e.data["call_id"]))
        for e in events
        if e.type is AgentEventType.CUSTOM_EVENT and str(e.data.get("kind", "")).startswith("subagent_")
    ]


async def test_a_delegated_turns_nested_calls_show_under_the_parent_call(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = nested_scenario("nested-events")
    key = unique("pai-delegation-events")
    model_server.script(key, scenario.script)
    for name, replies in scenario.side_scripts.items():
        model_server.script(key + name, replies)
    built = scenario.build(Models(model_server, key), InvocationLog(tmp_path / "log.jsonl"))
    async with serving(temporal_address, session_flow(built, key)) as sessions:
        await sessions.start_session(key, scenario.turns[0])
        events = await follow_turn(sessions, key)
        snapshot = await idle(sessions, key)
        steps = [s.step_execution_id for s in await read_step_history(sessions.client, key)]

    assert snapshot.messages[-1].message.text == JOKES[0]
    # The session's steps: the delegated agent runs inside the parent's tool step.
    assert steps == ["turn-1/model-1", "turn-1/tool/call_jokes", "turn-1/model-2"]
    assert nested_calls(events) == [
        ("subagent_model_call", "call_jokes.1"),
        ("subagent_tool_call_started", "call_jokes.call_words"),
        ("subagent_tool_call", "call_jokes.call_words"),
        ("subagent_model_call", "call_jokes.2"),
        ("subagent_tool_call_started", "call_jokes.call_puns"),
        ("subagent_model_call", "call_jokes.call_puns.1"),
        ("subagent_tool_call", "call_jokes.call_puns"),
        ("subagent_model_call", "call_jokes.3"),
    ]
    first = next(e.data for e in events if e.data.get("call_id") == "call_jokes.1")
    assert first["tool_calls"] == ["call_words"] and first["replayed"] is False
    assert first["input_tokens"] == 5


async def test_a_nested_tool_the_floor_holds_is_refused_and_never_runs(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``send_email`` declares no effect: unclassified, which waits for a person in a session."""
    key = unique("pai-delegation-refused")
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("call_mail", "mail_team", {"text": "hi"})),
            ModelReply.say("I could not send it."),
        ],
    )
    model_server.script(
        key + "-mailer",
        [ModelReply.call(ScriptedToolCall("call_send", "send_email", {"to": "team", "body": "hi"}))],
    )
    log = InvocationLog(tmp_path / "log.jsonl")
    built = delegation_agents.unmarked_write(Models(model_server, key), log)
    async with serving(temporal_address, session_flow(built, key)) as sessions:
        await sessions.start_session(key, "Mail the team: hi")
        snapshot = await idle(sessions, key)

    assert log.entries() == [], "neither the nested write nor the parent's tool ran to its end"
    assert len(model_server.requests(key + "-mailer")) == 1
    assert snapshot.messages[-1].message.text == "I could not send it."
    # The parent's call failed with the refusal, which its model was shown.
    told = model_server.requests(key)[1].body["messages"][-1]
    assert (told["role"], told["tool_call_id"]) == ("tool", "call_mail")
    assert "tool 'send_email' of the delegated agent" in told["content"]
    assert "'unclassified'" in told["content"] and "cannot ask for one" in told["content"]


async def test_a_nested_write_whose_step_died_is_not_run_again(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Killed inside ``charge_card`` (non-idempotent, approval waived): the retried step tells the
    desk agent the outcome is unknown, as the session tells its own model, and charges nothing."""
    key = unique("pai-delegation-unknown")
    scenario = Scenario(
        name="desk",
        build=delegation_agents.waived_write,
        script=[
            ModelReply.call(ScriptedToolCall("call_book", "book", {"flight": "SFO-ANC"})),
            ModelReply.say("Booked, but check the card."),
        ],
        side_scripts={
            "-desk": [
                ModelReply.call(ScriptedToolCall("call_charge", "charge_card", {"amount": 350})),
                ModelReply.say("The charge may not have gone through."),
            ]
        },
        turns=["Book SFO-ANC."],
    )
    crashed = await run_session_with_crash(
        scenario, model_server, key, tmp_path / "session", temporal_address, crash_in="charge_card"
    )

    runs: list[dict[str, Any]] = crashed.run.tool_runs
    assert [run["name"] for run in runs] == ["book"], "charge_card never finished, and never ran again"
    assert crashed.steps.get("turn-1/tool/call_book") == (2, "completed"), crashed.steps
    desk = [r.body for r in model_server.requests(key + "-desk")]
    assert len(desk) == 2, "the desk agent's first request came from the journal after the restart"
    told = desk[1]["messages"][-1]
    assert (told["role"], told["tool_call_id"], told["content"]) == ("tool", "call_charge", OUTCOME_UNKNOWN)
    assert crashed.run.outputs == ["Booked, but check the card."]


LONG_SUMMARY = "A long summary. " * 8000
"""128,000 characters: the journal keeps the nested response in the payload store, by reference."""


def failing_hand_off(models: Models, log: InvocationLog) -> Built:
    """A tool that hands a document to a reader agent, then fails on its first attempt."""
    main = Agent(models.model(), instructions="Summarise with the reader.")
    reader = Agent(models.model("-reader"))

    @main.tool
    async def summarise(ctx: RunContext[object], doc: str) -> str:
        r = await reader.run(f"Summarise {doc}.", usage=ctx.usage)
        invocation = current_tool_invocation()
        attempt = invocation.attempt if invocation is not None else 0
        # What this attempt found of its last attempt's journal: each entry kept inline
        # ("text") or in the payload store ("ref"), and the size of the index it heartbeats.
        details = activity.info().heartbeat_details
        entries: dict[str, Any] = details[0]["entries"] if details else {}
        log.record(
            "tool",
            "summarise",
            attempt=attempt,
            length=len(r.output),
            journal={k: sorted(v) for k, v in entries.items()},
            index_bytes=len(json.dumps(details)),
        )
        if attempt == 1:
            raise RuntimeError("the summary store is down")  # a read: the step runs again
        return r.output[:16]

    return Built(agent=main)


async def test_a_failed_attempt_replays_a_large_nested_response_from_the_payload_store(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("pai-delegation-retry")
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("call_sum", "summarise", {"doc": "q3.pdf"})),
            ModelReply.say("Done."),
        ],
    )
    model_server.script(key + "-reader", [ModelReply.say(LONG_SUMMARY)])
    log = InvocationLog(tmp_path / "log.jsonl")
    built = failing_hand_off(Models(model_server, key), log)
    async with serving(temporal_address, session_flow(built, key)) as sessions:
        await sessions.start_session(key, "Summarise q3.pdf")
        snapshot = await idle(sessions, key)
        history = await read_step_history(sessions.client, key)

    assert snapshot.messages[-1].message.text == "Done."
    runs = log.entries("tool", "summarise")
    assert [(e["attempt"], e["length"]) for e in runs] == [(1, len(LONG_SUMMARY)), (2, len(LONG_SUMMARY))]
    assert len(model_server.requests(key + "-reader")) == 1, (
        "the second attempt read the response from the journal"
    )
    # The 128,000-character response is in the payload store, not in the heartbeat details:
    # the second attempt found its entry by reference, and an index of a few hundred bytes.
    assert runs[0]["journal"] == {}
    assert runs[1]["journal"] == {"call_sum.1": ["ref"]}
    assert runs[1]["index_bytes"] < 1_000
    assert {s.step_execution_id: s.final_attempt for s in history}["turn-1/tool/call_sum"] == 2
    told = model_server.requests(key)[1].body["messages"][-1]
    assert told["content"] == LONG_SUMMARY[:16]


def test_the_delegated_usage_leaves_out_the_parents_own_call() -> None:
    """Pydantic AI counts the parent's call as it returns; the session counts it from its record."""
    before = RunUsage(requests=1, tool_calls=0, input_tokens=10, output_tokens=2)
    after = RunUsage(requests=4, tool_calls=3, input_tokens=40, output_tokens=9)  # 2 nested calls + its own
    assert usage_delta(before, after) == RunUsage(requests=3, tool_calls=2, input_tokens=30, output_tokens=7)
    assert usage_delta(before, RunUsage(requests=1, tool_calls=1, input_tokens=10, output_tokens=2)) is None


def diverging_hand_off(models: Models, log: InvocationLog) -> Built:
    """A tool whose nested prompt names the attempt: its second attempt asks something else."""
    main = Agent(models.model(), instructions="Summarise with the reader.")
    reader = Agent(models.model("-reader"))

    @main.tool
    async def summarise(ctx: RunContext[object], doc: str) -> str:
        invocation = current_tool_invocation()
        attempt = invocation.attempt if invocation is not None else 0
        r = await reader.run(f"Summarise {doc} (attempt {attempt}).", usage=ctx.usage)
        log.record("tool", "summarise", attempt=attempt)
        if attempt == 1:
            raise RuntimeError("the summary store is down")
        return r.output

    return Built(agent=main)


async def test_a_nested_request_that_differs_on_the_next_attempt_fails_the_call(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The journal never answers a request with another request's response."""
    key = unique("pai-delegation-diverged")
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("call_sum", "summarise", {"doc": "q3.pdf"})),
            ModelReply.say("Sorry."),
        ],
    )
    model_server.script(key + "-reader", [ModelReply.say("Q3 was fine.")])
    log = InvocationLog(tmp_path / "log.jsonl")
    built = diverging_hand_off(Models(model_server, key), log)
    async with serving(temporal_address, session_flow(built, key)) as sessions:
        await sessions.start_session(key, "Summarise q3.pdf")
        snapshot = await idle(sessions, key)

    assert snapshot.messages[-1].message.text == "Sorry."
    assert [e["attempt"] for e in log.entries("tool", "summarise")] == [1]
    assert len(model_server.requests(key + "-reader")) == 1
    told = model_server.requests(key)[1].body["messages"][-1]
    assert (told["role"], told["tool_call_id"]) == ("tool", "call_sum")
    assert "model call 'call_sum.1' differs from the one an earlier attempt made" in told["content"]
