"""Model fallback: `FallbackModel` as the agent's model, and the `ModelFallback` capability.

The first model is a conversation of its own on the scripted server (``-primary``), the one
it falls back to another (``-backup``), each with its own model name: a fallback chain skips
a model it already attempted, by name. The primary fails with HTTP 500 three times in a row
(the OpenAI SDK's own two retries, then Pydantic AI's fallback), inside one model step: the
step's request is the fallback's, as in the plain run.
"""

from __future__ import annotations

from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.capabilities import ModelFallback
from pydantic_ai.models.fallback import FallbackModel

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import Built, Models, Scenario, assert_same_run, run_both

# One failed request as the model sees it: the SDK's first try and its two retries.
FAILED_REQUEST = [ModelReply.fail("http_500")] * 3


def _with_tool(agent: Agent[None, str], log: InvocationLog) -> Agent[None, str]:
    @agent.tool_plain
    def stock(item: str) -> int:
        """How many of an item are in stock."""
        log.record("tool", "stock", item=item)
        return 4

    return agent


def fallback_model_agent(models: Models, log: InvocationLog) -> Built:
    model = FallbackModel(
        models.model("-primary", name="primary-model"), models.model("-backup", name="backup-model")
    )
    return Built(agent=_with_tool(Agent(model, instructions="Answer about stock."), log))


def model_fallback_agent(models: Models, log: InvocationLog) -> Built:
    agent = Agent(
        models.model("-primary", name="primary-model"),
        instructions="Answer about stock.",
        capabilities=[ModelFallback(models.model("-backup", name="backup-model"), sticky=True)],
    )
    return Built(agent=_with_tool(agent, log))


async def test_fallback_model_falls_back_within_the_step(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The primary fails the first request: the backup answers it with a tool call; the next
    request goes to the primary again (a `FallbackModel` starts every request at its first)."""
    scenario = Scenario(
        name="fallback-model",
        build=fallback_model_agent,
        script=[],
        side_scripts={
            "-primary": [*FAILED_REQUEST, ModelReply.say("4 apples in stock.")],
            "-backup": [ModelReply.call(ScriptedToolCall("call_stock", "stock", {"item": "apple"}))],
        },
        turns=["How many apples?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == ["4 apples in stock."]
    assert plain.tool_runs == [{"name": "stock", "item": "apple"}]
    assert len(plain.requests["-primary"]) == 4
    assert len(plain.requests["-backup"]) == 1
    # Every response says which model made it: the backup's first, then the primary's.
    assert [m["model_name"] for m in plain.history if m["kind"] == "response"] == [
        "backup-model",
        "primary-model",
    ]
    assert_same_run(plain, session)
    assert session.model_attempts == session.model_steps == 2


async def test_sticky_model_fallback_stays_on_the_backup(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """`ModelFallback(sticky=True)`: once the backup answered, the conversation stays on it,
    in the turn's later steps and in the next turn (read from the history the session stores)."""
    scenario = Scenario(
        name="model-fallback",
        build=model_fallback_agent,
        script=[],
        side_scripts={
            "-primary": FAILED_REQUEST,
            "-backup": [
                ModelReply.call(ScriptedToolCall("call_stock", "stock", {"item": "pear"})),
                ModelReply.say("4 pears in stock."),
                ModelReply.say("Still 4."),
            ],
        },
        turns=["How many pears?", "And now?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == ["4 pears in stock.", "Still 4."]
    assert len(plain.requests["-primary"]) == 3  # the first request only, never again
    assert len(plain.requests["-backup"]) == 3
    assert_same_run(plain, session)
