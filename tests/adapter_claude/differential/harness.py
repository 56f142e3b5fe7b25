"""The differential harness: one `ClaudeAgentOptions`, run plainly and as a session, on one scripted model server.

A `Scenario` names an options builder (`sdk_examples.py`: the same builder both times, given
the run's workspace and tool log), what the model answers, the files the workspace starts
with, and what the user does: the turns, and a decision for each call that asks.

1. `run_plain`: the Claude Agent SDK itself, `ClaudeSDKClient` with one ``query`` per turn,
   reading each turn's `ResultMessage`. A call that asks for permission goes to a
   ``can_use_tool`` callback that records it and decides it from the scenario.
2. `run_session`: the same options as a sessionflow session
   (`claude_agent_session_flow`, served in-process on the real Temporal dev server), the same
   turns sent as user messages, each approval decided the same way.

Both point the CLI at the scripted server with the same environment (`scripted`).
`assert_same_run` compares the model requests call by call (`normalise.normalise_request`),
each turn's result text, subtype and error text, every call that asked (none filtered), the
real tool runs in order, the hooks that fired and the workspace's files, and prints every
difference at once.
"""

from __future__ import annotations

import base64
import json
import uuid
import warnings
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
)

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
from sessionflow_claude_agent_sdk import claude_agent_session_flow
from tests.adapter_claude.differential.diff import diff, pretty
from tests.adapter_claude.differential.normalise import normalise_request, normalise_value, placeholders
from tests.adapter_claude.differential.transcript import (
    plain_transcript,
    results_in_call_order,
    session_transcript,
)
from tests.differential_compare import calls_in_parallel, tool_runs_difference
from tests.serving import serving

__all__ = [
    "MODEL",
    "REJECTION",
    "Builder",
    "Run",
    "RunFolders",
    "Scenario",
    "assert_same_run",
    "play_session",
    "request_parameters",
    "run_both",
    "run_plain",
    "run_session",
    "scripted",
    "session_flow",
    "tool_results",
    "unique",
]

MODEL = "scripted-model"
API_KEY = "sk-ant-test"
TIMINGS = CRASH_TIMINGS
REJECTION = "Not now, please."
"""What the person says when rejecting a call, in both runs."""

Builder = Callable[[Path, InvocationLog], ClaudeAgentOptions]
Script = Sequence[ModelReply] | Callable[[Path], Sequence[ModelReply]]


@dataclass(frozen=True)
class Scenario:
    """One agent and one conversation, the same for both runs."""

    name: str
    build: Builder
    script: Script
    """The model's replies; a function of the run's workspace where a call names a path."""
    turns: Sequence[str]
    files: Mapping[str, str] = field(default_factory=lambda: cast(dict[str, str], {}))
    """Files (relative path: text) each run's workspace starts with."""
    approvals: Sequence[bool] = ()
    """One decision per call that asks, in the model's order; a call asking beyond them is
    approved (so the run goes on) and shows in `Run.asked`."""
    images: Mapping[int, Sequence[bytes]] = field(
        default_factory=lambda: cast(dict[int, Sequence[bytes]], {})
    )
    """PNG images sent with a turn, by turn number (from 1): plain sends the turn as one user
    message of content blocks (its text, then an image block each); the session uploads
    them and sends them with the message (``images=``)."""
    default_tool_effect: ToolEffect = ToolEffect.READ
    """The session's default effect for a tool that declares none (`session_flow`)."""
    config_files: Mapping[str, str] = field(default_factory=lambda: cast(dict[str, str], {}))
    """Files each run's config folder starts with: the user's settings and CLAUDE.md of plain's
    ``CLAUDE_CONFIG_DIR``; the adapter's ``config_root`` for the session, under which each step
    has a private config folder of its own."""

    def replies(self, workspace: Path) -> Sequence[ModelReply]:
        return self.script(workspace) if callable(self.script) else self.script


