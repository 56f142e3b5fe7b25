"""The differential harness: one graph, run plainly and as a session, on one scripted model server.

A `Scenario` says how to build the graph (the same builder both times, with the model and
the tools of that run), what the model answers, and what the user does: the turns, and a
`Review` for every tool call a framework approval stops. `run_plain` runs the graph
itself with `astream` and an `InMemorySaver` (one thread per run), resuming interrupts
with LangChain's own decisions; `run_session` serves it as a sessionflow session on the
real Temporal dev server. `assert_same_run` compares what the model was sent, call by
call, the final state key by key, and every real tool run, in order.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from langchain_anthropic import ChatAnthropic
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, messages_from_dict
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt
from pydantic import SecretStr

from sessionflow import (
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    AgentSnapshot,
    AgentStatus,
    ToolEffect,
)
from sessionflow.demo import ModelReply, ScriptedModelServer
from sessionflow.testing import InvocationLog, wait_for_agent_snapshot
from sessionflow_langgraph import langgraph_session_flow
from tests.adapter_langgraph.conftest import serving, unique
from tests.adapter_langgraph.differential.normalise import normalise_request, normalise_state
from tests.adapter_langgraph.flows import FAST
from tests.differential_compare import calls_in_parallel, tool_runs_difference

__all__ = [
    "TURN_ABORTED",
    "Built",
    "Compiled",
    "GraphBuilder",
    "Review",
    "Run",
    "Scenario",
    "assert_same_run",
    "kept_as_invoked",
    "model_at",
    "plain_error",
    "play_session",
    "refused_run",
    "run_both",
    "run_plain",
    "run_session",
    "scripted_model",
    "session_flow",
]

Compiled = CompiledStateGraph[Any, Any, Any, Any]
"""A compiled graph; prebuilt ones are cast to it (their stubs leave type parameters unknown)."""


@dataclass(frozen=True)
class Built:
    """A compiled graph, and the tools its own tool node runs."""

    graph: Compiled
    tools: Sequence[BaseTool] = ()


GraphBuilder = Callable[[BaseChatModel, InvocationLog, InMemorySaver | None], Built]
"""Builds the graph for one run: its model, the run's tool log, and its checkpointer
(an `InMemorySaver` for the plain run, None for the session, which keeps its own state)."""


@dataclass(frozen=True)
class Review:
    """What the person decides about one call a framework approval (or question) stopped.

    Plain LangChain gets it as its own decision (`HumanInTheLoopMiddleware`'s ``approve``,
    ``edit``, ``reject``). The session gets ``approve`` as ``approved=True``, ``reject``
    as ``approved=False`` with the message, and ``edit`` as ``approved=True`` with the
    decision itself as the answer (JSON), which the adapter resumes the graph with.
    ``answer`` answers a plain ``interrupt(...)``: the graph resumes with ``message``
    (``Command(resume=message)``), the session gets it as the question's answer. ``reject``
    of a plain ``interrupt(...)`` declines the question: the session resumes the graph with
    the rejection message, so the plain run resumes with it too.
    """

    kind: Literal["approve", "edit", "reject", "answer"]
    message: str | None = None
    args: Mapping[str, Any] | None = None

    def session_answer(self, tool_name: str) -> str | None:
        if self.kind == "edit":
            return json.dumps(self.decision(tool_name))
        return self.message if self.kind == "answer" else None

    def decision(self, tool_name: str) -> dict[str, Any]:
        if self.kind == "edit":
            return {"type": "edit", "edited_action": {"name": tool_name, "args": dict(self.args or {})}}
        if self.kind == "reject" and self.message is not None:
            return {"type": "reject", "message": self.message}
        return {"type": self.kind}


@dataclass(frozen=True)
class Scenario:
    """One graph and one conversation, the same for both runs."""

    name: str
    build: GraphBuilder
    script: Sequence[ModelReply]
    turns: Sequence[str]
    reviews: Sequence[Review] = ()
    """One per tool call an approval stops, in the order the model made the calls."""
    session_reviews: Sequence[Review] = ()
    """Answers only the session asks for, after `reviews`: the confirmation of an edited
    call (the session binds what runs to an approval of exactly those arguments)."""
    tool_node: str | None = None
    """The session's ``tool_node=``: None lets the adapter find the graph's tool nodes (or none)."""
    pass_tools: bool = False
    """Give the session the graph's tools (`tools=`): what the adapter asks of a tool node of your own."""
    flow_options: Mapping[str, Any] = field(default_factory=lambda: cast(dict[str, Any], {}))
    """Extra `AgentSessionOptions` fields of the session run."""
    configurable: Mapping[str, Any] | None = None
    """``config["configurable"]`` of every turn: the plain run's config, the session's
    per-turn settings ``{"langgraph": {"configurable": ...}}``."""
    context: Any = None
    """The runtime context of every turn: the plain run's ``context=``, the session's
    ``{"langgraph": {"context": ...}}`` (JSON: LangGraph coerces it to ``context_schema``)."""
    api: Literal["openai", "anthropic"] = "openai"
    """The model both runs use: ``ChatOpenAI`` (Chat Completions) or ``ChatAnthropic``."""
    plain_call: Literal["astream", "invoke"] = "astream"
    """How the plain run calls the graph: ``astream(stream_mode="messages")`` (a client showing
    tokens), or ``ainvoke`` (the docs' way). With ``invoke`` the model answers whole, and
    what LangChain keeps of a streamed answer can differ (`run_both` says how it compares)."""

    def settings(self) -> dict[str, Any] | None:
        """The session's per-turn settings that give the graph ``configurable`` and ``context``."""
        if self.configurable is None and self.context is None:
            return None
        return {"langgraph": {"configurable": dict(self.configurable or {}), "context": self.context}}


