"""Strands interrupts, plain and as sessions on one scripted server.

Plain Strands stops at ``event.interrupt(...)`` (a ``BeforeToolCallEvent`` hook) or
``tool_context.interrupt(...)`` (a tool) with ``stop_reason == "interrupt"``, and the caller
resumes it with ``[{"interruptResponse": ...}]``. A session asks the same as a question under
its floor, and the answer reaches the hook or tool as that response. Compared: the model
requests call by call, the final messages, the real tool runs, and how often the hook ran.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from strands import Agent, ToolContext, tool  # pyright: ignore[reportUnknownVariableType]
from strands.hooks import BeforeToolCallEvent, HookProvider, HookRegistry
from strands.models import Model

from sessionflow import AgentInterrupt, AgentSessionClient, Rejection
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.temporal import read_step_history
from sessionflow.testing import InvocationLog
from sessionflow_strands._messages import load_message
from tests.adapter_strands.harness import (
    Run,
    _model_fields,  # pyright: ignore[reportPrivateUsage]
    _requests,  # pyright: ignore[reportPrivateUsage]
    model_for,
    session_flow,
    tool_runs,
    unique,
)
from tests.serving import serving

Answers = Mapping[str, Any]
"""The person's answer by interrupt name (plain's response; the session's answer, or a
`Rejection` to decline)."""


class ApprovalHook(HookProvider):
    """Strands' docs ("Interrupts"): a hook that asks before ``delete_files`` runs."""

    def __init__(self, log: InvocationLog) -> None:
        self.log = log

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.approve)

    def approve(self, event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] != "delete_files":
            return
        self.log.record("hook", "approve", call=event.tool_use["toolUseId"])
        paths = cast(dict[str, Any], event.tool_use["input"])["paths"]
        approval = event.interrupt("myapp-approval", reason={"paths": paths})
        if str(approval).lower() != "y":
            event.cancel_tool = "User denied permission to delete files"


def approval_agent(model: Model, log: InvocationLog) -> Agent:
    @tool
    def delete_files(paths: list[str]) -> str:
        """Delete files.

        Args:
            paths: The files to delete
        """
        log.record("tool", "delete_files", paths=paths)
        return f"deleted {len(paths)} file(s)"

    @tool
    def list_files(folder: str) -> list[str]:
        """List a folder.

        Args:
            folder: The folder
        """
        log.record("tool", "list_files", folder=folder)
        return ["a.txt", "b.txt"]

    return Agent(
        model=model,
        tools=[delete_files, list_files],
        hooks=[ApprovalHook(log)],
        system_prompt="You delete objects given their keys.",
        callback_handler=None,
    )


def asking_tool_agent(model: Model, log: InvocationLog) -> Agent:
    """A tool that asks twice (``tool_context.interrupt``), one question after the other."""

    @tool(context=True)
    def transfer(amount: int, tool_context: ToolContext) -> str:
        """Transfer money.

        Args:
            amount: How much
        """
        log.record("tool-start", "transfer", amount=amount)
        account = tool_context.interrupt("account", reason="Which account should I use?")
        confirm = tool_context.interrupt("confirm", reason=f"Send {amount} from {account}?")
        if confirm != "yes":
            return "not sent"
        tool_context.agent.state.set("last_account", account)
        log.record("tool", "transfer", amount=amount, account=account)
        return f"sent {amount} from {account}"

    return Agent(model=model, tools=[transfer], system_prompt="You move money.", callback_handler=None)


async def run_plain(
    build: Callable[[Model, InvocationLog], Agent],
    script: list[ModelReply],
    prompt: str,
    answers: Answers,
    server: ScriptedModelServer,
    key: str,
    log_dir: Path,
) -> tuple[Run, list[dict[str, Any]]]:
    """Strands' own loop: invoke, and while it stops at interrupts, resume with the responses."""
    server.script(key, script)
    log = InvocationLog(log_dir / "plain.jsonl")
    agent = build(model_for(server.url, key), log)
    result = await agent.invoke_async(prompt)
    while result.stop_reason == "interrupt":
        responses: list[Any] = [
            {"interruptResponse": {"interruptId": i.id, "response": answers[i.name]}}
            for i in result.interrupts or []
        ]
        result = await agent.invoke_async(responses)
    run = Run(
        requests=_requests(server, key),
        messages=[_model_fields(cast(dict[str, Any], m)) for m in agent.messages],
        state=agent.state.get() or {},
        tool_runs=tool_runs(log),
    )
    return run, hook_runs(log)