@dataclass(frozen=True)
class RunFolders:
    """One run's folders: everything it may write is under ``root``."""

    root: Path

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def config(self) -> Path:
        """Plain: ``CLAUDE_CONFIG_DIR``; the session: the adapter's ``config_root``."""
        return self.root / "config"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def tool_log(self) -> Path:
        return self.root / "tools.jsonl"

    def placeholders(self) -> dict[str, str]:
        return placeholders(self.root, self.workspace)

    def prepare(self, files: Mapping[str, str], config_files: Mapping[str, str] | None = None) -> None:
        for folder in (self.workspace, self.config, self.home, self.root / "tmp"):
            folder.mkdir(parents=True, exist_ok=True)
        for base, found in ((self.workspace, files), (self.config, config_files or {})):
            for name, text in found.items():
                path = base / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)


@dataclass(frozen=True)
class Run:
    """What one run showed."""

    requests: list[dict[str, Any]]
    """Every model request as the model saw it (`normalise_request`), in order."""
    results: list[str | None]
    """Each turn's final result text."""
    errors: list[str | None]
    asked: list[tuple[str, Any]]
    """Every call that asked for approval: tool name and arguments (as JSON)."""
    tool_runs: list[dict[str, Any]]
    """Every real run of a custom tool (`InvocationLog` kind ``tool``), in the order they ended."""
    hooks: list[dict[str, Any]]
    """Every hook callback that fired (`InvocationLog` kind ``hook``), in order."""
    files: dict[str, str]
    """The workspace's files after the run."""
    transcript: list[Any] = field(default_factory=lambda: cast(list[Any], []))
    """Plain: Claude Code's own history of the conversation; the session: the messages it
    stored (`transcript.py`)."""
    model_attempts: int | None = None
    """The attempts of the session's model steps; None for plain."""
    model_step_attempts: list[int] = field(default_factory=lambda: cast(list[int], []))
    """The session only: each model step's final attempt, in order (1: never retried)."""
    subtypes: list[str | None] = field(default_factory=lambda: cast(list[str | None], []))
    """Each turn's result subtype: plain, its `ResultMessage.subtype`; the session, the
    ``result.subtype`` of its `AgentSnapshot.framework_state` when the turn ended."""
    problems: list[str] = field(default_factory=lambda: cast(list[str], []))
    """What stopped the run short (a refused flow, a call left waiting)."""
    parameters: list[dict[str, Any]] = field(default_factory=lambda: cast(list[dict[str, Any]], []))
    """Each model request's parameters besides what the model reads (`request_parameters`)."""
    concurrent_tools: bool = False
    """Plain only: a model response asked for several tools at once. Claude Code runs the
    calls of one response that are safe to run together (read-only tools, an MCP tool marked
    ``readOnlyHint``) concurrently (the CLI's tool orchestration, its tools'
    ``isConcurrencySafe``), so the tool runs are then compared as a multiset."""


