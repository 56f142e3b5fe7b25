"""History processors (`ProcessHistory`), differential against plain Pydantic AI.

Plain: ``agent.run(prompt, message_history=result.all_messages())`` turn after turn, so each
run starts from the history the last one left, which a processor has rewritten. Session:
the framework's history travels with the session once a processor has rewritten it
(`sessionflow_pydantic_ai._framework_history`), so the processor sees, request by request,
what it sees in plain runs, and the model is sent the same.

What the session stores is the conversation as it happened: each turn's messages, as
plain's ``result.new_messages()`` has them one run after another (`Run.transcript`). Plain's
``result.all_messages()`` is the processed history; the stored transcript cannot be
rewritten, so the two differ wherever a processor rewrote the history (adapter README,
extension-point matrix: "history processors").
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, ModelMessage, RunContext
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelRequest

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import (
    Built,
    Models,
    Scenario,
    assert_same_run,
    run_both,
    run_session,
    unique,
)

# -- docs/message-history.md, summarize_old_messages.py (pydantic/pydantic-ai 4fda389) -----


def summarize_old_messages_agent(models: Models, log: InvocationLog) -> Built:
    """The docs' example as it stands, both agents on the scripted server (the summarizer
    on its own conversation, ``-summarize``)."""
    # Use a cheaper model to summarize old messages.
    summarize_agent = Agent(
        models.model("-summarize"),
        instructions="""
