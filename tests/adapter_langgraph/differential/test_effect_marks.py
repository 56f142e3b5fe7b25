"""`sessionflow.effect` on LangChain tools: the session reads the mark; plain LangGraph does not see it.

The harness's session treats an unmarked tool as a read (its default effect, as plain asks
nobody), so a mark shows where it asks: ``delete_note`` is marked a non-idempotent write
above LangChain's ``@tool`` (on the `StructuredTool`), ``archive_note`` below it (on the
function the tool runs) with a whole policy that asks. ``get_note`` is unmarked. The
session is given one review per marked write: a call that asked beyond them, or a review
left over, is an error of its run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import ToolNode, tools_condition

import sessionflow
from sessionflow import ToolEffect, ToolPolicy
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.harness import (
    Built,
    Review,
    Scenario,
    run_plain,
    run_session,
    unique,
)
from tests.adapter_langgraph.differential.test_tool_nodes import chatbot_graph

T = TypeVar("T")

ASKS = ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=True)


def _tools(log: InvocationLog, *, marked: bool) -> list[BaseTool]:
    def mark(effect: ToolEffect | str, policy: ToolPolicy | None = None) -> Callable[[T], T]:
        def apply(target: T) -> T:
            return sessionflow.tool_effect(effect, policy=policy)(target) if marked else target

        return apply

    @tool
    def get_note(title: str) -> str:
        """Read a note."""
        log.record("tool", "get_note", title=title)
        return f"note {title}: buy milk"

    @mark("non_idempotent_write")
    @tool
    def delete_note(title: str) -> str:
        """Delete a note."""
        log.record("tool", "delete_note", title=title)
        return f"deleted {title}"

    @tool
    @mark(ToolEffect.IDEMPOTENT_WRITE, ASKS)
    def archive_note(title: str) -> str:
        """Archive a note."""
        log.record("tool", "archive_note", title=title)
        return f"archived {title}"

    return [get_note, delete_note, archive_note]


def _build(marked: bool) -> Any:
    def build(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
        tools = _tools(log, marked=marked)
        builder = chatbot_graph(model, tools, ToolNode(tools), tools_condition)
        return Built(builder.compile(checkpointer=checkpointer), tools)  # pyright: ignore[reportUnknownMemberType]

    return build


_SCRIPT = [
    ModelReply.call(ScriptedToolCall("call_get", "get_note", {"title": "shopping"})),
    ModelReply.call(ScriptedToolCall("call_delete", "delete_note", {"title": "shopping"})),
    ModelReply.call(ScriptedToolCall("call_archive", "archive_note", {"title": "todo"})),
    ModelReply.say("Done."),
]


def _scenario(marked: bool, reviews: list[Review]) -> Scenario:
    return Scenario(
        name="marks" if marked else "unmarked",
        build=_build(marked),
        script=_SCRIPT,
        turns=["read the shopping note, delete it, archive todo"],
        reviews=reviews,
    )


async def test_marked_writes_ask_and_plain_sees_no_difference(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("lg-marks")
    unmarked = await run_plain(_scenario(False, []), model_server, f"{key}-plain-u", tmp_path / "pu")
    plain = await run_plain(_scenario(True, []), model_server, f"{key}-plain", tmp_path / "p")
    approve = Review(kind="approve")
    session = await run_session(
        _scenario(True, [approve, approve]), model_server, f"{key}-session", tmp_path / "s", temporal_address
    )

    # Plain LangGraph runs the marked tools exactly as the unmarked ones.
    assert plain.errors == [] and unmarked.errors == []
    assert plain.requests == unmarked.requests
    assert plain.tool_runs == unmarked.tool_runs
    assert plain.state == unmarked.state
    assert [run["name"] for run in plain.tool_runs] == ["get_note", "delete_note", "archive_note"]

    # The session asked exactly twice (both reviews used, no call left waiting): the two
    # marked writes, as the unmarked read ran first without asking; otherwise it ran as plain.
    assert session.errors == []
    assert session.requests == plain.requests
    assert session.tool_runs == plain.tool_runs