def unique(prefix: str) -> str:
    """A session ID, flow type and model key no earlier run on the same dev server used."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def scripted(
    options: ClaudeAgentOptions, base_url: str, folders: RunFolders, *, plain: bool
) -> ClaudeAgentOptions:
    """``options`` pointed at the scripted server, with the environment both runs share.

    The plain run also gets a private config folder and home, so that the CLI of a test
    never reads the ``~/.claude`` of whoever runs the tests (the adapter gives every step
    private ones of its own accord). Nothing else: the options are the user's, setting
    sources included.
    """
    env = {
        **options.env,
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": API_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "ENABLE_TOOL_SEARCH": "false",
        "DISABLE_AUTOUPDATER": "1",
    }
    if not plain:
        return replace(options, model=MODEL, env=env)
    env |= {
        "CLAUDE_CONFIG_DIR": str(folders.config),
        "HOME": str(folders.home),
        "TMPDIR": str(folders.root / "tmp"),
    }
    return replace(options, model=MODEL, env=env)


def _workspace_files(workspace: Path) -> dict[str, str]:
    files: dict[str, str] = {}
    for path in sorted(workspace.rglob("*")):
        if path.is_file():
            files[str(path.relative_to(workspace))] = path.read_text(errors="replace")
    return files


def _log_views(log: InvocationLog, folders: RunFolders) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    skip = {"kind", "pid", "at", "worker"}

    def view(entry: dict[str, Any]) -> dict[str, Any]:
        return cast(
            dict[str, Any],
            normalise_value({k: v for k, v in entry.items() if k not in skip}, folders.placeholders()),
        )

    return [view(e) for e in log.entries("tool")], [view(e) for e in log.entries("hook")]


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


# -- plain -------------------------------------------------------------------------------


async def run_plain(scenario: Scenario, server: ScriptedModelServer, key: str, root: Path) -> Run:
    """The SDK itself: one `ClaudeSDKClient`, one ``query`` per turn."""
    folders = RunFolders(root)
    folders.prepare(scenario.files, scenario.config_files)
    server.script(key, scenario.replies(folders.workspace))
    log = InvocationLog(folders.tool_log)
    options = scripted(
        scenario.build(folders.workspace, log), server.base_url(key, api="anthropic"), folders, plain=True
    )
    approvals = list(scenario.approvals)
    asked: list[tuple[str, Any]] = []
    problems: list[str] = []

    async def can_use_tool(
        tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        asked.append((tool_name, normalise_value(tool_input, folders.placeholders())))
        if approvals and not approvals.pop(0):
            return PermissionResultDeny(message=REJECTION)
        return PermissionResultAllow()

    if options.can_use_tool is None:
        # The person who decides a call that asks (the session's approvals); an example with
        # a callback of its own keeps it, in both runs.
        with warnings.catch_warnings():
            # The SDK warns that allowed_tools shadow the callback: as intended, a pre-approved
            # tool asks nobody, as in the examples.
            warnings.simplefilter("ignore")
            options = replace(options, can_use_tool=can_use_tool)
    results: list[str | None] = []
    errors: list[str | None] = []
    subtypes: list[str | None] = []
    claude_session: str | None = None
    async with ClaudeSDKClient(options) as client:
        for number, text in enumerate(scenario.turns, 1):
            images = scenario.images.get(number, ())
            await client.query(_user_message_with_images(text, images) if images else text)
            result: ResultMessage | None = None
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    result = message
            subtypes.append(result.subtype if result is not None else None)
            if result is not None:
                claude_session = result.session_id
            if result is None:
                results.append(None)
                errors.append("no ResultMessage")
            elif result.is_error:
                results.append(None)
                errors.append(f"{result.subtype}: {result.result}")
            else:
                results.append(result.result)
                errors.append(None)
    tool_runs, hooks = _log_views(log, folders)
    return Run(
        requests=[normalise_request(r.body, folders.placeholders()) for r in server.requests(key)],
        results=results,
        errors=errors,
        asked=asked,
        tool_runs=tool_runs,
        hooks=hooks,
        files=_workspace_files(folders.workspace),
        transcript=(
            plain_transcript(claude_session, folders.config, folders.workspace, folders.placeholders())
            if claude_session
            else []
        ),
        subtypes=subtypes,
        problems=problems,
        parameters=[request_parameters(r.headers, r.body) for r in server.requests(key)],
        concurrent_tools=calls_in_parallel(scenario.replies(folders.workspace)),
    )


async def _user_message_with_images(text: str, images: Sequence[bytes]) -> AsyncIterator[dict[str, Any]]:
    """One user message of content blocks, as the SDK's streaming input takes it."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for data in images:
        source = {"type": "base64", "media_type": "image/png", "data": base64.b64encode(data).decode("ascii")}
        content.append({"type": "image", "source": source})
    yield {
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": None,
    }


# -- session -----------------------------------------------------------------------------


def session_flow(
    options: ClaudeAgentOptions,
    flow_type: str,
    folders: RunFolders,
    *,
    default_tool_effect: ToolEffect = ToolEffect.READ,
) -> AgentSessionFlow:
    """The session flow of the options (already `scripted`)."""
    # Plain asks nobody before a custom tool runs (the examples pre-approve them); the
    # session's default effect (unclassified) would ask about every call. The adapter's
    # floors for Write, Edit and Bash stay.
    session_options = AgentSessionOptions(timings=TIMINGS, default_tool_effect=default_tool_effect)
    return claude_agent_session_flow(
        options, flow_type=flow_type, config_root=folders.config, options=session_options
    )


