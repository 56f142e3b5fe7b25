"""The differential harness: one Pydantic AI agent, run plainly and as a session, on one scripted model server.

A `Scenario` says how to build the agent (the same builder both times, with the models and
the tool log of that run), what the model answers, and what the user does: the turns, and
a decision for every tool call that stops for approval. `run_plain` runs the agent itself
(`agent.run` turn by turn, ``message_history=result.all_messages()`` carried into the next
turn, as Pydantic AI's docs do); `run_session` serves it as a sessionflow session on the
real Temporal dev server. `assert_same_run` compares the model requests call by call, each
turn's outcome, the message history, the approvals asked and the real tool runs.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote

from pydantic_ai import Agent, AgentRunResult, DeferredToolRequests, DeferredToolResults
from pydantic_ai.exceptions import AgentRunError
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_ai.models import Model

from sessionflow import (
    AgentMessage,
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    AgentSnapshot,
    AgentStatus,
    MessageRole,
    ToolEffect,
)
from sessionflow.demo import ModelReply, ScriptedModelServer
from sessionflow.temporal import read_step_history
from sessionflow.testing import CRASH_TIMINGS, InvocationLog, wait_for_agent_snapshot
from sessionflow_pydantic_ai import DepsResources, history_messages, pydantic_ai_session_flow
from sessionflow_pydantic_ai._models import model_for_api
from tests.adapter_pydantic_ai.differential.diff import diff, pretty
from tests.adapter_pydantic_ai.differential.normalise import json_value, normalise_history, normalise_requests
from tests.differential_compare import calls_in_parallel, tool_runs_difference
from tests.serving import serving

__all__ = [
    "TIMINGS",
    "AgentBuilder",
    "Built",
    "Models",
    "Run",
    "Scenario",
    "assert_same_run",
    "play_session",
    "run_both",
    "run_plain",
    "run_session",
    "session_flow",
]

# No crashes here, so heartbeats may be slow (as tests/adapter_pydantic_ai/test_sessions.py
# says: the first stream of a process builds the OpenAI SDK's models, blocking the loop).
TIMINGS = replace(CRASH_TIMINGS, model_heartbeat_timeout=timedelta(seconds=30))

MODEL_NAME = "scripted-model"


class Models:
    """The models of one run: each conversation on its own key of the scripted server.

    The main conversation is ``""``; an agent a tool runs (flight_booking's extraction
    agent) takes another name, so its requests are compared as a conversation of their own.
    """

    def __init__(self, server: ScriptedModelServer | str, key: str) -> None:
        # A worker child of a crash run knows the server by its URL only (`crash.py`).
        self.server_url = server if isinstance(server, str) else server.url
        self.key = key

    def model(self, conversation: str = "", *, name: str = MODEL_NAME) -> Model:
        """The conversation's model; ``name`` tells models apart where Pydantic AI does by
        name (a fallback chain skips a model it already attempted)."""
        # `ScriptedModelServer.base_url`'s layout, from the URL alone.
        base_url = f"{self.server_url}/k/{quote(self.key + conversation, safe='')}/v1"
        return model_for_api("chat_completions", name, base_url=base_url, api_key="x")


@dataclass(frozen=True)
class Built:
    """The agent of one run, and what both runs are given alike."""

    agent: Agent[Any, Any]
    deps: Callable[[], Any] | None = None
    """Fresh deps: called once for the plain conversation (as the examples build them once),
    and as the session's deps factory."""
    deps_resources: DepsResources | None = None
    """The session's worker resources (clients in the deps); plain has them in `deps`."""
    flow_args: Mapping[str, Any] = field(default_factory=lambda: cast(dict[str, Any], {}))
    """The session flow's options for what plain passes to `agent.run` (``toolsets``, ...)."""
    run_args: Mapping[str, Any] = field(default_factory=lambda: cast(dict[str, Any], {}))
    """What plain passes to every `agent.run` (``usage_limits``, ``model_settings``): the
    session gets the same through `flow_args`."""
    plain_run: Callable[..., Awaitable[AgentRunResult[Any]]] | None = None
    """How plain runs a turn when not with `agent.run` (``agent.run_stream_events``, read to
    its end): called with `agent.run`'s arguments, returning the run's result."""


AgentBuilder = Callable[[Models, InvocationLog], Built]