async def run_session(
    build: Callable[[Model, InvocationLog], Agent],
    script: list[ModelReply],
    prompt: str,
    answers: Answers,
    server: ScriptedModelServer,
    key: str,
    log_dir: Path,
    temporal_address: str,
) -> tuple[Run, list[dict[str, Any]], list[AgentInterrupt]]:
    """The same agent as a session: every interrupt answered through ``run_turn``'s callback."""
    server.script(key, script)
    log = InvocationLog(log_dir / "session.jsonl")
    agent = build(model_for(server.url, key), log)
    asked: list[AgentInterrupt] = []

    def on_interrupt(interrupt: AgentInterrupt) -> Any:
        asked.append(interrupt)
        return answers[_name_of(interrupt)]

    async with serving(temporal_address, session_flow(agent, key)) as sessions:
        result = await sessions.run_turn(key, prompt, on_interrupt=on_interrupt, timeout=90)
        assert result.ok, (result.status, result.error)
        run = await _session_run(sessions, key, server, log)
    return run, hook_runs(log), asked


def _name_of(interrupt: AgentInterrupt) -> str:
    """The Strands interrupt a question stands for, by its words (the tests' reasons are distinct)."""
    question = interrupt.question or ""
    if "paths" in question:
        return "myapp-approval"
    return "account" if question.startswith("Which account") else "confirm"


async def _session_run(
    sessions: AgentSessionClient, key: str, server: ScriptedModelServer, log: InvocationLog
) -> Run:
    stored = await sessions.stored_messages(key)
    history = await read_step_history(sessions.client, key)
    model_steps = [s for s in history if s.step_type == "sessionflow.RunModel"]
    snapshot = await sessions.get_agent_snapshot(key)
    view = snapshot.framework_state or {}
    return Run(
        requests=_requests(server, key),
        messages=[_model_fields(load_message(m.message.framework_item)) for m in stored],
        state=cast(dict[str, Any], view.get("agent_state") or {}),
        tool_runs=tool_runs(log),
        model_steps=len(model_steps),
        snapshot=snapshot,
    )


def hook_runs(log: InvocationLog) -> list[dict[str, Any]]:
    return [
        {"kind": e["kind"], "name": e["name"]}
        for e in log.entries()
        if e.get("kind") in ("hook", "tool-start")
    ]


def assert_same(plain: Run, session: Run) -> None:
    assert len(session.requests) == len(plain.requests)
    for number, (p, s) in enumerate(zip(plain.requests, session.requests, strict=True), 1):
        assert s == p, f"model request {number} differs:\nplain   {json.dumps(p)}\nsession {json.dumps(s)}"
    assert session.messages == plain.messages
    assert session.state == plain.state
    assert session.tool_runs == plain.tool_runs


DELETE_SCRIPT = [
    ModelReply(
        tool_calls=[
            ScriptedToolCall(id="d1", name="delete_files", arguments={"paths": ["a.txt"]}),
            ScriptedToolCall(id="l1", name="list_files", arguments={"folder": "/tmp"}),
        ]
    ),
    ModelReply(text="Done."),
]