async def run_session(
    scenario: Scenario, server: ScriptedModelServer, key: str, root: Path, temporal_address: str
) -> Run:
    """Serve the options as a sessionflow session (in-process worker) and play the same turns."""
    folders = RunFolders(root)
    folders.prepare(scenario.files, scenario.config_files)
    server.script(key, scenario.replies(folders.workspace))
    log = InvocationLog(folders.tool_log)
    options = scripted(
        scenario.build(folders.workspace, log), server.base_url(key, api="anthropic"), folders, plain=False
    )
    try:
        flow = session_flow(options, key, folders, default_tool_effect=scenario.default_tool_effect)
    except Exception as error:
        return _refused(error, folders)
    async with serving(temporal_address, flow) as sessions:
        return await play_session(scenario, sessions, key, server, folders)


def _refused(error: Exception, folders: RunFolders) -> Run:
    return Run(
        requests=[],
        results=[],
        errors=[],
        asked=[],
        tool_runs=[],
        hooks=[],
        files=_workspace_files(folders.workspace),
        problems=[
            f"the adapter refused the options when the flow was built: {type(error).__name__}: {error}"
        ],
    )


async def play_session(
    scenario: Scenario,
    sessions: AgentSessionClient,
    session_id: str,
    server: ScriptedModelServer,
    folders: RunFolders,
) -> Run:
    """Play the scenario's turns and decisions on a served flow (the session ID is the model key)."""
    approvals = list(scenario.approvals)
    asked: list[tuple[str, Any]] = []
    problems: list[str] = []
    results: list[str | None] = []
    errors: list[str | None] = []
    subtypes: list[str | None] = []
    seen = 0
    for number, text in enumerate(scenario.turns, 1):
        images = [
            await sessions.upload_image(session_id, data, "image/png")
            for data in scenario.images.get(number, ())
        ]
        if number == 1 and not images:
            await sessions.start_session(session_id, text)
        else:
            if number == 1:
                await sessions.start_session(session_id)
            assert await sessions.send_user_message(session_id, text, images=images)
        try:
            snapshot = await _play_turn(sessions, session_id, number, approvals, asked, folders)
        except TimeoutError as error:
            problems.append(f"turn {number} never ended: {error}")
            break
        assert snapshot.state is not None
        result = _framework_result(snapshot)
        subtypes.append(None if result is None else cast(str | None, result.get("subtype")))
        error = snapshot.state.last_turn_error
        if error is None and result is not None and result.get("is_error") is True:
            # The turn ended as Claude Code ends a failed one (``error_max_turns``): plain's
            # `ResultMessage` is an error, and its text is None.
            error = f"{result.get('subtype')}: {result.get('result')}"
        messages = await stored_messages(sessions, session_id)
        errors.append(error)
        shown = result.get("result") if result is not None else None
        # Plain's turn result is its ResultMessage's; the session keeps that in its state.
        results.append(None if error else shown if isinstance(shown, str) else _turn_result(messages[seen:]))
        seen = len(messages)
    history = await read_step_history(sessions.client, session_id)
    model_steps = [s.final_attempt for s in history if s.step_type == "sessionflow.RunModel"]
    log = InvocationLog(folders.tool_log)
    tool_runs, hooks = _log_views(log, folders)
    return Run(
        requests=[normalise_request(r.body, folders.placeholders()) for r in server.requests(session_id)],
        results=results,
        errors=errors,
        asked=asked,
        tool_runs=tool_runs,
        hooks=hooks,
        files=_workspace_files(folders.workspace),
        transcript=session_transcript(await sessions.export_messages(session_id), folders.placeholders()),
        model_attempts=sum(model_steps),
        model_step_attempts=model_steps,
        subtypes=subtypes,
        problems=problems,
        parameters=[request_parameters(r.headers, r.body) for r in server.requests(session_id)],
    )


def _framework_result(snapshot: AgentSnapshot) -> dict[str, Any] | None:
    """The ``result`` the adapter keeps in the snapshot's framework state (its `ResultMessage`)."""
    state = snapshot.framework_state or {}
    result = state.get("result")
    return cast(dict[str, Any], result) if isinstance(result, dict) else None


async def stored_messages(sessions: AgentSessionClient, session_id: str) -> list[AgentMessage]:
    """Every stored message of the session, oldest first."""
    return await sessions.stored_messages(session_id)