@dataclass(frozen=True)
class Run:
    """What one run showed."""

    requests: list[dict[str, Any]]
    """Every model request body, in order."""
    state: dict[str, Any]
    """The final state's values, normalised (see `normalise.py`)."""
    tool_runs: list[dict[str, Any]]
    """Every real run of a tool, its name and arguments, in the order the runs ended."""
    errors: list[str]
    """Turn errors (a session turn that failed); a plain run raises instead."""
    transcript: list[dict[str, Any]] = field(default_factory=lambda: cast(list[dict[str, Any]], []))
    """The session: its transcript (`AgentSessionClient.export_messages`: every stored message
    but the superseded ones), as LangChain's message dicts, normalised. Plain: its thread's message history (the final state's)."""
    superseded: list[tuple[int, int, int]] = field(default_factory=lambda: [])
    """Session only: the superseded ranges, as (first, last, turn), from an audit read's pages
    (``include_superseded``); plain's thread has no such record."""
    stored: int = 0
    """Session only: how many messages the session stores, superseded ones included."""
    hook_runs: list[dict[str, Any]] = field(default_factory=lambda: cast(list[dict[str, Any]], []))
    """Every run of side-effecting code the graph logs as ``"hook"`` (middleware hooks), in order."""
    concurrent_tools: bool = False
    """Plain only: a model response asked for several tools at once, which plain LangGraph
    runs concurrently (`langgraph.prebuilt.tool_node.ToolNode._afunc`, ``asyncio.gather``
    over the calls; ``_func``, ``executor.map``; a `Send` per call runs its nodes in one
    superstep), in no fixed order: the tool runs are then compared as a multiset."""


def scripted_model(
    model_server: ScriptedModelServer, key: str, api: Literal["openai", "anthropic"] = "openai"
) -> BaseChatModel:
    """The model both runs use, each on its own key of the same scripted server."""
    if api == "anthropic":
        return ChatAnthropic(
            model_name="claude-test",
            base_url=model_server.base_url(key, api="anthropic"),
            api_key=SecretStr("test-key"),
            max_retries=0,
            timeout=None,
            stop=None,
        )
    return model_at(model_server.base_url(key))


def model_at(base_url: str) -> ChatOpenAI:
    return ChatOpenAI(model="gpt-test", base_url=base_url, api_key=SecretStr("test-key"), max_retries=0)


# -- plain -------------------------------------------------------------------------------


