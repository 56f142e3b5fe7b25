"""A Temporal server that does not answer: one sessionflow error, and a quiet log.

temporalio's client retries an unavailable server for about ten seconds, logging a warning
to the console on every retry, and then raises a raw `RPCError`. The caller learns the
same thing from our error alone, so the retries stay (a short blip heals) and their
warnings go.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from temporalio.client import (
    CancelWorkflowInput,
    CountWorkflowsInput,
    DescribeWorkflowInput,
    Interceptor,
    OutboundInterceptor,
    QueryWorkflowInput,
    SignalWorkflowInput,
    StartWorkflowInput,
    StartWorkflowUpdateInput,
    StartWorkflowUpdateWithStartInput,
    TerminateWorkflowInput,
    WorkflowExecutionCount,
    WorkflowExecutionDescription,
    WorkflowHandle,
    WorkflowUpdateHandle,
)
from temporalio.runtime import LoggingConfig, Runtime, TelemetryConfig, TelemetryFilter
from temporalio.service import RPCError, RPCStatusCode

from sessionflow.session.errors import SessionRunError

__all__ = [
    "LOG_FILTER",
    "ServerUnreachableError",
    "UnreachableServerInterceptor",
    "quiet_runtime",
    "unreachable",
]

T = TypeVar("T")

# Core's default filter (WARN for its own targets, ERROR for the rest), minus the retry
# warnings: the directive for the more specific target wins.
LOG_FILTER = (
    TelemetryFilter(core_level="WARN", other_level="ERROR").formatted() + ",temporalio_client::retry=ERROR"
)

_runtime: Runtime | None = None
_runtime_lock = threading.Lock()


class ServerUnreachableError(SessionRunError, RuntimeError):
    """The Temporal server cannot be reached (nothing answers, or it does not accept calls).

    Also a `RuntimeError`: what `connect` raised for an unreachable server before.

    Attributes:
        address: The server's ``host:port``.
        reason: What the client reported, in one line.
    """

    def __init__(self, address: str, reason: str) -> None:
        super().__init__(f"the Temporal server at {address} is unreachable: {reason}")
        self.address = address
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        # The constructor takes (address, reason), not the formatted text in `args`.
        return (type(self), (self.address, self.reason))


def quiet_runtime() -> Runtime:
    """The runtime of sessionflow's clients: core's default logging without the retry warnings.

    One per process, made on first use: a runtime owns threads.
    """
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            _runtime = Runtime(telemetry=TelemetryConfig(logging=LoggingConfig(filter=LOG_FILTER)))
        return _runtime


def unreachable(address: str, error: BaseException) -> ServerUnreachableError | None:
    """The sessionflow error for `error` when it says the server is not there, else None."""
    if isinstance(error, RPCError):
        if error.status is not RPCStatusCode.UNAVAILABLE:
            return None
        return ServerUnreachableError(address, error.message or error.status.name)
    text = str(error)
    if isinstance(error, RuntimeError) and text.startswith("Failed client connect"):
        return ServerUnreachableError(address, _short(text.removeprefix("Failed client connect: ")))
    return None


def _short(text: str) -> str:
    # tonic's errors nest several layers deep; the innermost "message" says it best.
    marker = 'message: "'
    if marker in text:
        inner = text.rsplit(marker, 1)[1]
        return inner.split('"', 1)[0]
    return text.splitlines()[0] if text else "no answer"


class UnreachableServerInterceptor(Interceptor):
    """Turns an unavailable server's `RPCError` into `ServerUnreachableError` for client calls.

    Covers the calls that `AgentSessionClient` makes (start, query, signal, update,
    describe, cancel, terminate, count); listing iterators and raw service calls keep
    temporalio's errors.
    """

    def __init__(self, address: str) -> None:
        self._address = address

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        return _Outbound(next, self._address)


class _Outbound(OutboundInterceptor):
    def __init__(self, next: OutboundInterceptor, address: str) -> None:
        super().__init__(next)
        self._address = address

    async def _call(self, call: Callable[[], Awaitable[T]]) -> T:
        try:
            return await call()
        except RPCError as error:
            translated = unreachable(self._address, error)
            if translated is None:
                raise
            raise translated from None

    async def start_workflow(self, input: StartWorkflowInput) -> WorkflowHandle[Any, Any]:
        return await self._call(lambda: self.next.start_workflow(input))

    async def cancel_workflow(self, input: CancelWorkflowInput) -> None:
        await self._call(lambda: self.next.cancel_workflow(input))

    async def describe_workflow(self, input: DescribeWorkflowInput) -> WorkflowExecutionDescription:
        return await self._call(lambda: self.next.describe_workflow(input))

    async def count_workflows(self, input: CountWorkflowsInput) -> WorkflowExecutionCount:
        return await self._call(lambda: self.next.count_workflows(input))

    async def query_workflow(self, input: QueryWorkflowInput) -> Any:
        return await self._call(lambda: self.next.query_workflow(input))

    async def signal_workflow(self, input: SignalWorkflowInput) -> None:
        await self._call(lambda: self.next.signal_workflow(input))

    async def terminate_workflow(self, input: TerminateWorkflowInput) -> None:
        await self._call(lambda: self.next.terminate_workflow(input))

    async def start_workflow_update(self, input: StartWorkflowUpdateInput) -> WorkflowUpdateHandle[Any]:
        return await self._call(lambda: self.next.start_workflow_update(input))

    async def start_update_with_start_workflow(
        self, input: StartWorkflowUpdateWithStartInput
    ) -> WorkflowUpdateHandle[Any]:
        return await self._call(lambda: self.next.start_update_with_start_workflow(input))