async def _play_turn(
    sessions: AgentSessionClient,
    session_id: str,
    number: int,
    approvals: list[bool],
    asked: list[tuple[str, Any]],
    folders: RunFolders,
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
            sessions, session_id, probe, description=f"turn {number} to end or ask", timeout=120
        )
        if not snapshot.pending_interrupts:
            return snapshot
        for interrupt in snapshot.pending_interrupts:
            asked.append(
                (
                    interrupt.tool_name,
                    normalise_value(_arguments(interrupt.arguments), folders.placeholders()),
                )
            )
            approved = approvals.pop(0) if approvals else True
            assert await sessions.resolve_interrupt(
                session_id,
                interrupt.interrupt_id,
                approved=approved,
                rejection_message=None if approved else REJECTION,
            )


def _turn_result(turn: Sequence[AgentMessage]) -> str | None:
    """The turn's final result: the text of its last assistant message with text."""
    texts = [m.message.text for m in turn if m.message.role is MessageRole.ASSISTANT and m.message.text]
    return texts[-1] if texts else None


# -- both --------------------------------------------------------------------------------


async def run_both(
    scenario: Scenario, server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> tuple[Run, Run]:
    """The plain run, then the session, each on its own key of ``server``."""
    key = unique(f"claude-diff-{scenario.name}")
    plain = await run_plain(scenario, server, f"{key}-plain", tmp_path / "plain")
    session = await run_session(scenario, server, f"{key}-session", tmp_path / "session", temporal_address)
    return plain, session


FLOOR_TOOLS = frozenset({"Write", "Edit", "Bash"})
"""Claude Code's tools whose approval is the session's floor."""


def assert_same_run(
    plain: Run,
    session: Run,
    *,
    session_asked: list[tuple[str, Any]] | None = None,
    several_requests_in_a_step: int = 0,
) -> None:
    """The session behaved as the plain run; every difference is listed at once.

    ``session_asked``: the calls the session asks about where that deliberately differs from
    plain (the floors of `FLOOR_TOOLS`, adapter README, "Deliberate differences"): the test
    states every call, in order, and asserts plain's apart. Without it the session must ask
    about exactly the calls plain asked about.
    """
    problems = [f"plain: {p}" for p in plain.problems] + list(session.problems)
    problems += _turn_differences(plain, session)
    # Where the CLI answers a call itself (a deny rule, a tool that does not exist) or
    # compacts the conversation (``/compact``), it asks the model again inside one model
    # step: the test names how many such requests it expects.
    calls = len(session.requests) - several_requests_in_a_step
    if session.model_attempts is not None and calls > session.model_attempts:
        problems.append(
            f"the session made {calls} model call(s) in {session.model_attempts} model step attempt(s): "
            "a step made more than one (hidden model calls)"
        )
    problems += _request_differences(plain.requests, session.requests)
    # Deliberate: Write and Edit ask on every call and Bash unless an allow list lifts it (the
    # session's floors, adapter README); Claude Code's permission options never remove them.
    # The test names those calls (``session_asked``); nothing is filtered here.
    if session_asked is not None:
        if plain.asked == session_asked:
            problems.append(
                "the test expects the session to ask about other calls than plain, but plain asked "
                f"about the same: {pretty(plain.asked)}"
            )
        if session.asked != session_asked:
            problems.append(
                "the calls the session asked about differ from the test's (- expected, + session):\n"
                + diff(session_asked, session.asked)
            )
    elif plain.asked != session.asked:
        problems.append(
            f"the calls that asked for approval differ (- plain, + session):\n{diff(plain.asked, session.asked)}"
        )
    runs = tool_runs_difference(plain.tool_runs, session.tool_runs, concurrent=plain.concurrent_tools)
    if runs is not None:
        order = "as a multiset" if plain.concurrent_tools else "in order"
        problems.append(f"the real tool runs differ, {order} (- plain, + session):\n{diff(*runs)}")
    for what, a, b in [
        ("the hooks that fired", plain.hooks, session.hooks),
        ("the workspace's files", plain.files, session.files),
        (
            "the stored transcript (plain: Claude Code's own history)",
            results_in_call_order(plain.transcript, concurrent=plain.concurrent_tools),
            results_in_call_order(session.transcript, concurrent=plain.concurrent_tools),
        ),
    ]:
        if a != b:
            problems.append(f"{what} differ (- plain, + session):\n{diff(a, b)}")
    if problems:
        raise AssertionError(
            "the session differs from the plain Claude Agent SDK:\n\n" + "\n\n".join(problems)
        )


def _turn_differences(plain: Run, session: Run) -> list[str]:
    problems: list[str] = []
    for index, (plain_error, result) in enumerate(zip(plain.errors, plain.results, strict=True)):
        number = index + 1
        if index >= len(session.errors):
            problems.append(f"turn {number}: the session never finished it")
            continue
        session_error, session_result = session.errors[index], session.results[index]
        if plain_error is None and session_error is not None:
            problems.append(f"turn {number} failed in the session: {session_error}")
        elif plain_error is not None and session_error is None:
            problems.append(
                f"turn {number}: plain failed with {plain_error}; the session answered {session_result!r}"
            )
        elif plain_error != session_error:
            # Both failed: the same kind (the result's subtype) and the same text.
            problems.append(f"turn {number}'s error differs:\n- {plain_error!r}\n+ {session_error!r}")
        if result != session_result:
            problems.append(f"turn {number}'s result differs:\n- {result!r}\n+ {session_result!r}")
        if plain.subtypes and session.subtypes and index < len(session.subtypes):
            if plain.subtypes[index] != session.subtypes[index]:
                problems.append(
                    f"turn {number}'s result subtype differs:\n"
                    f"- {plain.subtypes[index]!r}\n+ {session.subtypes[index]!r}"
                )
    return problems


def _request_differences(plain: list[dict[str, Any]], session: list[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    if len(plain) != len(session):
        problems.append(f"model requests: plain made {len(plain)}, the session {len(session)}")
    for index, (a, b) in enumerate(zip(plain, session, strict=False)):
        for part in ("system", "tools", "messages"):
            if a[part] != b[part]:
                problems.append(
                    f"model request {index}, {part} differ (- plain, + session):\n{diff(a[part], b[part])}"
                )
    for index in range(len(session), len(plain)):
        problems.append(f"model request {index}, plain only:\n{pretty(plain[index]['messages'][-1:])}")
    for index in range(len(plain), len(session)):
        problems.append(f"model request {index}, session only:\n{pretty(session[index]['messages'][-1:])}")
    return problems


# -- reading what the model saw ----------------------------------------------------------

PARAMETER_HEADERS = ("anthropic-beta", "user-agent", "x-client-app")
"""The headers an option of the SDK sets (``betas``, ``client_app``)."""


def request_parameters(headers: Mapping[str, str], body: Mapping[str, Any]) -> dict[str, Any]:
    """A request's parameters: every body field but what `normalise_request` compares
    (``messages``, ``system``, ``tools``) and ``metadata`` (its IDs change with every run),
    with the headers the options set."""
    shown = {k: v for k, v in body.items() if k not in ("messages", "system", "tools", "metadata")}
    return {**shown, "headers": {name: headers.get(name) for name in PARAMETER_HEADERS}}


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(cast(dict[str, Any], b).get("text", ""))
            for b in cast(list[Any], content)
            if isinstance(b, dict)
        )
    return ""


def tool_results(request: Mapping[str, Any]) -> dict[str, tuple[str, bool]]:
    """Every tool result a (normalised) request sends: its text and whether it is an error."""
    found: dict[str, tuple[str, bool]] = {}
    for message in cast(list[dict[str, Any]], request["messages"]):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in cast(list[dict[str, Any]], content):
            if block.get("type") == "tool_result":
                found[str(block["tool_use_id"])] = (
                    _block_text(block.get("content")),
                    block.get("is_error") is True,
                )
    return found


def user_texts(request: Mapping[str, Any]) -> list[str]:
    """The text blocks of the request's last user message."""
    users = [m for m in cast(list[dict[str, Any]], request["messages"]) if m.get("role") == "user"]
    if not users:
        return []
    content = users[-1].get("content")
    if isinstance(content, str):
        return [content]
    return [str(b.get("text")) for b in cast(list[dict[str, Any]], content or []) if b.get("type") == "text"]
