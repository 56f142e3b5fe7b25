"""The differential harness: one agent, run plainly and as a session, on one scripted model server.

A `Scenario` says how to build the agent (the same builder both times, with the models and
the tool log of that run), what the model answers, and what the user does: the turns, and
a decision for every tool call the framework stops for approval. `run_plain` runs the
agent itself (`Runner.run`, or `Runner.run_streamed`, as the SDK's multi-turn examples
do: ``result.to_input_list()`` and ``result.last_agent`` carry into the next turn);
`run_session` serves it as a sessionflow session on the real Temporal dev server.
`assert_same_run` compares the model requests call by call, each turn's outcome, the last
agent, the run context, the approvals asked, the real runs of tools and of the user's other
code (hooks, guardrails, callbacks: `code_runs`), the stored transcript against the SDK's own
history (`history`) and the stream.
Every failed turn's error is compared by its type and text: the session's ``last_turn_error``
must be exactly what the adapter says for the SDK exception plain raised (`session_error_for`,
the adapter README's "Extension points and deliberate differences").
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from agents import (
    Agent,
    AgentsException,
    InputGuardrailTripwireTriggered,
    MaxTurnsExceeded,
    ModelBehaviorError,
    ModelRefusalError,
    OpenAIResponsesModel,
    OutputGuardrailTripwireTriggered,
    RunConfig,
    RunErrorHandlers,
    RunHooks,
    Runner,
    RunResult,
    RunResultStreaming,
    RunState,
    SQLiteSession,
    ToolInputGuardrailTripwireTriggered,
    ToolOutputGuardrailTripwireTriggered,
    TResponseInputItem,
    UserError,
)
from agents.run import DEFAULT_MAX_TURNS
from openai import AsyncOpenAI

from sessionflow import (
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    AgentSnapshot,
    AgentStatus,
    MessageRole,
    ToolEffect,
)
from sessionflow.demo import ModelReply, ScriptedModelServer
from sessionflow.kit import DeltaTransport
from sessionflow.session.notes import TURN_FAILURE_NOTE_FOOTER, TURN_FAILURE_NOTE_HEADER
from sessionflow.temporal import read_step_history
from sessionflow.testing import InvocationLog, wait_for_agent_snapshot
from sessionflow_openai_agents import openai_agents_session_flow, structured_output
from tests.adapter_openai.differential.normalise import json_value, normalise_items, normalise_requests
from tests.adapter_openai.differential.stream_view import (
    StreamItem,
    collect_session_events,
    joined,
    plain_stream_item,
    session_stream,
)
from tests.adapter_openai.scenarios import TIMINGS
from tests.differential_compare import calls_in_parallel, tool_runs_difference
from tests.serving import serving

__all__ = [
    "NOT_EXPOSED",
    "AgentBuilder",
    "Built",
    "Models",
    "Run",
    "Scenario",
    "assert_same_run",
    "failure_note",
    "play_session",
    "refused_run",
    "run_both",
    "run_plain",
    "run_session",
    "session_error_for",
    "session_flow",
]

NOT_EXPOSED = "<the session does not expose it>"
"""What the session's side shows for a value the adapter does not expose yet."""

_TRIPWIRES = (InputGuardrailTripwireTriggered, OutputGuardrailTripwireTriggered)


class Models:
    """The models of one run: each conversation on its own key of the scripted server.

    The main conversation is ``""``; an agent that runs beside it (a guardrail's agent)
    takes another name, so its requests are compared as a conversation of their own and
    their order against the main one (they run concurrently in plain SDK) does not matter.
    """

    def __init__(self, server_url: str, key: str) -> None:
        self.server_url = server_url
        self.key = key

    def base_url(self, conversation: str = "") -> str:
        return f"{self.server_url}/k/{self.key}{conversation}/v1"

    def model(self, conversation: str = "") -> OpenAIResponsesModel:
        client = AsyncOpenAI(base_url=self.base_url(conversation), api_key="test-key", max_retries=0)
        return OpenAIResponsesModel(model="scripted", openai_client=client)