async def run_plain(scenario: Scenario, model_server: ScriptedModelServer, key: str, log_dir: Path) -> Run:
    """Run the graph itself: `astream` per turn on one thread, interrupts resumed with `Command`."""
    model_server.script(key, scenario.script)
    log = InvocationLog(log_dir / "plain.jsonl")
    built = scenario.build(scripted_model(model_server, key, scenario.api), log, InMemorySaver())
    graph = built.graph
    configurable = {**(scenario.configurable or {}), "thread_id": f"plain-{uuid.uuid4().hex}"}
    config: RunnableConfig = {"configurable": configurable}
    reviews = list(scenario.reviews)
    errors: list[str] = []
    for number, text in enumerate(scenario.turns, 1):
        graph_input: Any = {"messages": [HumanMessage(content=text)]}
        try:
            while True:
                await _call(graph, graph_input, config, scenario)
                snapshot = await graph.aget_state(config)
                if not snapshot.interrupts:
                    break
                graph_input = Command(resume={i.id: _resume_value(i, reviews) for i in snapshot.interrupts})
        except Exception as error:  # the run ended with the framework's error: the session's turn must too
            errors.append(f"turn {number}: {plain_error(error)}")
    if reviews:
        raise AssertionError(f"the plain run left {len(reviews)} review(s) unused: {reviews}")
    final = await graph.aget_state(config)
    state = normalise_state(final.values)
    return Run(
        requests=[normalise_request(r.body) for r in model_server.requests(key)],
        state=state,
        tool_runs=_tool_runs(log),
        errors=errors,
        transcript=normalise_state({"messages": final.values.get("messages", [])})["messages"],
        hook_runs=_hook_runs(log),
        concurrent_tools=calls_in_parallel(scenario.script),
    )


async def _call(graph: Compiled, graph_input: Any, config: RunnableConfig, scenario: Scenario) -> None:
    if scenario.plain_call == "invoke":
        await graph.ainvoke(graph_input, config, context=scenario.context)  # pyright: ignore[reportUnknownMemberType]
        return
    # astream's overloads mention Command without its type argument in LangGraph's stubs.
    parts = graph.astream(graph_input, config, stream_mode="messages", context=scenario.context)  # pyright: ignore[reportUnknownMemberType]
    async for _part in parts:
        pass


TURN_ABORTED = "model call failed: TurnAborted: "
"""How the session's ``last_turn_error`` starts when the adapter ended the turn (`TurnAborted`
from the model step, named by the core's workflow)."""


def plain_error(error: BaseException) -> str:
    """The session's ``last_turn_error`` for a turn plain LangGraph ended with ``error``: the
    model step ends the turn with the framework's own type and text, never retried."""
    return f"{TURN_ABORTED}{type(error).__name__}: {error}"


def _resume_value(interrupt: Interrupt, reviews: list[Review]) -> Any:
    """The person's decisions for one interrupt of `HumanInTheLoopMiddleware`."""
    value: Any = interrupt.value
    if isinstance(value, dict) and "action_requests" in value:
        requests = cast(list[dict[str, Any]], cast(dict[str, Any], value)["action_requests"])
        return {"decisions": [_take(reviews).decision(str(r["name"])) for r in requests]}
    if isinstance(value, dict) and cast(dict[str, Any], value).get("type") == "tool_approval":
        return _take(reviews).decision(str(cast(dict[str, Any], value)["name"]))
    review = _take(reviews)
    if review.kind == "reject":
        # The adapter's contract: a declined question resumes with the rejection message.
        return review.message
    if review.kind != "answer":
        raise AssertionError(f"the graph called interrupt({value!r}); the scenario's review is {review}")
    return review.message


def _take(reviews: list[Review]) -> Review:
    if not reviews:
        raise AssertionError("the graph asked for more reviews than the scenario has")
    return reviews.pop(0)


# -- session -----------------------------------------------------------------------------


