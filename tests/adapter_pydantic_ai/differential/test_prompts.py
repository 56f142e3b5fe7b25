"""Instructions and system prompt functions, differential against plain Pydantic AI.

docs/agent.md's system_prompts.py and instructions.py (pydantic/pydantic-ai 4fda389) on one
agent, with a dynamic system prompt (``@agent.system_prompt(dynamic=True)``) beside them,
each function recording its calls. A plain conversation renders the system prompt functions
once, at its first request (the system prompt then sits in the history); a dynamic one again
at the start of every run (each turn), not within one; instructions functions for every
request, retries included. A session runs each exactly as often: the system prompt the
first request made travels with the session, and a turn's later steps go on with its run.
"""

from __future__ import annotations

from pathlib import Path

from pydantic_ai import Agent, ModelRetry, RunContext

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import Built, Models, Scenario, assert_same_run, run_both


def customer_agent(models: Models, log: InvocationLog) -> Built:
    agent = Agent(
        models.model(),
        deps_type=str,
        system_prompt="Use the customer's name while replying to them.",
        instructions="Be brief.",
    )

    @agent.system_prompt
    def add_the_users_name(ctx: RunContext[str]) -> str:
        log.record("hook", "add_the_users_name", run_step=ctx.run_step)
        return f"The user's name is {ctx.deps}."

    @agent.system_prompt(dynamic=True)
    def how_many_turns(ctx: RunContext[str]) -> str:
        turns = sum(
            1
            for m in ctx.messages
            if m.kind == "request" and any(p.part_kind == "user-prompt" for p in m.parts)
        )
        log.record("hook", "how_many_turns", turns=turns)
        return f"This is turn {turns}."

    @agent.instructions
    def add_the_users_name_again(ctx: RunContext[str]) -> str:
        log.record("hook", "instructions", run_step=ctx.run_step)
        return f"The user's name is {ctx.deps}."

    @agent.tool_plain
    def order_status(order_id: int) -> str:
        """Where an order is."""
        log.record("tool", "order_status", order_id=order_id)
        return f"order {order_id} shipped"

    @agent.output_validator
    def polite(output: str) -> str:
        log.record("hook", "polite", output=output)
        if "Frank" not in output:
            raise ModelRetry("Use the customer's name.")
        return output

    return Built(agent=agent, deps=lambda: "Frank")


async def test_system_prompt_and_instructions_functions_run_as_often_as_in_plain(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="prompts",
        build=customer_agent,
        script=[
            ModelReply.call(ScriptedToolCall("c1", "order_status", {"order_id": 7})),
            ModelReply.say("Frank, order 7 shipped."),
            ModelReply.say("It should arrive soon."),
            ModelReply.say("Frank, it should arrive soon."),
        ],
        turns=["Where is order 7?", "When will it arrive?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    calls = [h["name"] for h in plain.hook_runs]
    assert calls.count("add_the_users_name") == 1, "rendered once, at the conversation's first request"
    assert [h["turns"] for h in plain.hook_runs if h["name"] == "how_many_turns"] == [0, 1], "once per run"
    assert calls.count("instructions") == len(plain.requests[""]) == 4, "once per request, the retry's too"
    assert calls.count("polite") == 3
    first = plain.requests[""][0]["messages"][0]
    assert first["role"] == "system" and "Frank" in str(plain.requests[""][0]["messages"])
    assert_same_run(plain, session)
