"""Play one case against one framework: start workers, run the steps, check what happened.

Besides the driver it holds what playing needs: the flow of one (case, framework), built
the same in the test process and in its workers; the case's tools, as neutral `ToolSpec`s
whose every real run is logged; waits for a session condition that stop as soon as it can
no longer come true; and `ConformanceFailure`, the error a non-conforming framework causes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

from temporalio.client import Client

from sessionflow._environment import read_env
from sessionflow.kit._flow import AgentSessionFlow
from sessionflow.kit._frameworks import FrameworkSpec, HarnessContext
from sessionflow.kit._tool_output import ToolOutput
from sessionflow.kit._tool_specs import ToolSpec, ToolVerifier
from sessionflow.plugins import LOAD_PLUGINS_ENV, build_runner
from sessionflow.session.errors import SessionRunError
from sessionflow.session.events import AgentEvent
from sessionflow.session.invocation import ToolInvocation
from sessionflow.session.options import AgentSessionOptions, SessionTimings
from sessionflow.session.state import AgentInterrupt, AgentSnapshot, AgentStatus
from sessionflow.session.tools import AgentToolCallStatus, ToolExecutionError
from sessionflow.session.verify import EffectUnknown, NoEffect, TookEffect, VerifyCall, VerifyResult
from sessionflow.temporal.client._client import AgentSessionClient
from sessionflow.temporal.client._step_history import read_step_history
from sessionflow.temporal.worker._worker import serve_agent_flows
from sessionflow.temporal.workflow._replay import export_history
from sessionflow.testing._gates import FileGate, InvocationLog
from sessionflow.testing._stack import AgentTestStack
from sessionflow.testing._timings import CRASH_TIMINGS
from sessionflow.testing._waiting import wait_until
from sessionflow.testing.conformance._case_files import preview, write_png
from sessionflow.testing.conformance._cases import (
    CaseTool,
    CheckStep,
    ConformanceCase,
    KillPoint,
    KillWorkerStep,
    ReleaseGatesStep,
    ResolveStep,
    SendStep,
    StartStep,
    Step,
    ToolVerify,
    WaitGatesStep,
    WaitIdleStep,
    WaitInterruptStep,
    WaitModelRequestsStep,
    WaitToolCallsStep,
    action_name,
)
from sessionflow.testing.conformance._checks import (
    Observation,
    check_expectations,
    check_invariants,
    read_durable_events,
)
from sessionflow.testing.conformance._runtime import (
    CASE_FILE_ENV,
    FLOW_TYPE_ENV,
    FRAMEWORK_ENV,
    MODEL_BASE_URL_ENV,
    WORKER_MODULE,
    ConformanceRuntime,
)

__all__ = [
    "CONFORMANCE_TIMINGS",
    "INVOCATIONS_FILE",
    "MODEL_NAME",
    "CaseRun",
    "ConformanceFailure",
    "PlayedCase",
    "ScriptedCrash",
    "build_case_flow",
    "build_tool",
    "case_timings",
    "invocation_log",
    "play_case",
    "settled",
    "wait_for_session",
]

T = TypeVar("T")


# --------------------------------------------------------------------------- failure
# The error a non-conforming framework causes.


class ConformanceFailure(SessionRunError, AssertionError):
    """The framework did not behave as the case expects; the message lists every difference."""


# --------------------------------------------------------------------------- tools
# Tool behaviours of the cases, as neutral `ToolSpec`s whose every real run is logged.


INVOCATIONS_FILE = "invocations.jsonl"


class ScriptedCrash(SessionRunError, RuntimeError):
    """A plain exception a ``crash`` tool raises: the session must treat it as a crash, not a tool error."""


def invocation_log(state_dir: Path) -> InvocationLog:
    """The log every tool run of one case is recorded in (kind ``tool``)."""
    return InvocationLog(state_dir / INVOCATIONS_FILE)


def build_tool(tool: CaseTool, state_dir: Path) -> ToolSpec:
    """The `ToolSpec` for ``tool``; its handler logs the run, then plays the behaviour."""
    log = invocation_log(state_dir)
    behaviour = tool.behaviour

    async def handler(arguments: dict[str, Any], invocation: ToolInvocation) -> str | ToolOutput:
        log.record(
            "tool",
            tool.name,
            tool_call_id=invocation.tool_call_id,
            idempotency_key=invocation.idempotency_key,
            attempt=invocation.attempt,
            arguments=arguments,
        )
        match behaviour.kind:
            case "error":
                raise ToolExecutionError(behaviour.message)
            case "crash":
                if invocation.attempt <= behaviour.times:
                    raise ScriptedCrash(f"scripted crash of {tool.name!r} on attempt {invocation.attempt}")
            case "block":
                if invocation.attempt <= behaviour.attempts:
                    await FileGate(state_dir, behaviour.gate).wait_for_release()
            case "answer":
                return invocation.answer if invocation.answer is not None else ""
            case "return":
                pass
        if behaviour.state_update is not None:
            return ToolOutput(text=behaviour.output(), state_update=behaviour.state_update)
        return behaviour.output()

    return ToolSpec(
        name=tool.name,
        description=tool.description,
        parameters=tool.parameters,
        effect=tool.effect,
        policy=tool.policy,
        handler=handler,
        mcp_annotations=tool.mcp_annotations,
        needs_approval=tool.framework_approval == "required",
        pre_approved=tool.framework_approval == "pre_approved",
        question=_question_of(tool.question_argument) if tool.question_argument else None,
        verify=_verifier(tool.verify, tool.name, log) if tool.verify is not None else None,
        verify_basis=_basis if tool.verify is not None else None,
    )


def _question_of(argument: str) -> Callable[[Mapping[str, Any]], str]:
    def question(arguments: Mapping[str, Any]) -> str:
        return str(arguments.get(argument, ""))

    return question


def _basis(arguments: dict[str, Any]) -> str:
    """What a case tool records at deferral: its arguments, so a verify can be checked against them."""
    return json.dumps(arguments, sort_keys=True)


def _verifier(verify: ToolVerify, name: str, log: InvocationLog) -> ToolVerifier:
    """The case's verify: logs the run (kind ``verify``), then answers as the case says."""

    def run(arguments: dict[str, Any], call: VerifyCall) -> VerifyResult:
        log.record(
            "verify",
            name,
            tool_call_id=call.tool_call_id,
            idempotency_key=call.idempotency_key,
            attempt=call.attempt,
            basis=call.basis,
        )
        if verify.answer == "succeeded":
            return TookEffect(output=verify.text)
        if verify.answer == "failed":
            return NoEffect(message=verify.text)
        return EffectUnknown(reason=verify.text)

    return run