@dataclass(frozen=True)
class Scenario:
    """One agent and one conversation, the same for both runs."""

    name: str
    build: AgentBuilder
    script: Sequence[ModelReply]
    turns: Sequence[str]
    side_scripts: Mapping[str, Sequence[ModelReply]] = field(
        default_factory=lambda: cast(dict[str, Sequence[ModelReply]], {})
    )
    """Scripts of the other conversations (see `Models`), by name."""
    approvals: Sequence[bool] = ()
    """One decision per tool call that stops for approval, in the model's order."""
    history: Sequence[ModelMessage] = ()
    """An existing conversation both runs start from: plain's first ``message_history``, the
    session's ``start_session(history=history_messages(...))``."""
    external_results: Sequence[str] = ()
    """One result per call whose tool defers itself (`CallDeferred`), in the model's order:
    plain passes it in `DeferredToolResults.calls`, the session answers its question."""


@dataclass(frozen=True)
class Run:
    """What one run showed."""

    requests: dict[str, list[dict[str, Any]]]
    """Every model request body of each conversation, in order."""
    outputs: list[Any]
    """Each turn's final output as JSON (None for a failed turn)."""
    errors: list[str | None]
    """Each turn's error: the exception plain raised, the session's ``last_turn_error``."""
    history: list[dict[str, Any]]
    """The conversation's messages after the last turn, dumped and normalised: plain's
    ``result.all_messages()``, the session's stored messages."""
    asked: list[tuple[str, Any]]
    """Every call stopped for approval: tool name and arguments (as JSON)."""
    tool_runs: list[dict[str, Any]]
    hook_runs: list[dict[str, Any]] = field(default_factory=lambda: cast(list[dict[str, Any]], []))
    """Every run of code an extension point calls (an output validator, a history processor,
    a prepare function, a hook, an event handler), as it logged itself, in order."""
    model_attempts: int | None = None
    """The attempts of the session's model steps (``sessionflow.RunModel``); None for plain."""
    model_steps: int | None = None
    """The session's model steps; as many as `model_attempts` when no step was retried."""
    problems: list[str] = field(default_factory=lambda: cast(list[str], []))
    """What stopped the run short (a call left waiting, a decision left unused)."""
    transcript: list[dict[str, Any]] = field(default_factory=lambda: cast(list[dict[str, Any]], []))
    """Plain only: the messages each run made (``result.new_messages()``), one run after the
    other, after the history it started from: the conversation as it happened, which is
    what `history` holds unless a history processor rewrote it."""
    usage: tuple[int, int, int] | None = None
    """Requests, input and output tokens over the turns: plain's ``result.usage()`` summed
    over its runs, the session's snapshot usage."""
    concurrent_tools: bool = False
    """Plain only: a model response asked for several tools at once, which Pydantic AI runs
    concurrently (`pydantic_ai._tool_execution`: "Function tools run in parallel within each
    segment"), so the tool runs are then compared as a multiset."""


def _conversations(scenario: Scenario) -> list[str]:
    return ["", *scenario.side_scripts]


def _script(scenario: Scenario, server: ScriptedModelServer, key: str) -> None:
    server.script(key, scenario.script)
    for name, replies in scenario.side_scripts.items():
        server.script(key + name, replies)


def _requests(scenario: Scenario, server: ScriptedModelServer, key: str) -> dict[str, list[dict[str, Any]]]:
    return {
        name: normalise_requests([r.body for r in server.requests(key + name)])
        for name in _conversations(scenario)
    }


def tool_runs(log: InvocationLog) -> list[dict[str, Any]]:
    """Every real run of a tool, in the order the runs ended (compared in that order unless
    Pydantic AI ran them concurrently: `Run.concurrent_tools`)."""
    # A local MCP server's tools log as "mcp", with the process that started the server
    # (``worker``), which differs from run to run like ``pid``.
    skip = {"kind", "pid", "at", "worker"}
    entries = [entry for entry in log.entries() if entry.get("kind") in ("tool", "mcp")]
    return [{k: v for k, v in entry.items() if k not in skip} for entry in entries]


def hook_runs(log: InvocationLog) -> list[dict[str, Any]]:
    """Every run of extension-point code (entries of kind ``hook``), in the order they ran."""
    skip = {"kind", "pid", "at", "worker"}
    return [{k: v for k, v in e.items() if k not in skip} for e in log.entries() if e.get("kind") == "hook"]


