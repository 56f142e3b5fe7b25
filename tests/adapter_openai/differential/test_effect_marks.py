"""`sessionflow.effect` on OpenAI function tools: the session reads the mark; the plain SDK does not see it.

The harness's session treats an unmarked tool as a read (its default effect, as plain asks
nobody), so a mark shows where it asks: ``delete_note`` is marked a non-idempotent write
above ``@function_tool`` (on the `FunctionTool`), ``send_mail`` an idempotent write whose
whole policy asks, below it (on the function). ``get_note`` is unmarked.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from agents import Agent, function_tool

import sessionflow
from sessionflow import ToolEffect, ToolPolicy
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_openai.differential.harness import (
    Built,
    Models,
    Scenario,
    run_plain,
    run_session,
    unique,
)

T = TypeVar("T")

ASKS = ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=True)


def _build(marked: bool) -> Any:
    def mark(effect: ToolEffect | str, policy: ToolPolicy | None = None) -> Callable[[T], T]:
        def apply(target: T) -> T:
            return sessionflow.tool_effect(effect, policy=policy)(target) if marked else target

        return apply

    def build(models: Models, log: InvocationLog) -> Built:
        @function_tool
        def get_note(title: str) -> str:
            """Read a note."""
            log.record("tool", "get_note", title=title)
            return f"note {title}: buy milk"

        @mark("non_idempotent_write")
        @function_tool
        def delete_note(title: str) -> str:
            """Delete a note."""
            log.record("tool", "delete_note", title=title)
            return f"deleted {title}"

        @function_tool
        @mark(ToolEffect.IDEMPOTENT_WRITE, ASKS)
        def send_mail(to: str) -> str:
            """Send the notes by mail."""
            log.record("tool", "send_mail", to=to)
            return f"sent to {to}"

        agent = Agent[Any](
            name="Notes",
            instructions="Keep notes.",
            tools=[get_note, delete_note, send_mail],
            model=models.model(),
        )
        return Built(agent)

    return build


_SCRIPT = [
    ModelReply.call(ScriptedToolCall("call_get", "get_note", {"title": "shopping"})),
    ModelReply.call(ScriptedToolCall("call_delete", "delete_note", {"title": "shopping"})),
    ModelReply.call(ScriptedToolCall("call_send", "send_mail", {"to": "me@example.com"})),
    ModelReply.say("Done."),
]


def _scenario(marked: bool, approvals: list[bool]) -> Scenario:
    return Scenario(
        name="marks" if marked else "unmarked",
        build=_build(marked),
        script=_SCRIPT,
        turns=["read the shopping note, delete it, mail me"],
        approvals=approvals,
    )


async def test_marked_writes_ask_and_plain_sees_no_difference(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("oa-marks")
    unmarked = await run_plain(_scenario(False, []), model_server, f"{key}-plain-u", tmp_path / "pu")
    plain = await run_plain(_scenario(True, []), model_server, f"{key}-plain", tmp_path / "p")
    session = await run_session(
        _scenario(True, [True, True]), model_server, f"{key}-session", tmp_path / "s", temporal_address
    )

    # The plain SDK runs the marked tools exactly as the unmarked ones, asking nobody.
    assert plain.problems == [] and unmarked.problems == []
    assert plain.requests == unmarked.requests
    assert plain.tool_runs == unmarked.tool_runs
    assert plain.outputs == unmarked.outputs == ["Done."]
    assert plain.asked == unmarked.asked == []
    assert [run["name"] for run in plain.tool_runs] == ["get_note", "delete_note", "send_mail"]

    # The session asks about both marked writes (one by its effect, one by its whole
    # policy), not about the unmarked tool, and otherwise runs as plain.
    assert session.problems == []
    assert session.asked == [
        ("delete_note", '{"title":"shopping"}'),
        ("send_mail", '{"to":"me@example.com"}'),
    ]
    assert session.requests == plain.requests
    assert session.tool_runs == plain.tool_runs
    assert session.outputs == plain.outputs