Summarize this conversation, omitting small talk and unrelated topics.
Focus on the technical discussion and next steps.
""",
    )

    async def summarize_old_messages(messages: list[ModelMessage]) -> list[ModelMessage]:
        # Summarize the oldest 10 messages
        if len(messages) > 10:
            oldest_messages = messages[:10]
            summary = await summarize_agent.run(message_history=oldest_messages)
            # Return the last message and the summary
            return summary.new_messages() + messages[-1:]

        return messages

    agent = Agent(models.model(), capabilities=[ProcessHistory(summarize_old_messages)])
    return Built(agent=agent)


TOPICS = ["Postgres indexes", "partial indexes", "BRIN", "VACUUM", "autovacuum", "HOT updates", "fillfactor"]


async def test_summarize_old_messages_summarizes_once_and_the_model_sees_every_later_turn(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Turn 6 has 11 messages: the oldest 10 become a summary. Turn 7 starts from that
    summary, turn 6 and its own prompt (5 messages): no second summary, and turn 6 is sent."""
    scenario = Scenario(
        name="summarize",
        build=summarize_old_messages_agent,
        script=[ModelReply.say(f"About {topic}: noted.") for topic in TOPICS],
        side_scripts={"-summarize": [ModelReply.say("We discussed Postgres indexes, BRIN and VACUUM.")]},
        turns=[f"Tell me about {topic}." for topic in TOPICS],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # Plain: one summary, in turn 6; turn 7's request holds the summary, turn 6 and turn 7.
    assert len(plain.requests["-summarize"]) == 1
    seventh = plain.requests[""][6]["messages"]
    assert [m["role"] for m in seventh] == ["assistant", "user", "assistant", "user"]
    assert seventh[0]["content"] == "We discussed Postgres indexes, BRIN and VACUUM."
    assert seventh[1]["content"] == "Tell me about HOT updates."
    # The documented difference: plain's history is the processed one; the session stores
    # the conversation as it happened, which is plain's runs' new messages in order.
    assert plain.history != plain.transcript and len(plain.history) == 6
    assert session.history == plain.transcript
    assert_same_run(replace(plain, history=plain.transcript), session)


# -- a processor that shows what it is given ------------------------------------------------


def _shown(messages: list[ModelMessage]) -> list[str]:
    """Each message as kind and parts, with the text a part carries."""
    shown: list[str] = []
    for message in messages:
        kind = "request" if isinstance(message, ModelRequest) else "response"
        parts = [f"{p.part_kind}:{getattr(p, 'content', getattr(p, 'tool_name', ''))}" for p in message.parts]
        shown.append(f"{kind}[{', '.join(parts)}]")
    return shown


def _weather_agent(models: Models, log: InvocationLog, processor: Any) -> Built:
    agent = Agent(
        models.model(),
        system_prompt="You answer questions about weather.",
        capabilities=[ProcessHistory(processor)],
    )

    @agent.tool_plain
    def weather(city: str) -> str:
        """The weather in a city."""
        log.record("tool", "weather", city=city)
        return f"sunny in {city}"

    return Built(agent=agent)


def keep_recent_turns_agent(models: Models, log: InvocationLog) -> Built:
    """A processor that keeps the last two turns whole, as the docs advise ("make sure that
    tool calls and returns are paired"), with a `RunContext` (context_aware_processor.py)
    and a record of each call."""

    def keep_recent_turns(ctx: RunContext[Any], messages: list[ModelMessage]) -> list[ModelMessage]:
        starts = [i for i, m in enumerate(messages) if _opens_turn(m)]
        kept = messages[starts[-2] :] if len(starts) > 2 else messages
        log.record("hook", "keep_recent_turns", run_step=ctx.run_step, seen=_shown(messages), kept=len(kept))
        return kept

    return _weather_agent(models, log, keep_recent_turns)


def keep_recent_messages_agent(models: Models, log: InvocationLog) -> Built:
    """docs/message-history.md's keep_recent_messages.py (the last 5 messages, however that
    cuts), with a record of each call."""

    async def keep_recent_messages(messages: list[ModelMessage]) -> list[ModelMessage]:
        """Keep only the last 5 messages to manage token usage."""
        kept = messages[-5:] if len(messages) > 5 else messages
        log.record("hook", "keep_recent_messages", seen=_shown(messages), kept=len(kept))
        return kept

    return _weather_agent(models, log, keep_recent_messages)


def _opens_turn(message: ModelMessage) -> bool:
    return isinstance(message, ModelRequest) and any(p.part_kind == "user-prompt" for p in message.parts)


WEATHER_SCRIPT = [
    ModelReply.call(ScriptedToolCall("c1", "weather", {"city": "Oslo"})),
    ModelReply.say("Sunny in Oslo."),
    ModelReply.say("Yes, Oslo."),
    ModelReply.call(ScriptedToolCall("c2", "weather", {"city": "Rome"})),
    ModelReply.call(ScriptedToolCall("c3", "weather", {"city": "Paris"})),
    ModelReply.say("Sunny in both."),
    ModelReply.say("You asked about three cities."),
]
WEATHER_TURNS = ["Weather in Oslo?", "Was that Oslo?", "And Rome and Paris?", "How many cities?"]


async def test_a_processor_is_given_at_every_request_what_plain_gives_it(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Every call of the processor, with what it was given, in order, across turns of several
    steps: the same in both, and so is every request (the system prompt it dropped stays dropped)."""
    scenario = Scenario(
        name="keep-turns", build=keep_recent_turns_agent, script=WEATHER_SCRIPT, turns=WEATHER_TURNS
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    calls = plain.hook_runs
    assert len(calls) == len(plain.requests[""]) == 7, "once per request"
    assert [c["run_step"] for c in calls] == [1, 2, 1, 1, 2, 3, 1]
    assert any(c["kept"] < len(c["seen"]) for c in calls), "the processor dropped messages"
    # Turn 4's request starts from the history turn 3 left: trimmed, without the system prompt.
    assert "system-prompt" not in str(calls[-1]["seen"])
    assert all(m["role"] != "system" for m in plain.requests[""][-1]["messages"])
    assert plain.tool_runs == [{"name": "weather", "city": c} for c in ("Oslo", "Rome", "Paris")]
    assert plain.history != plain.transcript
    assert session.history == plain.transcript
    assert_same_run(replace(plain, history=plain.transcript), session)


async def test_within_a_turn_a_processor_is_not_shown_results_it_cut_from_their_calls(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The docs' keep_recent_messages.py cuts a tool call from its result. In one plain run
    the orphaned result stays in the history, and the processor sees it on the turn's next
    request; a session's next step is a new run, and Pydantic AI drops such a result from
    a history it is handed (as the plain run's next turn does). The requests are the same:
    Pydantic AI drops it from every request it sends."""
    scenario = Scenario(
        name="keep-recent", build=keep_recent_messages_agent, script=WEATHER_SCRIPT, turns=WEATHER_TURNS
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    orphaned = [i for i, c in enumerate(plain.hook_runs) if c["seen"][0].startswith("request[tool-return:")]
    assert orphaned == [4], "turn 3's second request: the processor cut Oslo's call off its result"
    assert session.hook_runs == [
        {**c, "seen": c["seen"][1:]} if i in orphaned else c for i, c in enumerate(plain.hook_runs)
    ]
    assert session.history == plain.transcript
    assert_same_run(replace(plain, history=plain.transcript, hook_runs=session.hook_runs), session)


async def test_a_retried_step_runs_its_processor_again_with_the_processors_own_model_call(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Documented: a processor runs inside the model step, before the request. When the
    request fails (here the main model answers 500 once) the session retries the step, and
    the processor runs again: the summarizer is asked twice for the one summary turn 6 uses.
    (Plain has no step to retry: the run raises `ModelHTTPError`.)"""

    def no_sdk_retries(models: Models, log: InvocationLog) -> Built:
        built = summarize_old_messages_agent(models, log)
        # The session retries the step; the OpenAI SDK's own retries would hide the failure.
        built.agent.model_settings = {"max_retries": 0}
        return built

    scenario = Scenario(
        name="summarize-retried",
        build=no_sdk_retries,
        script=[
            *[ModelReply.say(f"About {topic}: noted.") for topic in TOPICS[:5]],
            ModelReply.fail("http_500"),
            ModelReply.say(f"About {TOPICS[5]}: noted."),
        ],
        side_scripts={"-summarize": [ModelReply.say("First summary."), ModelReply.say("Second summary.")]},
        turns=[f"Tell me about {topic}." for topic in TOPICS[:6]],
    )
    key = unique("pai-diff-summarize-retried")
    session = await run_session(scenario, model_server, key, tmp_path, temporal_address)

    assert session.errors == [None] * 6
    assert len(session.requests["-summarize"]) == 2, "the retried step summarized again"
    assert len(session.requests[""]) == 7 and session.model_attempts == 7
    sixth = session.requests[""][6]["messages"]
    assert sixth[0] == {"role": "assistant", "content": "Second summary."}
