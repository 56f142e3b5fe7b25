"""A provider's refusal ends the turn as Pydantic AI reports it, and is never retried.

The scripted model server refuses in the wire's own shape (`ModelReply.refuse`: Chat
Completions' ``message.refusal``, streamed as ``delta.refusal``). Pydantic AI reads it,
streamed or not, as a content filter: the response has no parts, its ``finish_reason`` is
``content_filter``, and the run raises `ContentFilterError` naming the refusal. The session
ends the turn in its model step with that text (`TurnAborted`), which is never retried: one
request, as plain, and the model step ran once. Plain's next run starts from the last good
turn; the session stores the refused turn's prompt, as it stores every failed turn's (a
documented difference), so the next turn's request carries it. Asserted as such.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pydantic_ai import Agent

from sessionflow.demo import ModelReply, ScriptedModelServer
from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import (
    Built,
    Models,
    Scenario,
    assert_same_run,
    run_both,
    session_error_for,
)

REFUSAL = "I can't help with that."


def plain_agent(models: Models, log: InvocationLog) -> Built:
    return Built(agent=Agent(models.model(), instructions="Be helpful."))


async def test_a_refusal_ends_the_turn_as_a_content_filter_never_retried(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="refusal",
        build=plain_agent,
        script=[ModelReply.say("Hello."), ModelReply.refuse(REFUSAL), ModelReply.say("Sure, here it is.")],
        turns=["Hi", "Help me with something bad", "Then something good"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # Pydantic AI's text ends with the refused response's body (its timestamps, run and key),
    # which differs between any two runs: the text up to it is compared.
    heads = [error and error.partition(", body:")[0] for error in plain.errors]
    assert heads == [None, f"ContentFilterError: Content filter triggered. Refusal: {REFUSAL!r}", None]
    assert [error and error.partition(", body:")[0] for error in session.errors] == [
        None if head is None else session_error_for(head) for head in heads
    ]
    assert plain.outputs == ["Hello.", None, "Sure, here it is."]
    assert len(plain.requests[""]) == 3
    assert session.model_steps is not None and session.model_attempts == session.model_steps == 3
    # The session keeps the refused turn's prompt, a documented difference of every failed
    # turn (adapter README, "A failed turn keeps its prompt"): it is stored, and the next
    # turn's request carries it where plain's does not. The rest is plain's.
    refused = {"content": scenario.turns[1], "role": "user"}
    plain_next, session_next = plain.requests[""][2], session.requests[""][2]
    assert session_next["messages"] == [*plain_next["messages"][:-1], refused, plain_next["messages"][-1]]
    stored = [
        m
        for m in session.history
        if m["kind"] == "request" and m["parts"][0].get("content") == refused["content"]
    ]
    assert len(stored) == 1
    history = [m for m in session.history if m is not stored[0]]
    requests = {"": [*session.requests[""][:2], plain_next]}
    assert_same_run(
        replace(plain, errors=[None] * 3),
        replace(session, errors=[None] * 3, history=history, requests=requests),
    )