# --------------------------------------------------------------------------- flow
# Build the flow of one (case, framework): the same in the test process and in its workers.


MODEL_NAME = "scripted-model"

CONFORMANCE_TIMINGS = CRASH_TIMINGS


def case_timings(case: ConformanceCase) -> SessionTimings:
    if case.interrupt_deadline_seconds is None:
        return CONFORMANCE_TIMINGS
    return replace(CONFORMANCE_TIMINGS, interrupt_deadline=timedelta(seconds=case.interrupt_deadline_seconds))


def build_case_flow(
    case: ConformanceCase,
    framework: FrameworkSpec,
    *,
    flow_type: str,
    model_base_url: str,
    state_dir: Path,
) -> AgentSessionFlow:
    """Build the framework's runner for the case's neutral agent, in a flow with the case's options.

    The framework gets the same `HarnessContext` the CLI gives it: the scripted model
    server, the case's tools and none of the framework's own, no settings, and the
    play's state folder as the workspace.

    Raises:
        PluginError: ``build_runner`` raised or returned something that is not an
            `AgentFrameworkRunner`; the message names the plugin and the framework.
    """
    tools = [build_tool(tool, state_dir) for tool in case.tools]
    options = AgentSessionOptions(tool_policies=case.tool_policies, timings=case_timings(case))
    context = HarnessContext(
        flow_type=flow_type,
        model=MODEL_NAME,
        system_prompt=case.system_prompt,
        workspace=state_dir,
        options=options,
        tools=tools,
        settings={},
        model_base_url=model_base_url,
        # The scripted model server takes any key; a fixed one keeps the environment's out.
        api_key="test",
        api=None,
        framework_tools=False,
        output_validator=case.output_check,
        carry=case.carry_counter,
    )
    return AgentSessionFlow(build_runner(framework, context), flow_type=flow_type, options=options)