@dataclass(frozen=True)
class Built:
    """The agent of one run, and what both runs are given alike."""

    agent: Agent[Any]
    context: Callable[[], Any] | None = None
    """A fresh run context: the plain run's ``context=``, and the session's context factory."""
    max_turns: int = DEFAULT_MAX_TURNS
    flow_args: Mapping[str, Any] = field(default_factory=lambda: cast(dict[str, Any], {}))
    """Adapter options the test uses (or proposes): passed as keywords, so a flow that
    refuses them (``TypeError``) shows as a difference."""
    run_config: RunConfig | None = None
    """The run config of both runs (plain with tracing off, as the session's default)."""
    hooks: RunHooks[Any] | None = None
    """The run hooks of both runs: plain's ``Runner.run(hooks=...)``, the session's ``hooks=``."""
    error_handlers: RunErrorHandlers[Any] | None = None
    """The error handlers of both runs: ``Runner.run(error_handlers=...)``, the session's ``error_handlers=``."""


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
    """One decision per tool call the framework stops (``needs_approval``), in the model's order."""
    refusal: str | None = None
    """The SDK examples' catch-and-answer: on a guardrail tripwire the plain loop answers this
    text as the assistant (``input_guardrails.py``); the session is asked to do the same."""
    streamed: bool = False
    """Run plain with `Runner.run_streamed` and compare its events with the session's."""
    sdk_memory: bool = False
    """Run plain as the SDK's memory examples do: one `SQLiteSession` for the conversation,
    each turn's input only its user message. The session runs as always (its stored
    messages are the memory), since the adapter refuses an SDK `Session`."""


@dataclass(frozen=True)
class Run:
    """What one run showed."""

    requests: dict[str, list[dict[str, Any]]]
    """Every model request body of each conversation, in order."""
    outputs: list[Any]
    """Each turn's final output (None for a failed turn)."""
    errors: list[str | None]
    """Each turn's error: the SDK exception plain raised (``"<type>: <text>"``), the session's
    ``last_turn_error``."""
    last_agent: str
    context: Any
    """The run context after the last turn, as JSON (None without one)."""
    asked: list[tuple[str, str]]
    """Every call stopped for approval: tool name and arguments."""
    tool_runs: list[dict[str, Any]]
    """The real runs of tools, in order (`tool_runs`)."""
    stream: list[StreamItem] | None
    model_attempts: int | None = None
    """The attempts of the session's model steps (``sessionflow.RunModel``); None for plain."""
    problems: list[str] = field(default_factory=lambda: cast(list[str], []))
    """What stopped the run short (a refused flow, a call left waiting)."""
    expected_session_errors: list[str | None] = field(default_factory=lambda: cast(list[str | None], []))
    """Plain only: each turn's `session_error_for` the exception it raised (None for a turn
    that did not fail), the ``last_turn_error`` the session must show."""
    concurrent_tools: bool = False
    """Plain only: a model response asked for several function tools at once, which the SDK
    runs concurrently (`agents.run_internal.tool_execution._FunctionToolBatchExecutor`, one
    ``asyncio.create_task`` per call), so their runs are compared as a multiset."""
    code_runs: list[dict[str, Any]] = field(default_factory=lambda: cast(list[dict[str, Any]], []))
    """Every run of the user's code in the order it ran: tools, and the hooks, guardrails and
    callbacks that log a run (`code_runs`). What is compared, so a hook that fires twice, or a
    guardrail that runs after its tool, shows."""
    history: list[dict[str, Any]] = field(default_factory=lambda: cast(list[dict[str, Any]], []))
    """The conversation as stored after the last turn: plain, the SDK's own history as the
    examples keep it (``result.to_input_list()``, a failed turn's user message, a caught
    tripwire's refusal); the session, its stored messages' items (`AgentSessionClient.stored_messages`).
    As JSON; `assert_same_run` compares them with their item ids normalised as in the requests
    (`normalise.normalise_items`)."""
    kept: list[dict[str, Any]] = field(default_factory=lambda: cast(list[dict[str, Any]], []))
    """Session only: every stored message's item, superseded ones included
    (``stored_messages(include_superseded=True)``): what an audit read shows."""
    superseded: list[tuple[int, int, int]] = field(default_factory=lambda: [])
    """Session only: the superseded ranges, as (first, last, turn), from the audit read's pages."""