def session_error_for(plain_error: str) -> str:
    """The session's ``last_turn_error`` for a turn plain failed with ``plain_error``
    (``"<type>: <text>"``): Pydantic AI's text, after the core's words for a turn the model
    step ended (`TurnAborted`).

    A deliberate difference (adapter README, "Extension points and deliberate differences"):
    the session has no exception to raise; the model step ends the turn with the exception's
    message.
    """
    _, _, text = plain_error.partition(": ")
    return f"model call failed: TurnAborted: {text}"


def _arguments(raw: str | dict[str, Any] | None) -> Any:
    """Tool call arguments as JSON values: both runs may format the same JSON differently."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


# -- plain -------------------------------------------------------------------------------


async def run_plain(scenario: Scenario, server: ScriptedModelServer, key: str, log_dir: Path) -> Run:
    """The agent itself, turn by turn as Pydantic AI's docs loop, approvals from the scenario."""
    _script(scenario, server, key)
    log = InvocationLog(log_dir / "plain.jsonl")
    built = scenario.build(Models(server, key), log)
    deps = built.deps() if built.deps is not None else None
    history: list[ModelMessage] = list(scenario.history)
    made: list[ModelMessage] = list(scenario.history)
    approvals = list(scenario.approvals)
    external = list(scenario.external_results)
    outputs: list[Any] = []
    errors: list[str | None] = []
    asked: list[tuple[str, Any]] = []
    usage: tuple[int, int, int] = (0, 0, 0)
    for text in scenario.turns:
        prompt: str | None = text
        results: DeferredToolResults | None = None
        while True:
            try:
                result = await (built.plain_run or built.agent.run)(
                    prompt,
                    message_history=history or None,
                    deferred_tool_results=results,
                    deps=deps,
                    **dict(built.run_args),
                )
            except AgentRunError as error:
                # A failed run returns no messages: the next turn goes on from the last good one.
                outputs.append(None)
                errors.append(f"{type(error).__name__}: {error}")
                break
            history = result.all_messages()
            made += result.new_messages()
            used = result.usage
            usage = (usage[0] + used.requests, usage[1] + used.input_tokens, usage[2] + used.output_tokens)
            if isinstance(result.output, DeferredToolRequests):
                # Pydantic AI's human-in-the-loop: decide each call, then run on with the results.
                results = DeferredToolResults()
                for call in result.output.approvals:
                    asked.append((call.tool_name, call.args_as_dict()))
                    if not approvals:
                        raise AssertionError(
                            f"the plain run asked about {call.tool_name} with no decision left"
                        )
                    results.approvals[call.tool_call_id] = approvals.pop(0)
                for call in result.output.calls:
                    asked.append((call.tool_name, call.args_as_dict()))
                    if not external:
                        raise AssertionError(f"the plain run waits for {call.tool_name} with no result left")
                    results.calls[call.tool_call_id] = external.pop(0)
                prompt = None
                continue
            outputs.append(json_value(result.output))
            errors.append(None)
            break
    if approvals:
        raise AssertionError(f"the plain run left {len(approvals)} decision(s) unused")
    return Run(
        requests=_requests(scenario, server, key),
        outputs=outputs,
        errors=errors,
        history=normalise_history(ModelMessagesTypeAdapter.dump_python(history, mode="json"), key=key),
        transcript=normalise_history(ModelMessagesTypeAdapter.dump_python(made, mode="json"), key=key),
        asked=asked,
        tool_runs=tool_runs(log),
        hook_runs=hook_runs(log),
        usage=usage,
        concurrent_tools=calls_in_parallel(
            [*scenario.script, *(r for replies in scenario.side_scripts.values() for r in replies)]
        ),
    )


# -- session -----------------------------------------------------------------------------


def session_flow(built: Built, flow_type: str) -> AgentSessionFlow:
    """The session flow of a built agent."""
    # Plain Pydantic AI asks nobody before a tool runs (unless the tool says
    # requires_approval); the session's default effect (unclassified) would ask about every call.
    options = AgentSessionOptions(timings=TIMINGS, default_tool_effect=ToolEffect.READ)
    return pydantic_ai_session_flow(
        built.agent,
        flow_type=flow_type,
        deps_factory=built.deps,
        deps_resources=built.deps_resources,
        options=options,
        **dict(built.flow_args),
    )


