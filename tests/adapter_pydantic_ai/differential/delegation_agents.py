"""Agents that delegate to other agents inside a tool (Pydantic AI's multi-agent docs, "Agent delegation").

`joke_delegation` is the docs' example as written (the selection agent's ``joke_factory``
runs the generation agent with ``usage=ctx.usage``, under the docs' usage limits).
`nested_jokes` goes one level deeper: the generation agent has tools of its own, and one of
them (``pun_factory``) runs a third agent, so its model calls are journaled under
``<joke_factory call>.<pun_factory call>``. Each agent talks to a conversation of its own
(`Models`): ``""`` (selection), ``-jokes`` (generation), ``-puns`` (puns). Module level, so
crash workers rebuild them (`crash.py`).
"""

from __future__ import annotations

from pydantic_ai import Agent, RunContext, UsageLimits

import sessionflow
from sessionflow import ToolEffect, ToolPolicy
from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import Built, Models

__all__ = ["joke_delegation", "nested_jokes", "unmarked_write", "waived_write"]

LIMITS = {"usage_limits": UsageLimits(request_limit=5, total_tokens_limit=500)}
"""The docs' limits for the run: the generation agent's requests count in them (``usage=ctx.usage``)."""


def joke_delegation(models: Models, log: InvocationLog) -> Built:
    """The docs' example: ``joke_factory`` delegates to the generation agent."""
    joke_selection_agent = Agent(
        models.model(),
        instructions=(
            "Use the `joke_factory` to generate some jokes, then choose the best. "
            "You must return just a single joke."
        ),
    )
    joke_generation_agent = Agent(models.model("-jokes"), output_type=list[str])

    @joke_selection_agent.tool
    async def joke_factory(ctx: RunContext[object], count: int) -> list[str]:
        r = await joke_generation_agent.run(
            f"Please generate {count} jokes.",
            usage=ctx.usage,
        )
        log.record("tool", "joke_factory", jokes=len(r.output))
        return r.output

    return Built(agent=joke_selection_agent, run_args=LIMITS, flow_args=LIMITS)


def nested_jokes(models: Models, log: InvocationLog) -> Built:
    """Depth 2: the generation agent's own tools, one of which runs the pun agent."""
    joke_selection_agent = Agent(
        models.model(),
        instructions=(
            "Use the `joke_factory` to generate some jokes, then choose the best. "
            "You must return just a single joke."
        ),
    )
    joke_generation_agent = Agent(
        models.model("-jokes"), output_type=list[str], instructions="Use the word bank and the pun factory."
    )
    pun_agent = Agent(models.model("-puns"), output_type=list[str])

    @joke_selection_agent.tool
    async def joke_factory(ctx: RunContext[object], count: int) -> list[str]:
        r = await joke_generation_agent.run(f"Please generate {count} jokes.", usage=ctx.usage)
        log.record("tool", "joke_factory", jokes=len(r.output))
        return r.output

    @sessionflow.tool_effect("read")
    @joke_generation_agent.tool_plain
    def word_bank(topic: str) -> list[str]:
        """Words about a topic."""
        log.record("tool", "word_bank", topic=topic)
        return [f"{topic}-word-1", f"{topic}-word-2"]

    @sessionflow.tool_effect("read")
    @joke_generation_agent.tool
    async def pun_factory(ctx: RunContext[object], topic: str) -> list[str]:
        """Puns about a topic, from the pun agent."""
        r = await pun_agent.run(f"Puns about {topic}, please.", usage=ctx.usage)
        log.record("tool", "pun_factory", topic=topic, puns=len(r.output))
        return r.output

    return Built(agent=joke_selection_agent)


def unmarked_write(models: Models, log: InvocationLog) -> Built:
    """A delegated agent whose tool declares no effect: the session's floor would ask a person."""
    assistant = Agent(models.model(), instructions="Use the mailer.")
    mailer = Agent(models.model("-mailer"), instructions="Send the email.")

    @assistant.tool
    async def mail_team(ctx: RunContext[object], text: str) -> str:
        r = await mailer.run(f"Send {text!r} to the team.", usage=ctx.usage)
        log.record("tool", "mail_team")
        return r.output

    @mailer.tool_plain
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        log.record("tool", "send_email", to=to)
        return "sent"

    return Built(agent=assistant)


WAIVED = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
"""A write that runs once, and that its author lets run without a person's approval."""


def waived_write(models: Models, log: InvocationLog) -> Built:
    """A delegated agent whose tool charges a card: a non-idempotent write, approval waived."""
    assistant = Agent(models.model(), instructions="Use the booking desk.")
    desk = Agent(models.model("-desk"), instructions="Book and charge.")

    @assistant.tool
    async def book(ctx: RunContext[object], flight: str) -> str:
        r = await desk.run(f"Book {flight}.", usage=ctx.usage)
        log.record("tool", "book", flight=flight)
        return r.output

    @sessionflow.tool_effect(ToolEffect.NON_IDEMPOTENT_WRITE, policy=WAIVED)
    @desk.tool_plain
    def charge_card(amount: int) -> str:
        """Charge the card."""
        log.record("tool", "charge_card", amount=amount)
        return f"charged {amount}"

    return Built(agent=assistant)