def is_structured(agent: Agent[Any]) -> bool:
    return agent.output_type not in (None, str)


def _conversations(scenario: Scenario) -> list[str]:
    return ["", *scenario.side_scripts]


def _script(scenario: Scenario, server: ScriptedModelServer, key: str) -> None:
    server.script(key, scenario.script)
    for name, replies in scenario.side_scripts.items():
        server.script(key + name, replies)


def _requests(scenario: Scenario, server: ScriptedModelServer, key: str) -> dict[str, list[dict[str, Any]]]:
    return {
        name: normalise_requests(
            [r.body for r in server.requests(key + name)], plain_streamed=scenario.streamed
        )
        for name in _conversations(scenario)
    }


_SKIPPED_FIELDS = {"kind", "pid", "worker", "at"}

CODE_KINDS = ("tool", "mcp", "hook", "guardrail", "callback")
"""What `code_runs` holds: tools (``tool``, a local MCP server's ``mcp``), and the user's other
code that logs its runs: lifecycle hooks (``hook``), guardrails, handoff callbacks and input
filters (``callback``)."""


def tool_runs(log: InvocationLog) -> list[dict[str, Any]]:
    """Every real run of a tool, in the order the runs ended (compared in that order unless
    the SDK ran them concurrently: `Run.concurrent_tools`)."""
    # A local MCP server's tools log as "mcp" (tests/adapter_openai/mcp_server.py), with the
    # process that started the server (``worker``), which differs from run to run like ``pid``.
    entries = [entry for entry in log.entries() if entry.get("kind") in ("tool", "mcp")]
    return [{k: v for k, v in entry.items() if k not in _SKIPPED_FIELDS} for entry in entries]


def code_runs(log: InvocationLog) -> list[dict[str, Any]]:
    """Every run of a tool, hook, guardrail or callback, in the order they ran, each with its
    kind: the hook ``on_tool_start`` before the tool's run, and so on."""
    entries = [entry for entry in log.entries() if entry.get("kind") in CODE_KINDS]
    return [
        {"kind": entry["kind"], **{k: v for k, v in entry.items() if k not in _SKIPPED_FIELDS}}
        for entry in entries
    ]


TURN_ABORTED = "model call failed: TurnAborted: "
"""How the session's ``last_turn_error`` starts when the adapter ended the turn (`TurnAborted`
from the model step, named by the core's workflow)."""


def session_error_for(error: AgentsException) -> str:
    """The session's ``last_turn_error`` for a turn the plain SDK failed with ``error``.

    A deliberate difference (adapter README, "Extension points and deliberate differences"):
    the session has no exception to raise, so the model step ends the turn (`TurnAborted`)
    with a text that names what stopped it: the SDK's type and text for `MaxTurnsExceeded`,
    the guardrail's name for a tripwire. Any other exception fails the model step with the
    SDK's own type and text.
    """
    match error:
        case InputGuardrailTripwireTriggered():
            return f"{TURN_ABORTED}input guardrail {error.guardrail_result.guardrail.get_name()!r} tripped"
        case OutputGuardrailTripwireTriggered():
            return f"{TURN_ABORTED}output guardrail {error.guardrail_result.guardrail.get_name()!r} tripped"
        case ToolInputGuardrailTripwireTriggered():
            return f"{TURN_ABORTED}tool input guardrail {error.guardrail.get_name()!r} tripped"
        case ToolOutputGuardrailTripwireTriggered():
            return f"{TURN_ABORTED}tool output guardrail {error.guardrail.get_name()!r} tripped"
        case MaxTurnsExceeded() | ModelRefusalError() | ModelBehaviorError():
            return f"{TURN_ABORTED}{type(error).__name__}: {error}"
        case UserError():
            return f"{TURN_ABORTED}OpenAI Agents SDK: {error}"
        case _:
            return f"model call failed: {type(error).__name__}: {error}"


async def mcp_connected(agent: Agent[Any]) -> AsyncExitStack:
    """The agent's local MCP servers connected for one run, as the SDK's MCP examples do
    (``async with MCPServerStdio(...) as server``); the session's in-process worker shares
    them. Leaving the returned stack cleans them up."""
    stack = AsyncExitStack()
    for server in agent.mcp_servers:
        await server.connect()
        stack.push_async_callback(server.cleanup)
    return stack