# --------------------------------------------------------------------------- waits
# Wait for a session condition, and stop waiting as soon as it can no longer come true.


_POLL_SECONDS = 0.05


def settled(snapshot: AgentSnapshot) -> bool:
    """No turn runs and no message waits: nothing will happen until the test acts again."""
    state = snapshot.state
    return (
        state is not None
        and state.turn_count > 0
        and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
        and snapshot.queued_message_count == 0
    )


async def wait_for_session(
    sessions: AgentSessionClient,
    session_id: str,
    description: str,
    probe: Callable[[AgentSnapshot], T | None],
    *,
    timeout: float,
) -> T:
    """Poll the snapshot until ``probe`` returns something truthy, and return it.

    Raises:
        ConformanceFailure: The session settled while the probe still said no, so the
            condition cannot come true any more (a failed or finished turn).
        TimeoutError: Neither happened within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            snapshot = await sessions.get_agent_snapshot(session_id)
        except Exception as error:  # no worker answers queries while a replacement starts
            last_error = error
        else:
            value = probe(snapshot)
            if value:
                return value
            if settled(snapshot):
                state = snapshot.state
                assert state is not None
                raise ConformanceFailure(
                    f"the session settled before {description}: {state.turn_count} turn(s) ended, "
                    f"last_turn_error={preview(state.last_turn_error)}"
                )
        if time.monotonic() > deadline:
            detail = f" (last error: {last_error!r})" if last_error else ""
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {description}{detail}")
        await asyncio.sleep(_POLL_SECONDS)


# --------------------------------------------------------------------------- driver


WAIT_SECONDS = 60.0
"""Longest wait for one condition (a turn to end, a gate, an approval request)."""

_LOG_TAIL_LINES = 25


@dataclass(frozen=True)
class CaseRun:
    """One cell of the matrix: a case and the framework it is played against."""

    case: ConformanceCase
    framework: FrameworkSpec

    @property
    def id(self) -> str:
        return f"{self.framework.name}-{self.case.id}"


@dataclass(frozen=True, kw_only=True)
class PlayedCase:
    """A case that met its expectations, as a `ConformanceRuntime.after_play` check sees it.

    Attributes:
        case: The case.
        framework: The framework it was played against.
        session_id: The session's ID (its workflow ID).
        client: The test's Temporal client (the play's payload store is its data converter's).
        sessions: The session client the case was played with.
        state_dir: The play's state folder.
        observation: The last look at the session, the one the expectations were checked on.
    """

    case: ConformanceCase
    framework: FrameworkSpec
    session_id: str
    client: Client
    sessions: AgentSessionClient
    state_dir: Path
    observation: Observation


def play_case(runtime: ConformanceRuntime, run: CaseRun) -> None:
    """Play ``run`` on the runtime's loop; raises `ConformanceFailure` when it does not conform."""
    driver = _CaseDriver(runtime, run.case, run.framework)
    try:
        runtime.loop.run(driver.play(), timeout=run.case.timeout_seconds)
    except TimeoutError:
        raise ConformanceFailure(
            f"{run.case.id} on {run.framework.name!r} did not finish within {run.case.timeout_seconds:g} s "
            f"(the case's timeout_seconds); state folder: {driver.state_dir}"
        ) from None