async def run_session(
    scenario: Scenario, server: ScriptedModelServer, key: str, log_dir: Path, temporal_address: str
) -> Run:
    """Serve the agent as a sessionflow session (in-process worker) and play the same turns."""
    _script(scenario, server, key)
    log = InvocationLog(log_dir / "session.jsonl")
    built = scenario.build(Models(server, key), log)
    async with serving(temporal_address, session_flow(built, key)) as sessions:
        return await play_session(scenario, built, sessions, key, server, log)


async def play_session(
    scenario: Scenario,
    built: Built,
    sessions: AgentSessionClient,
    session_id: str,
    server: ScriptedModelServer,
    log: InvocationLog,
) -> Run:
    """Play the scenario's turns and decisions on a served flow (the session ID is the model key)."""
    approvals = list(scenario.approvals)
    external = list(scenario.external_results)
    outputs: list[Any] = []
    errors: list[str | None] = []
    asked: list[tuple[str, Any]] = []
    problems: list[str] = []
    seen = 0
    for number, text in enumerate(scenario.turns, 1):
        if number == 1:
            await sessions.start_session(session_id, text, history=history_messages(scenario.history))
        else:
            assert await sessions.send_user_message(session_id, text)
        snapshot = await _play_turn(sessions, session_id, number, approvals, asked, external)
        if snapshot.pending_interrupts:
            waiting = ", ".join(f"{i.tool_name} {i.arguments}" for i in snapshot.pending_interrupts)
            problems.append(
                f"turn {number}: the session waits for a person about {waiting}, with no decision left"
            )
            break
        assert snapshot.state is not None
        error = snapshot.state.last_turn_error
        messages = await stored_messages(sessions, session_id)
        errors.append(error)
        outputs.append(None if error else _turn_output(messages[seen:], built))
        seen = len(messages)
    if approvals:
        problems.append(
            f"{len(approvals)} approval decision(s) left unused: the session asked about fewer calls"
        )
    messages = await stored_messages(sessions, session_id)
    history = await read_step_history(sessions.client, session_id)
    # Every attempt of a model step may call the model once; a call more is a hidden one.
    model_steps = [s for s in history if s.step_type == "sessionflow.RunModel"]
    model_attempts = sum(s.final_attempt for s in model_steps)
    total = (await sessions.get_agent_snapshot(session_id)).usage
    return Run(
        requests=_requests(scenario, server, session_id),
        outputs=outputs,
        errors=errors,
        history=normalise_history(
            [cast(dict[str, Any], m.message.framework_item) for m in messages], key=session_id
        ),
        asked=asked,
        tool_runs=tool_runs(log),
        hook_runs=hook_runs(log),
        model_attempts=model_attempts,
        model_steps=len(model_steps),
        problems=problems,
        usage=(total.requests, total.input_tokens, total.output_tokens),
    )


async def stored_messages(sessions: AgentSessionClient, session_id: str) -> list[AgentMessage]:
    """Every stored message of the session, oldest first (the snapshot may hold only the latest)."""
    return await sessions.stored_messages(session_id)


async def _play_turn(
    sessions: AgentSessionClient,
    session_id: str,
    number: int,
    approvals: list[bool],
    asked: list[tuple[str, Any]],
    external: list[str],
) -> AgentSnapshot:
    """Decide the turn's approvals in the model's order until turn ``number`` has ended."""

    def probe(snapshot: AgentSnapshot) -> AgentSnapshot | None:
        state = snapshot.state
        if snapshot.pending_interrupts:
            return snapshot
        if state and state.turn_count >= number and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE:
            return snapshot
        return None

    while True:
        snapshot = await wait_for_agent_snapshot(
            sessions, session_id, probe, description=f"turn {number} to end or ask", timeout=90
        )
        if not snapshot.pending_interrupts:
            return snapshot
        for interrupt in snapshot.pending_interrupts:
            if interrupt.kind == "question":  # a tool's CallDeferred: its result comes from outside
                if not external:
                    return snapshot  # the call stays pending, and `play_session` reports it
                asked.append((interrupt.tool_name, _arguments(interrupt.arguments)))
                assert await sessions.resolve_interrupt(
                    session_id, interrupt.interrupt_id, approved=True, answer=external.pop(0)
                )
                continue
            if not approvals:
                return snapshot  # the call stays pending, and `play_session` reports it
            asked.append((interrupt.tool_name, _arguments(interrupt.arguments)))
            assert await sessions.resolve_interrupt(
                session_id, interrupt.interrupt_id, approved=approvals.pop(0)
            )