# -- plain -------------------------------------------------------------------------------


async def run_plain(scenario: Scenario, server: ScriptedModelServer, key: str, log_dir: Path) -> Run:
    """The agent itself, turn by turn as the SDK's examples loop, approvals from the scenario."""
    _script(scenario, server, key)
    log = InvocationLog(log_dir / "plain.jsonl")
    built = scenario.build(Models(server.url, key), log)
    async with await mcp_connected(built.agent):
        agent = built.agent
        context = built.context() if built.context is not None else None
        items: list[TResponseInputItem] = []
        approvals = list(scenario.approvals)
        outputs: list[Any] = []
        errors: list[str | None] = []
        expected_session_errors: list[str | None] = []
        asked: list[tuple[str, str]] = []
        stream: list[StreamItem] | None = [] if scenario.streamed else None
        memory = SQLiteSession(session_id=key) if scenario.sdk_memory else None
        for text in scenario.turns:
            items.append({"role": "user", "content": text})
            run_input: list[TResponseInputItem] | RunState[Any, Any] = items
            if memory is not None:
                run_input = [{"role": "user", "content": text}]
            while True:
                try:
                    result = await _run_once(scenario, built, agent, run_input, context, stream, memory)
                except AgentsException as error:
                    # As the example loops: a failed turn keeps its user message in the input.
                    if scenario.refusal is not None and isinstance(error, _TRIPWIRES):
                        # The example's catch-and-answer: the refusal is the assistant's answer.
                        items.append({"role": "assistant", "content": scenario.refusal})
                        outputs.append(scenario.refusal)
                        errors.append(None)
                        expected_session_errors.append(None)
                        break
                    outputs.append(None)
                    errors.append(f"{type(error).__name__}: {error}")
                    expected_session_errors.append(session_error_for(error))
                    break
                if result.interruptions:
                    state = result.to_state()
                    for item in result.interruptions:
                        asked.append((item.name or "", item.arguments or ""))
                        if not approvals:
                            raise AssertionError(
                                f"the plain run asked about {item.name} with no decision left"
                            )
                        (state.approve if approvals.pop(0) else state.reject)(item)
                    run_input = state
                    continue
                outputs.append(json_value(result.final_output))
                errors.append(None)
                expected_session_errors.append(None)
                items = result.to_input_list()
                agent = result.last_agent
                break
        if approvals:
            raise AssertionError(f"the plain run left {len(approvals)} decision(s) unused")
        return Run(
            requests=_requests(scenario, server, key),
            outputs=outputs,
            errors=errors,
            last_agent=agent.name,
            context=json_value(context),
            asked=asked,
            tool_runs=tool_runs(log),
            code_runs=code_runs(log),
            history=json_value(items),
            stream=joined(stream) if stream is not None else None,
            expected_session_errors=expected_session_errors,
            concurrent_tools=calls_in_parallel(
                [*scenario.script, *(r for replies in scenario.side_scripts.values() for r in replies)]
            ),
        )


async def _run_once(
    scenario: Scenario,
    built: Built,
    agent: Agent[Any],
    run_input: list[TResponseInputItem] | RunState[Any, Any],
    context: Any,
    stream: list[StreamItem] | None,
    memory: SQLiteSession | None = None,
) -> RunResult | RunResultStreaming:
    # A resumed RunState carries its own context; a new run gets the scenario's.
    config = dataclasses.replace(built.run_config or RunConfig(), tracing_disabled=True)
    kwargs: dict[str, Any] = {
        "max_turns": built.max_turns,
        "run_config": config,
        "hooks": built.hooks,
        "error_handlers": built.error_handlers,
    }
    if memory is not None:
        kwargs["session"] = memory
    if not isinstance(run_input, RunState):
        kwargs["context"] = context
    if stream is None:
        return await Runner.run(agent, run_input, **kwargs)
    result = Runner.run_streamed(agent, run_input, **kwargs)
    async for event in result.stream_events():
        item = plain_stream_item(event)
        if item is not None:
            stream.append(item)
    return result


# -- session -----------------------------------------------------------------------------