async def run_session(
    scenario: Scenario,
    model_server: ScriptedModelServer,
    key: str,
    log_dir: Path,
    temporal_address: str,
) -> Run:
    """Serve the graph as a sessionflow session and play the same turns and reviews."""
    model_server.script(key, scenario.script)
    log = InvocationLog(log_dir / "session.jsonl")
    built = scenario.build(scripted_model(model_server, key, scenario.api), log, None)
    try:
        flow = session_flow(scenario, built, key)
    except ValueError as error:  # UnsupportedOptionError: the adapter refused the graph
        return refused_run(error)
    async with serving(temporal_address, flow) as sessions:
        return await play_session(scenario, sessions, key, model_server, log)


def session_flow(scenario: Scenario, built: Built, flow_type: str) -> AgentSessionFlow:
    """The session flow of a built graph, the same in the test process and in a worker child."""
    # Plain LangGraph asks nobody before a tool runs; the session's default effect would.
    options = AgentSessionOptions(
        timings=FAST, default_tool_effect=ToolEffect.READ, **dict(scenario.flow_options)
    )
    return langgraph_session_flow(
        flow_type=flow_type,
        graph=built.graph,
        tool_node=scenario.tool_node,
        tools=list(built.tools) if scenario.pass_tools else [],
        options=options,
    )


def refused_run(error: ValueError) -> Run:
    return Run(requests=[], state={}, tool_runs=[], errors=[f"the flow was refused: {error!r}"])


async def play_session(
    scenario: Scenario,
    sessions: AgentSessionClient,
    session_id: str,
    model_server: ScriptedModelServer,
    log: InvocationLog,
    before_reviews: Callable[[], Awaitable[None]] | None = None,
) -> Run:
    """Play the scenario's turns and reviews on a served flow (the session ID is the model key).

    ``before_reviews`` runs once, when the session first waits for a person and before any
    answer (a crash test kills the worker there).
    """
    reviews = [*scenario.reviews, *scenario.session_reviews]
    hooks = [before_reviews] if before_reviews is not None else []
    errors: list[str] = []
    for number, text in enumerate(scenario.turns, 1):
        if number == 1:
            await sessions.start_session(session_id, text, settings=scenario.settings())
        else:
            assert await sessions.send_user_message(session_id, text, settings=scenario.settings())
        snapshot = await _play_turn(sessions, session_id, number, reviews, hooks)
        if snapshot.pending_interrupts:
            asked = ", ".join(f"{i.tool_name} ({i.tool_call_id})" for i in snapshot.pending_interrupts)
            errors.append(f"turn {number}: the session waits for a person about {asked}, with no review left")
            break
        assert snapshot.state is not None
        if snapshot.state.last_turn_error:
            errors.append(f"turn {number}: {snapshot.state.last_turn_error}")
    final = await sessions.get_agent_snapshot(session_id)
    stored = await sessions.export_messages(session_id)
    transcript = messages_from_dict([cast(dict[str, Any], m.message.framework_item) for m in stored])
    count, superseded = await _audit_read(sessions, session_id)
    return Run(
        requests=[normalise_request(r.body) for r in model_server.requests(session_id)],
        state=normalise_state(session_values(final, transcript=transcript)),
        tool_runs=_tool_runs(log),
        errors=errors + ([f"{len(reviews)} review(s) left unused"] if reviews else []),
        transcript=normalise_state({"messages": transcript})["messages"],
        hook_runs=_hook_runs(log),
        superseded=superseded,
        stored=count,
    )


async def _audit_read(
    sessions: AgentSessionClient, session_id: str
) -> tuple[int, list[tuple[int, int, int]]]:
    """How many messages are stored, superseded ones included, and the superseded ranges."""
    count = 0
    ranges: set[tuple[int, int, int]] = set()
    after: int | None = 0
    while after is not None:
        page = await sessions.list_agent_messages(session_id, after=after, limit=200, include_superseded=True)
        count += len(page.messages)
        ranges |= {(r.first, r.last, r.turn) for r in page.superseded}
        after = page.next_after
    return count, sorted(ranges)