class _CaseDriver:
    def __init__(self, runtime: ConformanceRuntime, case: ConformanceCase, framework: FrameworkSpec) -> None:
        self.runtime = runtime
        self.case = case
        self.framework = framework
        self.name = runtime.play_name(f"{framework.name}-{case.id}")
        self.session_id = self.name
        self.model_key = self.name
        self.state_dir = runtime.work_dir / self.name
        self.model_url = runtime.model_server.base_url(self.model_key, api=framework.model_api)
        self.images: dict[str, bytes] = {}
        self.interrupts: dict[str, str] = {}
        self.live_events: list[AgentEvent] = []
        self._first_event = asyncio.Event()
        self._followed = 0
        self._stack: AgentTestStack | None = None
        self._sessions: AgentSessionClient | None = None

    @property
    def stack(self) -> AgentTestStack:
        assert self._stack is not None
        return self._stack

    @property
    def sessions(self) -> AgentSessionClient:
        assert self._sessions is not None
        return self._sessions

    # -- the whole case --------------------------------------------------------------------

    async def play(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        for name, image in self.case.images.items():
            path = self.state_dir / "images" / f"{name}.png"
            self.images[name] = write_png(path, image.width, image.height, image.rgb)
        self.runtime.model_server.script(self.model_key, self.case.model)
        flow = build_case_flow(
            self.case,
            self.framework,
            flow_type=self.name,
            model_base_url=self.model_url,
            state_dir=self.state_dir,
        )
        env = {
            CASE_FILE_ENV: str(self.case.path.resolve()),
            FRAMEWORK_ENV: self.framework.name,
            FLOW_TYPE_ENV: self.name,
            MODEL_BASE_URL_ENV: self.model_url,
        }
        if not read_env(LOAD_PLUGINS_ENV, "").strip() and self.framework.plugin_name:
            # Import only the plugin that provides this framework: the child finds the same
            # framework without paying for every installed adapter's imports.
            env[LOAD_PLUGINS_ENV] = self.framework.plugin_name
        stack = AgentTestStack(
            self.state_dir,
            [flow],
            worker_module=WORKER_MODULE,
            worker_env=env,
            server_address=self.runtime.server_address,
        )
        async with stack:
            self._stack = stack
            self._sessions = stack.sessions(flow)
            try:
                await self._run(flow)
            except ConformanceFailure as failure:
                raise ConformanceFailure(f"{failure}\n{self._diagnostics()}") from None
            except Exception as error:
                raise ConformanceFailure(f"{type(error).__name__}: {error}\n{self._diagnostics()}") from error

    async def _run(self, flow: AgentSessionFlow) -> None:
        stop = asyncio.Event()
        in_process: asyncio.Task[None] | None = None
        follower: asyncio.Task[None] | None = None
        try:
            if self.case.worker == "process":
                await self.stack.start_worker()
            else:
                in_process = asyncio.create_task(serve_agent_flows(self.stack.client, [flow], stop=stop))
            for index, step in enumerate(self.case.steps):
                try:
                    await self._step(step)
                except (ConformanceFailure, TimeoutError) as error:
                    raise ConformanceFailure(f"step /steps/{index} ({action_name(step)}): {error}") from None
                if isinstance(step, StartStep) and self.case.worker == "in_process":
                    follower = asyncio.create_task(self._follow())
                    await asyncio.wait_for(self._first_event.wait(), WAIT_SECONDS)
            if follower is not None:
                await self._catch_up(follower)
            observation = await self._observe()
            failures = check_expectations(self.case.expect, observation) + check_invariants(observation)
            if failures:
                raise ConformanceFailure(
                    f"{self.case.id} ({self.case.title}) on {self.framework.name!r}:\n"
                    + "\n".join(f"  - {line}" for line in failures)
                )
            played = PlayedCase(
                case=self.case,
                framework=self.framework,
                session_id=self.session_id,
                client=self.stack.client,
                sessions=self.sessions,
                state_dir=self.state_dir,
                observation=observation,
            )
            for check in self.runtime.after_play:
                await check(played)
        finally:
            if follower is not None:
                follower.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await follower
            stop.set()
            if in_process is not None:
                # A worker error surfaces here only if the case did not already fail for it.
                await asyncio.wait_for(in_process, WAIT_SECONDS)

    async def _follow(self) -> None:
        """Follow `AgentSessionClient.events`; keep the live deltas (offset None) an in-process worker sends."""
        async for event in self.sessions.events(self.session_id):
            self._first_event.set()
            if event.offset is None:
                self.live_events.append(event)
            else:
                self._followed = event.offset

    async def _catch_up(self, follower: asyncio.Task[None]) -> None:
        """Let the follower reach the last durable event, so every live delta before it is in."""
        events = await read_durable_events(self.sessions, self.session_id)
        last = events[-1].offset or 0 if events else 0

        def caught_up() -> bool:
            if follower.done():
                follower.result()  # surface the follower's error
            return self._followed >= last

        await wait_until("the events() follower to catch up", caught_up, timeout=WAIT_SECONDS)

    # -- steps -----------------------------------------------------------------------------

    async def _step(self, step: Step) -> None:
        match step:
            case StartStep():
                await self.sessions.start_session(self.session_id, step.text)
            case SendStep():
                # Images go through the payload store, as the CLI sends them: the worker
                # copies each back from the store before its runner reads it.
                images = [
                    await self.sessions.upload_image(self.session_id, self.images[name], "image/png")
                    for name in step.images
                ]
                accepted = await self.sessions.send_user_message(
                    self.session_id,
                    step.text,
                    images=images,
                    double_texting=step.double_texting,
                    message_id=step.message_id,
                )
                if accepted is not step.expect_accepted:
                    raise ConformanceFailure(
                        f"send_user_message returned {accepted}, expected {step.expect_accepted}"
                    )
            case WaitIdleStep():
                await self._wait_idle(step.turns)
            case WaitInterruptStep():
                await self._wait_interrupt_step(step)
            case ResolveStep():
                await self._resolve(step)
            case WaitGatesStep():
                await self._wait_gates(step.gates)
            case ReleaseGatesStep():
                for gate in step.gates:
                    FileGate(self.state_dir, gate).release()
            case WaitModelRequestsStep():
                await self._wait_model_requests(step.count)
            case WaitToolCallsStep():
                await self._wait_tool_calls(step.statuses)
            case KillWorkerStep():
                await self._kill(step.at)
            case CheckStep():
                failures = check_expectations(step.expect, await self._observe())
                if failures:
                    raise ConformanceFailure(
                        "mid-run check failed:\n" + "\n".join(f"  - {f}" for f in failures)
                    )

    async def _wait(self, description: str, probe: Callable[[AgentSnapshot], T | None]) -> T:
        return await wait_for_session(
            self.sessions, self.session_id, description, probe, timeout=WAIT_SECONDS
        )

    async def _wait_tool_calls(self, statuses: Mapping[str, AgentToolCallStatus]) -> None:
        def reached(snapshot: AgentSnapshot) -> bool | None:
            now = {r.tool_call_id: r.status for r in snapshot.tool_calls}
            return all(now.get(key) is status for key, status in statuses.items()) or None

        await self._wait(f"tool calls {dict(statuses)} to be recorded", reached)

    async def _wait_idle(self, turns: int) -> AgentSnapshot:
        def done(snapshot: AgentSnapshot) -> AgentSnapshot | None:
            state = snapshot.state
            idle = state is not None and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
            return snapshot if idle and state is not None and state.turn_count >= turns else None

        return await self._wait(f"turn {turns} to end", done)

    async def _wait_interrupt(self, tool_call_id: str) -> AgentInterrupt:
        def find(snapshot: AgentSnapshot) -> AgentInterrupt | None:
            return next((i for i in snapshot.pending_interrupts if i.tool_call_id == tool_call_id), None)

        interrupt = await self._wait(f"an approval request for tool call {tool_call_id!r}", find)
        self.interrupts[tool_call_id] = interrupt.interrupt_id
        return interrupt

    async def _wait_interrupt_step(self, step: WaitInterruptStep) -> None:
        interrupt = await self._wait_interrupt(step.tool_call_id)
        problems: list[str] = []
        if step.tool_name is not None and interrupt.tool_name != step.tool_name:
            problems.append(f"tool_name {interrupt.tool_name!r}, expected {step.tool_name!r}")
        if step.arguments is not None:
            try:
                arguments: object = json.loads(interrupt.arguments)
            except ValueError:
                arguments = interrupt.arguments
            if arguments != step.arguments:
                problems.append(f"arguments {interrupt.arguments!r}, expected {step.arguments!r}")
        if step.kind is not None and interrupt.kind != step.kind:
            problems.append(f"kind {interrupt.kind!r}, expected {step.kind!r}")
        if step.question is not None and interrupt.question != step.question:
            problems.append(f"question {interrupt.question!r}, expected {step.question!r}")
        if step.has_deadline is not None and (interrupt.deadline is not None) is not step.has_deadline:
            problems.append(
                f"deadline {interrupt.deadline!r}, expected {'one' if step.has_deadline else 'none'}"
            )
        if problems:
            raise ConformanceFailure(f"approval request for {step.tool_call_id!r}: " + "; ".join(problems))

    async def _resolve(self, step: ResolveStep) -> None:
        interrupt_id = self.interrupts.get(step.tool_call_id)
        if interrupt_id is None:
            interrupt_id = (await self._wait_interrupt(step.tool_call_id)).interrupt_id
        accepted = await self.sessions.resolve_interrupt(
            self.session_id,
            interrupt_id,
            approved=step.approved,
            rejection_message=step.rejection_message,
            answer=step.answer,
        )
        if accepted is not step.expect_accepted:
            # The session's history shows what the workflow had seen when the answer came.
            history = self.state_dir / "history.json"
            await export_history(self.stack.client, self.session_id, history)
            raise ConformanceFailure(
                f"resolve_interrupt({interrupt_id!r}) returned {accepted}, expected {step.expect_accepted}"
                f" (the session's workflow history: {history})"
            )

    async def _wait_gates(self, names: tuple[str, ...]) -> None:
        gates = [FileGate(self.state_dir, name) for name in names]
        await self._wait(f"gates {list(names)} to be reached", lambda _: all(g.is_reached() for g in gates))
        # Every gate is reached and none released yet: the tools that wait there run at the same time.
        released = [gate.name for gate in gates if gate.is_released()]
        if released:
            raise ConformanceFailure(
                f"gates {released} were released before all of {list(names)} were reached"
            )

    async def _wait_model_requests(self, count: int) -> None:
        server, key = self.runtime.model_server, self.model_key
        await self._wait(f"model request {count}", lambda _: len(server.requests(key)) >= count)

    async def _kill(self, at: KillPoint | None) -> None:
        if at is not None and at.gate is not None:
            await self._wait_gates((at.gate,))
        elif at is not None and at.model_request is not None:
            await self._wait_model_requests(at.model_request)
        elif at is not None and at.interrupt is not None:
            await self._wait_interrupt(at.interrupt)
        self.stack.workers[-1].kill()
        await self.stack.start_worker()

    # -- observing -------------------------------------------------------------------------

    async def _observe(self) -> Observation:
        snapshot = await self.sessions.get_agent_snapshot(self.session_id)
        return Observation(
            session_id=self.session_id,
            snapshot=snapshot,
            events=await read_durable_events(self.sessions, self.session_id),
            live_events=list(self.live_events),
            requests=self.runtime.model_server.requests(self.model_key),
            invocations=invocation_log(self.state_dir).entries("tool"),
            steps=await read_step_history(self.stack.client, self.session_id),
            images=dict(self.images),
            resume_texts=self.framework.resume_texts,
        )

    def _diagnostics(self) -> str:
        lines = [
            f"case file: {self.case.path}",
            f"state folder: {self.state_dir}",
            f"session: {self.session_id}; model requests recorded: "
            f"{len(self.runtime.model_server.requests(self.model_key))}; scripted replies left unused: "
            f"{self.runtime.model_server.remaining(self.model_key)}",
        ]
        for index, worker in enumerate(self._stack.workers if self._stack else [], start=1):
            tail = worker.log().splitlines()[-_LOG_TAIL_LINES:]
            lines.append(f"worker {index} (pid {worker.pid}) log tail, {worker.log_path}:")
            lines += [f"    {line}" for line in tail] or ["    (empty)"]
        return "\n".join(lines)