def _turn_output(turn: Sequence[AgentMessage], built: Built) -> Any:
    """The turn's final output: the text of its last assistant message, which the adapter
    makes the final output (JSON for anything but a string output type)."""
    answers = [m for m in turn if m.message.role is MessageRole.ASSISTANT]
    if not answers:
        return None
    text = answers[-1].message.text
    if text is None or built.agent.output_type is str:
        return text
    try:
        return json.loads(text)
    except ValueError:  # not JSON: compared as the text, so the difference shows
        return text


# -- both --------------------------------------------------------------------------------


def unique(prefix: str) -> str:
    """A session ID, flow type and model key no earlier run on the same dev server used."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def run_both(
    scenario: Scenario, server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> tuple[Run, Run]:
    """The plain run, then the session, each on its own key of ``server``."""
    key = unique(f"pai-diff-{scenario.name}")
    plain = await run_plain(scenario, server, f"{key}-plain", tmp_path)
    session = await run_session(scenario, server, f"{key}-session", tmp_path, temporal_address)
    return plain, session


def assert_same_run(plain: Run, session: Run) -> None:
    """The session behaved as the plain run; every difference is listed at once."""
    problems = list(session.problems)
    problems += _turn_differences(plain, session)
    # The adapter's promise: every model request of the run is a model step of its own, so
    # a crash repeats one request. An agent a tool runs (its own conversation) is not a step.
    calls = len(session.requests.get("", []))
    if session.model_attempts is not None and calls > session.model_attempts:
        problems.append(
            f"the session made {calls} model call(s) in {session.model_attempts} model step attempt(s): "
            "a step made more than one (hidden model calls)"
        )
    for name in sorted(set(plain.requests) | set(session.requests)):
        problems += _request_differences(name, plain.requests.get(name, []), session.requests.get(name, []))
    for what, a, b in [
        ("the message history", plain.history, session.history),
        ("the calls stopped for approval", plain.asked, session.asked),
        (
            "the runs of extension-point code (validators, processors, hooks)",
            plain.hook_runs,
            session.hook_runs,
        ),
    ]:
        if a != b:
            problems.append(f"{what} differs (- plain, + session):\n{diff(a, b)}")
    runs = tool_runs_difference(plain.tool_runs, session.tool_runs, concurrent=plain.concurrent_tools)
    if runs is not None:
        order = "as a multiset" if plain.concurrent_tools else "in order"
        problems.append(f"the real tool runs differ, {order} (- plain, + session):\n{diff(*runs)}")
    if problems:
        raise AssertionError("the session differs from plain Pydantic AI:\n\n" + "\n\n".join(problems))


def _turn_differences(plain: Run, session: Run) -> list[str]:
    problems: list[str] = []
    for index, (plain_error, output) in enumerate(zip(plain.errors, plain.outputs, strict=True)):
        number = index + 1
        if index >= len(session.errors):
            problems.append(f"turn {number}: the session never finished it")
            continue
        session_error, session_output = session.errors[index], session.outputs[index]
        if plain_error is None and session_error is not None:
            problems.append(f"turn {number} failed in the session: {session_error}")
        elif plain_error is not None and session_error is None:
            problems.append(
                f"turn {number}: plain raised {plain_error}; the session answered {session_output!r}"
            )
        elif plain_error is not None and session_error != session_error_for(plain_error):
            problems.append(
                f"turn {number}: plain raised {plain_error!r}; the session's error is {session_error!r}, "
                f"not {session_error_for(plain_error)!r}"
            )
        if output != session_output:
            problems.append(
                f"turn {number}'s final output differs (- plain, + session):\n{diff(output, session_output)}"
            )
    return problems


def _request_differences(name: str, plain: list[dict[str, Any]], session: list[dict[str, Any]]) -> list[str]:
    label = f"model requests of {name!r}" if name else "model requests"
    problems: list[str] = []
    if len(plain) != len(session):
        problems.append(f"{label}: plain made {len(plain)}, the session {len(session)}")
    for index, (a, b) in enumerate(zip(plain, session, strict=False)):
        if a != b:
            problems.append(f"{label}, call {index} differs (- plain, + session):\n{diff(a, b)}")
    for index in range(len(session), len(plain)):
        problems.append(f"{label}, call {index}, plain only:\n{pretty(plain[index])}")
    for index in range(len(plain), len(session)):
        problems.append(f"{label}, call {index}, session only:\n{pretty(session[index])}")
    return problems