async def _play_turn(
    sessions: AgentSessionClient,
    session_id: str,
    number: int,
    reviews: list[Review],
    hooks: list[Callable[[], Awaitable[None]]],
) -> AgentSnapshot:
    """Answer the turn's approvals in the model's order until turn ``number`` has ended."""

    def probe(snapshot: AgentSnapshot) -> AgentSnapshot | None:
        state = snapshot.state
        if snapshot.pending_interrupts:
            return snapshot
        if state and state.turn_count >= number and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE:
            return snapshot
        return None

    while True:
        snapshot = await wait_for_agent_snapshot(
            sessions, session_id, probe, description=f"turn {number} to end or ask", timeout=60
        )
        if not snapshot.pending_interrupts:
            return snapshot
        while hooks:
            await hooks.pop()()
        for interrupt in snapshot.pending_interrupts:
            if not reviews:
                # Nothing to say: the call stays pending, and `play_session` reports it.
                return snapshot
            review = reviews.pop(0)
            assert await sessions.resolve_interrupt(
                session_id,
                interrupt.interrupt_id,
                approved=review.kind != "reject",
                rejection_message=review.message if review.kind == "reject" else None,
                answer=review.session_answer(interrupt.tool_name),
            )


def session_values(
    snapshot: AgentSnapshot, messages_key: str = "messages", transcript: list[BaseMessage] | None = None
) -> dict[str, Any]:
    """The session's view of the graph state: the snapshot's `framework_state`, and its messages.

    The adapter shows the thread's state keys as `AgentSnapshot.framework_state`; the
    message channel is there too when a node replaced it (a summary), and otherwise is
    the stored transcript: ``transcript`` (every stored message), or the snapshot's
    messages. A key the session left out for its size is reported, not hidden.
    """
    if snapshot.framework_state_omitted:
        raise AssertionError(f"the snapshot left out state keys {snapshot.framework_state_omitted}")
    values: dict[str, Any] = dict(snapshot.framework_state or {})
    channel: Any = values.get(messages_key)
    if channel is not None:
        values[messages_key] = messages_from_dict(cast(list[dict[str, Any]], channel))
    elif transcript is not None:
        values[messages_key] = list(transcript)
    else:
        items = [cast(dict[str, Any], m.message.framework_item) for m in snapshot.messages]
        values[messages_key] = messages_from_dict(items)
    return values


def _tool_runs(log: InvocationLog) -> list[dict[str, Any]]:
    skip = {"kind", "pid", "at"}
    return [{k: v for k, v in entry.items() if k not in skip} for entry in log.entries("tool")]


def _hook_runs(log: InvocationLog) -> list[dict[str, Any]]:
    skip = {"kind", "pid", "at"}
    return [{k: v for k, v in entry.items() if k not in skip} for entry in log.entries("hook")]


# -- both --------------------------------------------------------------------------------


