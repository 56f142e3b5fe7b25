"""Model steps, one at a time, through Pydantic AI's real OpenAI client and the scripted model server."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.messages import RetryInfo, ToolReturnPart
from pydantic_ai.models import Model
from pydantic_ai.tools import ToolDefinition

from sessionflow import (
    AgentEventType,
    AgentSessionOptions,
    AgentToolCall,
    AgentToolCallStatus,
    ImageInput,
    ToolEffect,
    ToolPolicy,
    UnsupportedOptionError,
)
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall, ScriptedUsage
from sessionflow.kit import (
    AgentTurnContext,
    DeferredToolCall,
    ModelApi,
    ToolCallsRequested,
    TurnAborted,
    TurnCompleted,
)
from sessionflow_pydantic_ai import PydanticAIRunner
from sessionflow_pydantic_ai._effects import framework_effect
from sessionflow_pydantic_ai._messages import RunState, load_messages
from sessionflow_pydantic_ai._models import model_for_api
from tests.adapter_pydantic_ai.turns import PlayedTurn, context, play_turn, record, stored


def chat_model(server: ScriptedModelServer, key: str, name: str = "m") -> Model:
    return model_for_api("chat_completions", name, base_url=server.base_url(key), api_key="k")


def chat_agent(
    server: ScriptedModelServer, key: str, *, instructions: str | None = None, system_prompt: str = ""
) -> Agent[None, str]:
    return Agent(chat_model(server, key), instructions=instructions, system_prompt=system_prompt)


async def test_one_model_request_per_step_and_no_tool_runs_inside_it(
    model_server: ScriptedModelServer,
) -> None:
    key = "one-request"
    model_server.script(
        key,
        [
            ModelReply.call(
                ScriptedToolCall("c1", "lookup", {"city": "Oslo"}),
                ScriptedToolCall("c2", "lookup", {"city": "Rome"}),
                text="Checking.",
                usage=ScriptedUsage(21, 4),
            ),
            ModelReply.say("Both sunny.", usage=ScriptedUsage(40, 3)),
        ],
    )
    ran: list[str] = []
    agent = chat_agent(model_server, key)

    @agent.tool_plain
    def lookup(city: str) -> str:
        ran.append(city)
        return f"sunny in {city}"

    runner = PydanticAIRunner(agent)
    played = PlayedTurn()
    history = stored([runner.build_user_message("weather?")])
    first = await runner.run_model_step(context(history, played, run_state=None))
    assert isinstance(first, ToolCallsRequested)
    assert len(model_server.requests(key)) == 1 and ran == []
    assert [(c.tool_call_id, c.tool_name, json.loads(c.arguments)) for c in first.tool_calls] == [
        ("c1", "lookup", {"city": "Oslo"}),
        ("c2", "lookup", {"city": "Rome"}),
    ]
    assert (first.usage.requests, first.usage.input_tokens, first.usage.output_tokens) == (1, 21, 4)
    state = json.loads(first.framework_run_state)
    assert state["version"] == 2 and state["deferred"] == ["c1", "c2"]

    for call in first.tool_calls:
        played.records[call.tool_call_id] = record(
            call, AgentToolCallStatus.SUCCEEDED, output=f"out {call.tool_call_id}"
        )
    second = await runner.run_model_step(context(history, played, run_state=first.framework_run_state))
    assert isinstance(second, TurnCompleted)
    requests = model_server.requests(key)
    assert len(requests) == 2 and ran == []
    assert requests[1].tool_results() == {"c1": "out c1", "c2": "out c2"}
    assert (second.usage.requests, second.usage.input_tokens) == (1, 40)
    assert [(m.role.value, m.text) for m in second.new_messages] == [
        ("assistant", "Checking."),
        ("tool", "out c1\nout c2"),
        ("assistant", "Both sunny."),
    ]
    assert all(r.stream for r in requests)


async def test_text_and_reasoning_deltas_become_events(model_server: ScriptedModelServer) -> None:
    key = "deltas"
    model_server.script(
        key, [ModelReply.say("Hello, world", chunks=["Hel", "lo, ", "world"], reasoning="mulling")]
    )
    played = await play_turn(PydanticAIRunner(chat_agent(model_server, key)), "hi")
    assert played.deltas(AgentEventType.TEXT_DELTA) == "Hello, world"
    assert played.deltas(AgentEventType.REASONING_DELTA) == "mulling"
    assert played.completed.new_messages[-1].text == "Hello, world"


async def test_rejection_text_reaches_the_model_verbatim(model_server: ScriptedModelServer) -> None:
    key = "reject"
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("c1", "drop_table", {"name": "users"})),
            ModelReply.say("Not dropping it."),
        ],
    )
    agent = chat_agent(model_server, key)

    @agent.tool_plain
    def drop_table(name: str) -> str:
        raise AssertionError("a rejected call must never run")

    played = await play_turn(
        PydanticAIRunner(agent),
        "drop users",
        decide=lambda call: record(
            call, AgentToolCallStatus.REJECTED, rejection_message="No: prod data, ask Kim"
        ),
    )
    assert model_server.requests(key)[1].tool_results() == {
        "c1": "Tool call rejected by the user: No: prod data, ask Kim"
    }
    assert played.completed.new_messages[-1].text == "Not dropping it."


async def test_failed_and_unknown_outcomes_reach_the_model_as_the_session_describes_them(
    model_server: ScriptedModelServer,
) -> None:
    key = "outcomes"
    model_server.script(
        key,
        [
            ModelReply.call(
                ScriptedToolCall("c1", "charge", {"cents": 5}), ScriptedToolCall("c2", "charge", {"cents": 7})
            ),
            ModelReply.say("Let me check."),
        ],
    )
    agent = chat_agent(model_server, key)

    @agent.tool_plain
    def charge(cents: int) -> str:
        raise AssertionError("the session decided these calls")

    outcomes = {
        "c1": (AgentToolCallStatus.FAILED, "card declined"),
        "c2": (AgentToolCallStatus.OUTCOME_UNKNOWN, "the worker died"),
    }

    def decide(call: DeferredToolCall) -> AgentToolCall:
        status, error = outcomes[call.tool_call_id]
        return record(call, status, error=error)

    await play_turn(PydanticAIRunner(agent), "charge twice", decide=decide)
    results = model_server.requests(key)[1].tool_results()
    assert results["c1"] == "Tool call failed: card declined"
    assert results["c2"] == (
        "The outcome of this tool call is unknown: it may or may not have taken effect (the worker died). "
        "Check before repeating it."
    )


async def test_effects_come_from_policy_then_metadata_then_the_default(
    model_server: ScriptedModelServer,
) -> None:
    key = "effects"
    names = ["mcp_read", "mcp_put", "mcp_other", "declared", "plain", "needs_ok", "pinned"]
    model_server.script(key, [ModelReply.call(*(ScriptedToolCall(f"c{i}", n) for i, n in enumerate(names)))])
    agent = chat_agent(model_server, key)

    def tool(
        name: str, metadata: dict[str, object] | None = None, *, requires_approval: bool = False
    ) -> None:
        def run() -> str:
            return name

        agent.tool_plain(name=name, metadata=metadata, requires_approval=requires_approval)(run)

    tool("mcp_read", {"annotations": {"readOnlyHint": True, "idempotentHint": False}})
    tool("mcp_put", {"annotations": {"readOnlyHint": False, "idempotentHint": True}})
    tool("mcp_other", {"annotations": {"destructiveHint": False}})
    tool("declared", {"sessionflow_effect": "idempotent_write"})
    tool("plain")
    tool("needs_ok", {"sessionflow_effect": "read"}, requires_approval=True)
    tool("pinned", {"sessionflow_effect": "read"})
    options = AgentSessionOptions(
        tool_policies={"pinned": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)},
        default_tool_effect=ToolEffect.UNCLASSIFIED,
    )
    runner = PydanticAIRunner(agent)
    outcome = await runner.run_model_step(
        context(stored([runner.build_user_message("go")]), PlayedTurn(), run_state=None, options=options)
    )
    assert isinstance(outcome, ToolCallsRequested)
    policies = {
        c.tool_name: (c.policy.effect, c.policy.is_approval_required or c.framework_approval == "required")
        for c in outcome.tool_calls
    }
    # `requires_approval=True` asks as Pydantic AI's own rule, on top of the floor.
    assert {c.tool_name for c in outcome.tool_calls if c.framework_approval} == {"needs_ok"}
    assert policies == {
        "mcp_read": (ToolEffect.READ, False),
        "mcp_put": (ToolEffect.IDEMPOTENT_WRITE, False),
        "mcp_other": (ToolEffect.UNCLASSIFIED, True),
        "declared": (ToolEffect.IDEMPOTENT_WRITE, False),
        "plain": (ToolEffect.UNCLASSIFIED, True),
        "needs_ok": (ToolEffect.READ, True),
        "pinned": (ToolEffect.NON_IDEMPOTENT_WRITE, False),
    }


def test_mcp_annotations_without_a_true_hint_leave_the_effect_to_the_session() -> None:
    # The core's one mapping answers None for "no hint", so `default_tool_effect` decides.
    def effect(annotations: dict[str, object]) -> ToolEffect | None:
        return framework_effect(ToolDefinition(name="t", metadata={"annotations": annotations}))

    assert effect({"destructiveHint": False}) is None
    assert effect({"readOnlyHint": False, "idempotentHint": False}) is None
    assert effect({"idempotentHint": True}) is ToolEffect.IDEMPOTENT_WRITE
    options = AgentSessionOptions(default_tool_effect=ToolEffect.READ)
    assert options.resolve_tool_policy("t", effect({"destructiveHint": False})).effect is ToolEffect.READ


class City(BaseModel):
    name: str
    population: int


async def test_structured_output_is_stored_with_its_json_text(model_server: ScriptedModelServer) -> None:
    key = "structured"
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("c1", "census", {"city": "Oslo"})),
            ModelReply.call(ScriptedToolCall("o1", "final_result", {"name": "Oslo", "population": 709000})),
        ],
    )
    agent = Agent(chat_model(model_server, key), output_type=City)

    @agent.tool_plain
    def census(city: str) -> int:
        return 709000

    played = await play_turn(PydanticAIRunner(agent), "how big is Oslo?")
    assert len(model_server.requests(key)) == 2
    assert model_server.requests(key)[0].tool_names() == ["census", "final_result"]
    final = [m for m in played.completed.new_messages if m.role.value == "assistant"][-1]
    assert json.loads(final.text or "") == {"name": "Oslo", "population": 709000}
    assert played.records["c1"].output == "709000"


async def test_an_output_tool_next_to_function_tools_is_processed_after_them(
    model_server: ScriptedModelServer,
) -> None:
    key = "mixed"
    model_server.script(
        key,
        [
            ModelReply.call(
                ScriptedToolCall("c1", "census", {"city": "Oslo"}),
                ScriptedToolCall("o1", "final_result", {"name": "Oslo", "population": 1}),
            )
        ],
    )
    agent = Agent(chat_model(model_server, key), output_type=City)

    @agent.tool_plain
    def census(city: str) -> int:
        return 1

    played = await play_turn(PydanticAIRunner(agent), "how big is Oslo?")
    first, last = played.outcomes
    assert isinstance(first, ToolCallsRequested) and [c.tool_name for c in first.tool_calls] == ["census"]
    assert isinstance(last, TurnCompleted) and last.usage.requests == 0
    assert len(model_server.requests(key)) == 1
    assert json.loads(last.new_messages[0].text or "") == {"name": "Oslo", "population": 1}


async def test_rejected_output_is_asked_again_in_a_model_step_of_its_own(
    model_server: ScriptedModelServer,
) -> None:
    key = "bad-output"
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("o1", "final_result", {"name": "Oslo"})),
            ModelReply.call(ScriptedToolCall("o2", "final_result", {"name": "Oslo", "population": 709000})),
        ],
    )
    agent = Agent(chat_model(model_server, key), output_type=City)
    played = await play_turn(PydanticAIRunner(agent), "how big is Oslo?")

    # One request per step: the refused answer's retry request went out in the next step.
    assert [type(o).__name__ for o in played.outcomes] == ["ContinueRequested", "TurnCompleted"]
    requests = model_server.requests(key)
    assert len(requests) == 2
    retry = requests[1].body["messages"][-1]
    assert retry["role"] == "tool" and retry["tool_call_id"] == "o1"
    # What plain Pydantic AI sends for it (chat completions): the validation errors as JSON.
    assert json.loads(retry["content"])["error"][0]["loc"] == ["population"]
    answer = [m for m in played.messages if m.role.value == "assistant"][-1]
    assert json.loads(answer.text or "") == {"name": "Oslo", "population": 709000}


async def test_output_retries_are_counted_across_steps(model_server: ScriptedModelServer) -> None:
    key = "bad-output-twice"
    bad = [ModelReply.call(ScriptedToolCall(f"o{n}", "final_result", {"name": "Oslo"})) for n in (1, 2)]
    model_server.script(key, bad)
    agent = Agent(chat_model(model_server, key), output_type=City)  # one output retry, the default
    with pytest.raises(TurnAborted, match=r"Exceeded maximum output retries \(1\)"):
        await play_turn(PydanticAIRunner(agent), "how big is Oslo?")
    assert len(model_server.requests(key)) == 2


def flaky_city_agent(model_server: ScriptedModelServer, key: str, ran: list[str]) -> Agent[None, str]:
    agent = Agent(chat_model(model_server, key))

    @agent.tool_plain
    def population(city: str) -> str:
        ran.append(city)
        if city != "Oslo":
            raise ModelRetry(f"no city named {city!r}; use the English name")
        return "709000"

    return agent


async def test_a_tools_model_retry_reaches_the_model_as_a_retry(model_server: ScriptedModelServer) -> None:
    key = "tool-retry"
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("c1", "population", {"city": "Osló"})),
            ModelReply.call(ScriptedToolCall("c2", "population", {"city": "Oslo"})),
            ModelReply.say("709,000 people."),
        ],
    )
    ran: list[str] = []
    played = await play_turn(PydanticAIRunner(flaky_city_agent(model_server, key, ran)), "how big is Oslo?")

    assert ran == ["Osló", "Oslo"]
    assert played.records["c1"].status is AgentToolCallStatus.FAILED
    retry = model_server.requests(key)[1].body["messages"][-1]
    assert retry == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": '{"error":"no city named \'Osló\'; use the English name"}',
    }
    stored = load_messages(m.framework_item for m in played.messages)
    parts = [p for m in stored for p in m.parts if isinstance(p, ToolReturnPart)]
    part = next(p for p in parts if p.tool_call_id == "c1")
    assert (part.outcome, part.retry) == ("retried", RetryInfo("model_retry", attempt=1, max_retries=1))


async def test_a_tool_that_retries_past_its_budget_ends_the_turn_as_pydantic_ai_does(
    model_server: ScriptedModelServer,
) -> None:
    key = "tool-retry-spent"
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("c1", "population", {"city": "Osló"})),
            ModelReply.call(ScriptedToolCall("c2", "population", {"city": "Ósló"})),
        ],
    )
    ran: list[str] = []
    with pytest.raises(TurnAborted, match=r"Tool 'population' exceeded max retries count of 1\."):
        await play_turn(PydanticAIRunner(flaky_city_agent(model_server, key, ran)), "how big is Oslo?")
    # The second failure is charged before any third request, as in the plain run.
    assert ran == ["Osló", "Ósló"] and len(model_server.requests(key)) == 2


@dataclass
class Shop:
    name: str
    builds: list[int]


@dataclass
class Holder:
    """State (`name`) beside a resource (`lock`) that cannot be stored."""

    name: str = "x"
    lock: Any = None


async def test_deps_are_built_once_and_live_for_the_run(model_server: ScriptedModelServer) -> None:
    key = "deps"
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("c1", "rename", {"name": "Bolt"})),
            ModelReply.say("Renamed."),
            ModelReply.call(ScriptedToolCall("c2", "whoami")),
            ModelReply.say("You are Bolt."),
        ],
    )
    agent = Agent(
        chat_model(model_server, key),
        deps_type=Shop,
        instructions=lambda ctx: f"You work for {ctx.deps.name}.",
    )
    built: list[int] = []

    @agent.tool
    def rename(ctx: RunContext[Shop], name: str) -> str:
        ctx.deps.name = name
        return "renamed"

    @agent.tool
    def whoami(ctx: RunContext[Shop]) -> str:
        return f"{ctx.deps.name} #{ctx.deps.builds[-1]}"

    def make_deps() -> Shop:
        built.append(len(built) + 1)
        return Shop(name="Acme", builds=list(built))

    runner = PydanticAIRunner(agent, deps_factory=make_deps)
    first = await play_turn(runner, "call yourself Bolt")
    history = stored(first.messages)
    second = await play_turn(runner, "who are you?", history=history, carried_state=first.completed.carry)
    assert built == [1]  # once, for the session's first step
    # The tool's change reached the next model step, and the next turn (carry) with its tool.
    requests = model_server.requests(key)
    assert [r.saw("You work for Bolt.") for r in requests] == [False, True, True, True]
    assert second.records["c2"].output == "Bolt #1"
    assert first.completed.framework_state == {"output": "Renamed.", "deps": {"name": "Bolt", "builds": [1]}}


async def test_deps_that_cannot_be_stored_are_refused_with_the_reason(
    model_server: ScriptedModelServer,
) -> None:
    model_server.script("deps-bad", [ModelReply.say("never")])
    agent = Agent(chat_model(model_server, "deps-bad"), deps_type=Holder)
    runner = PydanticAIRunner(agent, deps_factory=lambda: Holder(lock=threading.Lock()))
    with pytest.raises(UnsupportedOptionError, match=r"deps_factory.*Holder.*deps_resources"):
        await play_turn(runner, "hi")


async def test_resource_fields_come_from_the_worker_and_are_never_stored(
    model_server: ScriptedModelServer,
) -> None:
    key = "deps-resources"
    model_server.script(key, [ModelReply.call(ScriptedToolCall("c1", "locked")), ModelReply.say("ok")])
    agent = Agent(chat_model(model_server, key), deps_type=Holder)
    opened: list[str] = []

    @agent.tool
    def locked(ctx: RunContext[Holder]) -> str:
        with ctx.deps.lock:
            return f"held {ctx.deps.name}"

    @asynccontextmanager
    async def worker_lock() -> AsyncGenerator[Mapping[str, Any]]:
        opened.append("open")
        yield {"lock": threading.Lock()}
        opened.append("closed")

    runner = PydanticAIRunner(agent, deps_factory=lambda: Holder(name="db"), deps_resources=worker_lock)
    async with runner.worker_scope():
        played = await play_turn(runner, "hi")
        assert opened == ["open"]  # once for the worker, not per step
    assert opened == ["open", "closed"]
    assert played.records["c1"].output == "held db"
    requested = played.outcomes[0]
    assert isinstance(requested, ToolCallsRequested)
    state = json.loads(requested.framework_run_state)
    assert state["deps"] == {"name": "db"}  # the lock is the worker's, never stored


async def test_overrides_replace_model_and_instructions_per_step(model_server: ScriptedModelServer) -> None:
    model_server.script("default", [ModelReply.say("from default")])
    model_server.script("other", [ModelReply.say("from other")])
    agent = chat_agent(model_server, "default", instructions="Agent instructions.")

    def pick_model(turn: AgentTurnContext) -> Model | None:
        return (
            chat_model(model_server, "other", "m2") if turn.session_settings.get("model") == "other" else None
        )

    runner = PydanticAIRunner(
        agent,
        model_override=pick_model,
        instructions_override=lambda turn: turn.session_settings.get("instructions"),
    )
    plain = await play_turn(runner, "hi")
    assert plain.completed.new_messages[-1].text == "from default"
    assert model_server.requests("default")[0].saw("Agent instructions.")
    switched = await play_turn(runner, "hi", session_settings={"model": "other", "instructions": "Be terse."})
    assert switched.completed.new_messages[-1].text == "from other"
    other = model_server.requests("other")[0]
    assert other.model == "m2" and other.saw("Be terse.") and not other.saw("Agent instructions.")


async def test_system_prompt_is_sent_on_every_turn_but_never_stored(
    model_server: ScriptedModelServer,
) -> None:
    key = "system"
    model_server.script(key, [ModelReply.say("one"), ModelReply.say("two")])
    runner = PydanticAIRunner(chat_agent(model_server, key, system_prompt="You are terse."))
    first = await play_turn(runner, "a")
    await play_turn(runner, "b", history=stored(first.messages))
    assert [r.sent_texts()[0] for r in model_server.requests(key)] == ["You are terse.", "You are terse."]
    assert "You are terse." not in json.dumps([m.framework_item for m in first.messages])


def test_run_state_of_another_version_is_refused() -> None:
    with pytest.raises(ValueError, match="version"):
        RunState.from_json(json.dumps({"version": 99, "messages": [], "deferred": []}))


PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108020000009077"
    "53de0000000c4944415408d763f8cfc000000301010018dd8db00000000049454e44ae426082"
)


@pytest.mark.parametrize(
    ("api", "wire"), [("chat_completions", "openai"), ("anthropic_messages", "anthropic")]
)
async def test_images_are_stored_as_references_and_sent_as_bytes(
    model_server: ScriptedModelServer, tmp_path: Path, api: ModelApi, wire: str
) -> None:
    key = f"image-{api}"
    model_server.script(key, [ModelReply.say("a red pixel")])
    image = tmp_path / "pixel.png"
    image.write_bytes(PNG)
    runner = PydanticAIRunner(
        Agent(model_for_api(api, "m", base_url=model_server.base_url(key, wire), api_key="k"))
    )
    message = runner.build_user_message_with_images(
        "what is this?", [ImageInput(path=str(image), media_type="image/png")]
    )
    assert message.text == "what is this?" and base64.b64encode(PNG).decode() not in json.dumps(
        message.framework_item
    )
    outcome = await runner.run_model_step(context(stored([message]), PlayedTurn(), run_state=None))
    assert isinstance(outcome, TurnCompleted) and outcome.new_messages[-1].text == "a red pixel"
    [request] = model_server.requests(key)
    assert base64.b64encode(PNG).decode() in json.dumps(request.body)
    assert request.last_user_text() == "what is this?"


async def test_concurrent_steps_of_different_sessions_keep_their_own_overrides(
    model_server: ScriptedModelServer,
) -> None:
    names = [f"s{i}" for i in range(6)]
    for name in names:
        model_server.script(name, [ModelReply.say(f"answer {name}", delay_seconds=0.2)])
    agent = chat_agent(model_server, "unused", instructions="Agent instructions.")
    runner = PydanticAIRunner(
        agent,
        model_override=lambda turn: chat_model(model_server, str(turn.session_settings["key"])),
        instructions_override=lambda turn: f"Instructions for {turn.session_settings['key']}.",
    )
    played = await asyncio.gather(
        *(play_turn(runner, "hi", session_settings={"key": name}, flow_id=name) for name in names)
    )
    assert [p.completed.new_messages[-1].text for p in played] == [f"answer {n}" for n in names]
    for name in names:
        [request] = model_server.requests(name)
        assert request.saw(f"Instructions for {name}.") and not request.saw("Agent instructions.")
