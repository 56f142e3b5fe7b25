"""OpenTelemetry spans of model and tool steps, when the `sessionflow[otel]` extra is installed.

opentelemetry is imported lazily: without it every function here does nothing, and the
core runs as before. With it, each step gets a span of its own (a child of Temporal's
``RunActivity`` span when `TracingInterceptor` is on) carrying the GenAI semantic
conventions' attributes plus sessionflow's effect, outcome and attempt.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from typing import Any

from sessionflow._environment import read_env

__all__ = [
    "TRACING_ENV",
    "StepSpan",
    "otel_installed",
    "step_span",
    "tracing_enabled",
    "tracing_interceptor",
    "worker_interceptors",
]

TRACING_ENV = "SESSIONFLOW_TRACING"
"""Set to 1 (or true/yes/on) to trace through `TracingInterceptor` without passing ``tracing=True``."""

_TRUE = {"1", "true", "yes", "on"}
_TRACER_NAME = "sessionflow"

AttributeValue = str | int | float | bool


@functools.cache
def otel_installed() -> bool:
    """Asked once per process: every step asks."""
    try:
        return importlib.util.find_spec("opentelemetry.trace") is not None
    except ModuleNotFoundError:  # not even the namespace package
        return False


def tracing_enabled(tracing: bool | None) -> bool:
    """`tracing` if given, else whether ``$SESSIONFLOW_TRACING`` switches it on."""
    if tracing is not None:
        return tracing
    return read_env(TRACING_ENV, "").strip().lower() in _TRUE


def tracing_interceptor() -> Any:
    """A `temporalio.contrib.opentelemetry.TracingInterceptor` (client and worker interceptor).

    Raises:
        ImportError: opentelemetry is not installed (``pip install "sessionflow[otel]"``).
    """
    if not otel_installed():
        raise ImportError(
            'tracing needs OpenTelemetry: pip install "sessionflow[otel]" (or switch tracing off)'
        )
    from temporalio.contrib.opentelemetry import TracingInterceptor

    return TracingInterceptor()


def worker_interceptors(client: Any, tracing: bool | None) -> list[Any]:
    """A `TracingInterceptor` for a worker when tracing is on and `client` has none.

    A worker takes its client's interceptors that are worker interceptors too, so a client
    of `connect(tracing=True)` already traces its workers' steps.
    """
    if not tracing_enabled(tracing):
        return []
    if any(type(i).__name__ == "TracingInterceptor" for i in client.config()["interceptors"]):
        return []
    return [tracing_interceptor()]


class StepSpan:
    """Attributes for the step's span; a no-op without opentelemetry or a recording span."""

    def __init__(self, span: Any) -> None:
        self._span = span

    def set(self, attributes: Mapping[str, AttributeValue | None]) -> None:
        if self._span is None:
            return
        self._span.set_attributes({k: v for k, v in attributes.items() if v is not None})


@contextmanager
def step_span(name: str, attributes: Mapping[str, AttributeValue | None]) -> Generator[StepSpan]:
    """A span named `name` around one step (``chat <model>`` or ``execute_tool <tool>``)."""
    if not otel_installed():
        yield StepSpan(None)
        return
    from opentelemetry import trace

    tracer = trace.get_tracer(_TRACER_NAME)
    kind = trace.SpanKind.CLIENT if name.startswith("chat") else trace.SpanKind.INTERNAL
    # The step's own outcome attribute says how it ended; an exception is recorded too.
    with tracer.start_as_current_span(name, kind=kind) as span:
        handle = StepSpan(span if span.is_recording() else None)
        handle.set(attributes)
        yield handle