async def run_both(
    scenario: Scenario, model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> tuple[Run, Run]:
    """The plain run, then the session, each on its own key of ``model_server``."""
    key = unique(f"lg-diff-{scenario.name}")
    plain = await run_plain(scenario, model_server, f"{key}-plain", tmp_path)
    if scenario.plain_call == "invoke":
        streamed = await run_plain(
            dataclasses.replace(scenario, plain_call="astream"),
            model_server,
            f"{key}-plain-stream",
            tmp_path / "streamed",
        )
        plain = kept_as_invoked(plain, streamed)
    session = await run_session(scenario, model_server, f"{key}-session", tmp_path, temporal_address)
    return plain, session


STREAM_REQUEST_KEYS = ("stream", "stream_options")
"""What a request says about streaming itself."""
STREAM_MESSAGE_KEYS = ("response_metadata", "additional_kwargs")
"""What LangChain keeps of a model response's metadata, which a stream does not carry whole."""


def kept_as_invoked(invoked: Run, streamed: Run) -> Run:
    """What the session must match when plain calls ``ainvoke``: the invoked run, streamed.

    A session streams every model call (its text deltas), and keeps each answer as a
    non-streamed call returns it (adapter README, "Streaming"). So it must send the
    invoked run's requests with the streamed run's streaming flags (`STREAM_REQUEST_KEYS`),
    and end with the invoked run's state, each AI message's metadata being the streamed
    run's (`STREAM_MESSAGE_KEYS`: LangChain keeps no response id or raw usage of a stream).
    Both plain runs are compared whole, key by key: nothing is left out.
    """
    if len(invoked.requests) != len(streamed.requests):
        raise AssertionError("the invoked and streamed plain runs made different numbers of requests")
    requests = [
        {
            **{k: v for k, v in a.items() if k not in STREAM_REQUEST_KEYS},
            **{k: b[k] for k in STREAM_REQUEST_KEYS if k in b},
        }
        for a, b in zip(invoked.requests, streamed.requests, strict=True)
    ]
    state = dict(invoked.state)
    state["messages"] = _with_stream_metadata(invoked.state["messages"], streamed.state["messages"])
    transcript = _with_stream_metadata(invoked.transcript, streamed.transcript)
    return dataclasses.replace(invoked, requests=requests, state=state, transcript=transcript)


def _with_stream_metadata(
    invoked: list[dict[str, Any]], streamed: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    if len(invoked) != len(streamed):
        raise AssertionError("the invoked and streamed plain runs ended with different message counts")
    merged: list[dict[str, Any]] = []
    for a, b in zip(invoked, streamed, strict=True):
        if a["type"] == "ai":
            data = {**a["data"], **{k: b["data"][k] for k in STREAM_MESSAGE_KEYS}}
            a = {"type": "ai", "data": data}
        merged.append(a)
    return merged


def assert_same_run(plain: Run, session: Run, *, state: bool = True) -> None:
    """The session behaved as the plain run: the same turns' ends, requests, state, stored
    transcript (against plain's message history), tool runs and hook runs.

    ``state=False`` for a turn that ended in an error (the README: a failed turn stores no
    messages of its run); the test asserts what the session kept itself.
    """
    problems: list[str] = []
    if session.errors != plain.errors:
        problems.append(
            "the turns ended differently:\n  plain:   "
            + ("\n           ".join(plain.errors) or "every turn completed")
            + "\n  session: "
            + ("\n           ".join(session.errors) or "every turn completed")
        )
    problems += _request_differences(plain.requests, session.requests)
    if state:
        problems += _state_differences(plain.state, session.state)
        if plain.transcript != session.transcript:
            problems.append(
                "the stored transcript is not the graph's message history (- plain history, + stored):\n"
                + _diff(plain.transcript, session.transcript)
            )
    if plain.hook_runs != session.hook_runs:
        problems.append(
            f"the hooks ran differently (- plain, + session):\n{_diff(plain.hook_runs, session.hook_runs)}"
        )
    runs = tool_runs_difference(plain.tool_runs, session.tool_runs, concurrent=plain.concurrent_tools)
    if runs is not None:
        order = "as a multiset" if plain.concurrent_tools else "in order"
        problems.append(f"the tools ran differently, {order} (- plain, + session):\n{_diff(*runs)}")
    if problems:
        raise AssertionError("the session differs from plain LangGraph:\n\n" + "\n\n".join(problems))


def _request_differences(plain: list[dict[str, Any]], session: list[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    if len(plain) != len(session):
        problems.append(f"model requests: plain made {len(plain)}, the session {len(session)}")
    for index, (a, b) in enumerate(zip(plain, session, strict=False)):
        if a != b:
            problems.append(f"model request {index} differs (- plain, + session):\n{_diff(a, b)}")
    for index in range(len(session), len(plain)):
        problems.append(f"model request {index}, plain only:\n{_pretty(plain[index])}")
    for index in range(len(plain), len(session)):
        problems.append(f"model request {index}, session only:\n{_pretty(session[index])}")
    return problems


def _state_differences(plain: dict[str, Any], session: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    for name in sorted(set(plain) | set(session)):
        if name not in session:
            problems.append(f"state key {name!r}: the session does not expose it; plain has {plain[name]!r}")
        elif name not in plain:
            problems.append(f"state key {name!r}: only the session has it: {session[name]!r}")
        elif plain[name] != session[name]:
            problems.append(
                f"state key {name!r} differs (- plain, + session):\n{_diff(plain[name], session[name])}"
            )
    return problems


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True)


def _diff(a: Any, b: Any) -> str:
    lines = difflib.unified_diff(_pretty(a).splitlines(), _pretty(b).splitlines(), lineterm="", n=2)
    return "\n".join(list(lines)[2:])
