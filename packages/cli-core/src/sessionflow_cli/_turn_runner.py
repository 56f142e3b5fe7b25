"""The runner the command serves: it resolves each turn's settings before the framework runs.

Every model call first narrows the configuration file by the turn's session settings;
rejected settings fail the call with `ConfigError` (the session retries it, then fails the
turn with that error). The framework's runner is built per model, so a turn's ``model``
setting really picks the model. Tool calls run on the runner of their turn's model.

Every method of the runner contract is forwarded, the optional abilities too (the tool
catalog for the session's proposal checks, images, the verify of a write whose step died,
steering), so the command's sessions keep every
ability of the framework's runner.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import AsyncGenerator, Callable, Generator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

from sessionflow import ImageInput
from sessionflow.kit import (
    AgentFrameworkRunner,
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolExecution,
    FrameworkMessage,
    ToolCallsRequested,
    ToolExecutionError,
    ToolExecutionResult,
    VerifyResult,
)
from sessionflow_cli._ask_user import as_question
from sessionflow_cli._resident import ActivityMeter
from sessionflow_cli.config import ConfigError, TurnConfig, ignored_setting_keys

__all__ = ["BeforeModelStep", "TurnRunner", "wrap_runner"]

BeforeModelStep = Callable[[AgentTurnContext, TurnConfig], None]
"""Called before each model call with the turn's configuration (the demo scripts its model here)."""


class TurnRunner(AgentFrameworkRunner):
    """Resolves a turn, then delegates to the framework's runner for the turn's model."""

    def __init__(
        self,
        build: Callable[[str], AgentFrameworkRunner],
        resolve_settings: Callable[[Mapping[str, Any]], TurnConfig],
        default_model: str,
        *,
        before_model_step: BeforeModelStep | None = None,
    ) -> None:
        self._build = build
        self._resolve = resolve_settings
        self._default_model = default_model
        self._before = before_model_step
        self._runners: dict[str, AgentFrameworkRunner] = {}
        self._lock = threading.Lock()
        self._warned: set[tuple[str, ...]] = set()
        self.meter: ActivityMeter | None = None
        """Counts the calls in flight, for the resident worker's idle timeout."""

    @contextlib.contextmanager
    def _running(self) -> Generator[None]:
        if self.meter is None:
            yield
            return
        with self.meter.running():
            yield

    def runner_for(self, model: str) -> AgentFrameworkRunner:
        with self._lock:
            runner = self._runners.get(model)
            if runner is None:
                runner = self._runners[model] = self._build(model)
            return runner

    @property
    def default_runner(self) -> AgentFrameworkRunner:
        return self.runner_for(self._default_model)

    def resolve(self, settings: Mapping[str, Any]) -> TurnConfig:
        ignored = tuple(ignored_setting_keys(settings))
        if ignored and ignored not in self._warned:
            self._warned.add(ignored)
            print(f"Session settings keys ignored: {', '.join(ignored)}", file=sys.stderr, flush=True)
        return self._resolve(settings)

    def build_user_message(self, text: str) -> FrameworkMessage:
        return self.default_runner.build_user_message(text)

    def build_user_message_with_images(self, text: str, images: Sequence[ImageInput]) -> FrameworkMessage:
        return self.default_runner.build_user_message_with_images(text, images)

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        with self._running():
            return await self._run_model_step(turn)

    async def _run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        resolved = self.resolve(turn.session_settings)
        if self._before is not None:
            self._before(turn, resolved)
        outcome = await self.runner_for(resolved.model).run_model_step(turn)
        if isinstance(outcome, ToolCallsRequested):
            # `ask_user` is a question under every framework, not only those that say so.
            outcome = replace(outcome, tool_calls=[as_question(c) for c in outcome.tool_calls])
        return outcome

    def model_call_keys(self, session_settings: Mapping[str, Any]) -> list[str]:
        """The turn's model, which the worker's model call limits count the call against."""
        return [self.resolve(session_settings).model]

    def tool_catalog(self, session_settings: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]] | None:
        # The session asks right after the model step, whose settings resolved: the catalog
        # is that of the runner that made the proposals.
        return self.runner_for(self.resolve(session_settings).model).tool_catalog(session_settings)

    def accepts_steering(self) -> bool:
        # Asked once per session, for the framework: every model's runner is of the same one.
        return self.default_runner.accepts_steering()

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        try:
            resolved = self.resolve(call.session_settings)
        except ConfigError as error:
            raise ToolExecutionError(f"the turn's session settings are rejected: {error}") from None
        with self._running():
            return await self.runner_for(resolved.model).execute_deferred_tool_call(call)

    @asynccontextmanager
    async def worker_scope(self) -> AsyncGenerator[None]:
        # The runners are built per model on first use, after the worker started: each one
        # opens what it needs then, and its own scope closes it when the worker stops.
        try:
            yield
        finally:
            with self._lock:
                built = list(self._runners.values())
            for runner in built:
                async with runner.worker_scope():
                    pass

    async def verify_tool_call(self, call: DeferredToolExecution) -> VerifyResult | None:
        # On the runner of the write's turn, the one that deferred it and knows its verify.
        try:
            resolved = self.resolve(call.session_settings)
        except ConfigError as error:
            raise ToolExecutionError(f"the turn's session settings are rejected: {error}") from None
        with self._running():
            return await self.runner_for(resolved.model).verify_tool_call(call)


def wrap_runner(
    build: Callable[[str], AgentFrameworkRunner],
    resolve_settings: Callable[[Mapping[str, Any]], TurnConfig],
    default_model: str,
    *,
    before_model_step: BeforeModelStep | None = None,
) -> TurnRunner:
    """The wrapper of the framework's runner for `default_model` and the others a turn picks.

    Builds the runner of `default_model` at once, so a framework that cannot build fails
    before the command serves anything.
    """
    first = build(default_model)
    wrapper = TurnRunner(build, resolve_settings, default_model, before_model_step=before_model_step)
    wrapper._runners[default_model] = first  # pyright: ignore[reportPrivateUsage]
    return wrapper