async def test_hook_interrupt_approved_runs_the_tool_once_as_plain(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    key = unique("strands-interrupt-yes")
    prompt = "delete object with key 'a.txt' and list /tmp"
    answers = {"myapp-approval": "y"}
    plain, plain_hooks = await run_plain(
        approval_agent, DELETE_SCRIPT, prompt, answers, model_server, f"{key}-plain", tmp_path
    )
    session, session_hooks, asked = await run_session(
        approval_agent, DELETE_SCRIPT, prompt, answers, model_server, key, tmp_path, temporal_address
    )
    assert_same(plain, session)
    assert sorted(r["name"] for r in session.tool_runs) == ["delete_files", "list_files"]
    # The hook ran twice, as in plain: once to ask, once with the answer.
    assert session_hooks == plain_hooks == [{"kind": "hook", "name": "approve"}] * 2
    # One question, about the real call: its tool and arguments, the hook's reason as JSON.
    assert [(i.kind, i.tool_name, json.loads(i.arguments)) for i in asked] == [
        ("question", "delete_files", {"paths": ["a.txt"]})
    ]
    assert asked[0].question == 'myapp-approval: {"paths": ["a.txt"]}'
    # No model call while the interrupt waited: plain's two requests, in three model steps
    # (the one between asks the question and calls no model).
    assert session.model_steps == 3
    # As Strands resumes: the result it kept first, the resumed call's after it.
    results = session.messages[2]["content"]
    assert [r["toolResult"]["toolUseId"] for r in results] == ["l1", "d1"]
    assert results[1]["toolResult"]["status"] == "success"


async def test_hook_interrupt_answered_no_cancels_the_tool_as_plain(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    key = unique("strands-interrupt-no")
    prompt = "delete object with key 'a.txt' and list /tmp"
    answers = {"myapp-approval": "n"}
    plain, _ = await run_plain(
        approval_agent, DELETE_SCRIPT, prompt, answers, model_server, f"{key}-plain", tmp_path
    )
    session, _, _ = await run_session(
        approval_agent, DELETE_SCRIPT, prompt, answers, model_server, key, tmp_path, temporal_address
    )
    assert_same(plain, session)
    assert [r["name"] for r in session.tool_runs] == ["list_files"]
    cancelled = session.messages[2]["content"][1]["toolResult"]
    assert cancelled["status"] == "error"
    assert cancelled["content"] == [{"text": "User denied permission to delete files"}]


async def test_a_declined_interrupt_never_runs_the_tool(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    """Declining the question (no plain counterpart: plain can only answer) resumes nothing:
    the hook is not asked again, the tool never runs, and the model gets the refusal."""
    key = unique("strands-interrupt-declined")
    answers = {"myapp-approval": Rejection(message="not today")}
    session, hooks, asked = await run_session(
        approval_agent, DELETE_SCRIPT, "delete a.txt", answers, model_server, key, tmp_path, temporal_address
    )
    assert len(asked) == 1
    assert [r["name"] for r in session.tool_runs] == ["list_files"]
    assert hooks == [{"kind": "hook", "name": "approve"}]
    refused = session.messages[2]["content"][1]["toolResult"]
    assert refused["toolUseId"] == "d1"
    assert refused["status"] == "error"
    assert "not today" in refused["content"][0]["text"]
    # The model was sent the refusal as the call's result.
    sent = [m for m in session.requests[1]["messages"] if m.get("tool_call_id") == "d1"]
    assert len(sent) == 1 and "not today" in str(sent[0]["content"])


async def test_tool_context_interrupts_asked_in_turn_resume_the_tool_as_plain(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    key = unique("strands-tool-interrupt")
    script = [
        ModelReply(tool_calls=[ScriptedToolCall(id="t1", name="transfer", arguments={"amount": 30})]),
        ModelReply(text="Sent."),
    ]
    answers = {"account": "savings", "confirm": "yes"}
    plain, plain_starts = await run_plain(
        asking_tool_agent, script, "send 30", answers, model_server, f"{key}-plain", tmp_path
    )
    session, session_starts, asked = await run_session(
        asking_tool_agent, script, "send 30", answers, model_server, key, tmp_path, temporal_address
    )
    assert_same(plain, session)
    assert session.tool_runs == [{"name": "transfer", "amount": 30, "account": "savings"}]
    # The tool started three times in both: asked, asked again with one answer, finished.
    assert session_starts == plain_starts == [{"kind": "tool-start", "name": "transfer"}] * 3
    assert [i.question for i in asked] == ["Which account should I use?", "Send 30 from savings?"]
    assert session.state == {"last_account": "savings"}
    assert session.model_steps == 4  # two model calls, and a step for each question


class TwoAsksHook(HookProvider):
    """Two callbacks that both interrupt the same call: Strands collects both at once."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.first)
        registry.add_callback(BeforeToolCallEvent, self.second)

    def first(self, event: BeforeToolCallEvent) -> None:
        event.interrupt("first", reason="first?")

    def second(self, event: BeforeToolCallEvent) -> None:
        event.interrupt("second", reason="second?")


def two_asks_agent(model: Model, log: InvocationLog) -> Agent:
    agent = approval_agent(model, log)
    agent.hooks.add_hook(TwoAsksHook())
    return agent


async def test_two_interrupts_of_one_call_at_once_fail_the_turn_with_the_reason(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    key = unique("strands-two-interrupts")
    model_server.script(key, DELETE_SCRIPT)
    log = InvocationLog(tmp_path / "session.jsonl")
    agent = two_asks_agent(model_for(model_server.url, key), log)
    async with serving(temporal_address, session_flow(agent, key)) as sessions:
        result = await sessions.run_turn(key, "delete a.txt", on_interrupt=lambda _: "y", timeout=90)
    assert not result.ok
    assert (
        result.error is not None
        and "stopped at 3 Strands interrupts at once ('myapp-approval', 'first', 'second')" in result.error
    )
    assert log.count("tool") == 0, log.entries()  # every call was interrupted: no tool ran