def session_flow(
    built: Built, flow_type: str, *, delta_transport: DeltaTransport | None = None
) -> AgentSessionFlow:
    """The session flow of a built agent, the same in the test process and in a worker child."""
    # The plain SDK asks nobody before a tool runs (unless the tool's own needs_approval
    # says so); the session's default effect (unclassified) would ask about every call.
    options = AgentSessionOptions(timings=TIMINGS, default_tool_effect=ToolEffect.READ)
    make_context = built.context

    def context_factory(session_id: str) -> Any:
        # The adapter calls it once per session (and once when the flow is built, to check it).
        assert make_context is not None
        return make_context()

    build_flow = cast(Any, openai_agents_session_flow) if built.flow_args else openai_agents_session_flow
    return build_flow(
        built.agent,
        flow_type=flow_type,
        options=options,
        context_factory=context_factory if make_context is not None else None,
        max_turns=built.max_turns,
        run_config=built.run_config,
        hooks=built.hooks,
        error_handlers=built.error_handlers,
        delta_transport=delta_transport,
        **dict(built.flow_args),
    )


def refused_run(error: Exception) -> Run:
    return Run(
        requests={},
        outputs=[],
        errors=[],
        last_agent=NOT_EXPOSED,
        context=NOT_EXPOSED,
        asked=[],
        tool_runs=[],
        stream=None,
        problems=[f"the flow was refused: {error!r}"],
    )


async def run_session(
    scenario: Scenario, server: ScriptedModelServer, key: str, log_dir: Path, temporal_address: str
) -> Run:
    """Serve the agent as a sessionflow session (in-process worker) and play the same turns."""
    _script(scenario, server, key)
    log = InvocationLog(log_dir / "session.jsonl")
    built = scenario.build(Models(server.url, key), log)
    async with await mcp_connected(built.agent):
        try:
            flow = session_flow(built, key)
        except (ValueError, TypeError) as error:  # an option refused, or one the adapter lacks
            return refused_run(error)
        async with serving(temporal_address, flow) as sessions:
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
    collector = (
        asyncio.create_task(collect_session_events(sessions, session_id, len(scenario.turns)))
        if scenario.streamed
        else None
    )
    outputs: list[Any] = []
    errors: list[str | None] = []
    asked: list[tuple[str, str]] = []
    problems: list[str] = []
    seen = 0
    snapshot: AgentSnapshot | None = None
    for number, text in enumerate(scenario.turns, 1):
        if number == 1:
            await sessions.start_session(session_id, text)
        else:
            assert await sessions.send_user_message(session_id, text)
        snapshot = await _play_turn(sessions, session_id, number, approvals, asked)
        if snapshot.pending_interrupts:
            waiting = ", ".join(f"{i.tool_name} {i.arguments}" for i in snapshot.pending_interrupts)
            problems.append(
                f"turn {number}: the session waits for a person about {waiting}, with no decision left"
            )
            break
        assert snapshot.state is not None
        error = snapshot.state.last_turn_error
        errors.append(error)
        outputs.append(None if error else _turn_output(snapshot, seen, built))
        # By sequence: a turn may supersede earlier messages, which the snapshot leaves out.
        seen = snapshot.messages[-1].sequence if snapshot.messages else seen
    if approvals:
        problems.append(
            f"{len(approvals)} approval decision(s) left unused: the session asked about fewer calls"
        )
    final = await sessions.get_agent_snapshot(session_id)
    last_agent, context = session_view(final, built)
    stored = await sessions.stored_messages(session_id)
    kept, superseded = await _audit_read(sessions, session_id)
    history = await read_step_history(sessions.client, session_id)
    # Every attempt of a model step may call the model once; a call more is a hidden one.
    model_attempts = sum(s.final_attempt for s in history if s.step_type == "sessionflow.RunModel")
    stream: list[StreamItem] | None = None
    if collector is not None:
        try:
            events = await asyncio.wait_for(collector, timeout=30)
            stream = session_stream(events)
        except TimeoutError:
            problems.append("the session's event stream did not reach the end of the last turn")
    return Run(
        requests=_requests(scenario, server, session_id),
        outputs=outputs,
        errors=errors,
        last_agent=last_agent,
        context=context,
        asked=asked,
        tool_runs=tool_runs(log),
        code_runs=code_runs(log),
        history=json_value([m.message.framework_item for m in stored]),
        kept=kept,
        superseded=superseded,
        stream=stream,
        model_attempts=model_attempts,
        problems=problems,
    )


async def _audit_read(
    sessions: AgentSessionClient, session_id: str
) -> tuple[list[dict[str, Any]], list[tuple[int, int, int]]]:
    """Every stored message's item, superseded ones included, and the superseded ranges."""
    items: list[dict[str, Any]] = []
    ranges: set[tuple[int, int, int]] = set()
    after: int | None = 0
    while after is not None:
        page = await sessions.list_agent_messages(session_id, after=after, limit=200, include_superseded=True)
        items += json_value([m.message.framework_item for m in page.messages])
        ranges |= {(r.first, r.last, r.turn) for r in page.superseded}
        after = page.next_after
    return items, sorted(ranges)


async def _play_turn(
    sessions: AgentSessionClient,
    session_id: str,
    number: int,
    approvals: list[bool],
    asked: list[tuple[str, str]],
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
            if not approvals:
                return snapshot  # the call stays pending, and `play_session` reports it
            asked.append((interrupt.tool_name, interrupt.arguments))
            approved = approvals.pop(0)
            assert await sessions.resolve_interrupt(session_id, interrupt.interrupt_id, approved=approved)


def _turn_output(snapshot: AgentSnapshot, seen: int, built: Built) -> Any:
    """The turn's final output (its messages are those after sequence `seen`): the text of its last assistant message, or for a structured
    output the adapter's typed accessor (`structured_output`) as JSON. A final output no
    message carries (`StopAtTools`, a custom ``tool_use_behavior``, reasoning alone) is not
    stored as a message, since the SDK's history has none: the adapter shows it as
    ``framework_state["final_output"]``."""
    view: dict[str, Any] = dict(snapshot.framework_state or {})
    if "final_output" in view:
        return json_value(view["final_output"])
    turn = [m for m in snapshot.messages if m.sequence > seen]
    answers = [m for m in turn if m.message.role is MessageRole.ASSISTANT]
    if not answers:
        return None
    text = answers[-1].message.text
    if text is not None and is_structured(built.agent):
        try:
            return json_value(structured_output(turn, cast(type[Any], built.agent.output_type)))
        except ValueError:  # not the output type (a refusal): compared as the text
            return text
    return text


def failure_note(*lines: str) -> dict[str, Any]:
    """The user message the session stores after a turn that failed once tool calls had run
    (a documented difference: the SDK's loop keeps no trace of a failed run's items), with
    one line per call as `sessionflow.session.notes.build_turn_failure_note` writes them."""
    text = "\n".join([TURN_FAILURE_NOTE_HEADER, *lines, TURN_FAILURE_NOTE_FOOTER])
    return {"content": text, "role": "user"}


def session_view(snapshot: AgentSnapshot, built: Built) -> tuple[str, Any]:
    """The session's last agent and run context, as the adapter exposes them.

    The adapter shows both as the framework's state of the last completed turn
    (`AgentSnapshot.framework_state`, from `TurnCompleted.framework_state`):
    ``{"last_agent": <name>, "context": <the context as JSON>}`` (a pydantic context as its
    ``model_dump(mode="json")``, a dataclass as its fields). An agent with no handoffs has
    no other agent to end on, and a session none of whose turns completed has no last turn
    to carry from, so the next turn starts at the starting agent: in both cases the last
    agent is known without it.
    """
    view: dict[str, Any] = dict(snapshot.framework_state or {})
    last_agent = view.get("last_agent")
    if not isinstance(last_agent, str):
        unmoved = not built.agent.handoffs or snapshot.framework_state is None
        last_agent = built.agent.name if unmoved else NOT_EXPOSED
    if built.context is None:
        return last_agent, None
    return last_agent, view.get("context", NOT_EXPOSED)


# -- both --------------------------------------------------------------------------------


def unique(prefix: str) -> str:
    """A session ID, flow type and model key no earlier run on the same dev server used."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def run_both(
    scenario: Scenario, server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> tuple[Run, Run]:
    """The plain run, then the session, each on its own key of ``server``."""
    key = unique(f"oa-diff-{scenario.name}")
    plain = await run_plain(scenario, server, f"{key}-plain", tmp_path)
    session = await run_session(scenario, server, f"{key}-session", tmp_path, temporal_address)
    return plain, session


def assert_same_run(plain: Run, session: Run, *, session_history: list[dict[str, Any]] | None = None) -> None:
    """The session behaved as the plain run; every difference is listed at once.

    ``session_history`` is the stored transcript the session must have where the adapter's
    extension-point matrix documents a difference from the SDK's history (a test builds it
    from plain's and asserts it); by default it is plain's."""
    if session.problems and session.problems[0].startswith("the flow was refused"):
        raise AssertionError(f"the session differs from the plain OpenAI Agents SDK: {session.problems[0]}")
    problems = list(session.problems)
    problems += _turn_differences(plain, session)
    # The session's promise: every model call of the run (a sub-agent's as a tool too) is a
    # model step of its own, so a crash repeats one call. A guardrail's agent (its own
    # conversation) runs inside the guardrail, not as a step of the run.
    calls = len(session.requests.get("", []))
    if session.model_attempts is not None and calls > session.model_attempts:
        problems.append(
            f"the session made {calls} model call(s) in {session.model_attempts} model step attempt(s): "
            "a step made more than one (hidden model calls)"
        )
    for name in sorted(set(plain.requests) | set(session.requests)):
        problems += _request_differences(name, plain.requests.get(name, []), session.requests.get(name, []))
    for what, a, b in [
        ("the last agent", plain.last_agent, session.last_agent),
        ("the run context", plain.context, session.context),
        ("the calls stopped for approval", plain.asked, session.asked),
        ("the stream", plain.stream, session.stream),
        (
            "the stored transcript (- the SDK's history, + the session's stored messages)",
            normalise_items(plain.history if session_history is None else session_history),
            normalise_items(session.history),
        ),
    ]:
        if a != b:
            problems.append(f"{what} differs (- plain, + session):\n{_diff(a, b)}")
    runs = tool_runs_difference(plain.code_runs, session.code_runs, concurrent=plain.concurrent_tools)
    if runs is not None:
        order = "as a multiset" if plain.concurrent_tools else "in order"
        problems.append(
            f"the real runs of tools, hooks, guardrails and callbacks differ, {order} "
            f"(- plain, + session):\n{_diff(*runs)}"
        )
    if problems:
        raise AssertionError(
            "the session differs from the plain OpenAI Agents SDK:\n\n" + "\n\n".join(problems)
        )


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
        elif plain_error is not None and session_error is not None:
            expected = plain.expected_session_errors[index]
            if session_error != expected:
                problems.append(
                    f"turn {number}: plain raised {plain_error!r}; the session's error is "
                    f"{session_error!r}, not the adapter's text for it, {expected!r}"
                )
        if output != session_output:
            problems.append(
                f"turn {number}'s final output differs (- plain, + session):\n{_diff(output, session_output)}"
            )
    return problems


def _request_differences(name: str, plain: list[dict[str, Any]], session: list[dict[str, Any]]) -> list[str]:
    label = f"model requests of {name!r}" if name else "model requests"
    problems: list[str] = []
    if len(plain) != len(session):
        problems.append(f"{label}: plain made {len(plain)}, the session {len(session)}")
    for index, (a, b) in enumerate(zip(plain, session, strict=False)):
        if a != b:
            problems.append(f"{label}, call {index} differs (- plain, + session):\n{_diff(a, b)}")
    for index in range(len(session), len(plain)):
        problems.append(f"{label}, call {index}, plain only:\n{_pretty(plain[index])}")
    for index in range(len(plain), len(session)):
        problems.append(f"{label}, call {index}, session only:\n{_pretty(session[index])}")
    return problems


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, default=str)


def _diff(a: Any, b: Any) -> str:
    lines = difflib.unified_diff(_pretty(a).splitlines(), _pretty(b).splitlines(), lineterm="", n=2)
    return "\n".join(list(lines)[2:]) or f"- {a!r}\n+ {b!r}"
