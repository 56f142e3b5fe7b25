"""Partial output while a model step streams: what plain ``run_stream().stream_output()`` yields.

From the response's final result on (Pydantic AI's `FinalResultEvent`: the output tool's
call, or the text of a structured text output), each snapshot of the response is
validated as the plain stream validates it (``validate_response_output(allow_partial=True)``:
partial JSON, output functions and validators see ``ctx.partial_output``) and published as
a ``custom_event`` with ``kind="partial_output"``. Nothing here decides the output: the
run's own output handling does, once, after the stream; a snapshot that does not validate
is skipped, and no failure of one ever fails the step.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import pydantic_core
from pydantic_ai import FinalResultEvent
from pydantic_ai._output import OutputSchema, TextOutputProcessor
from pydantic_ai.messages import ModelResponsePart
from pydantic_ai.result import AgentStream

from sessionflow.kit import AgentEventWriter

__all__ = ["PARTIAL_OUTPUT_INTERVAL", "PARTIAL_OUTPUT_KIND", "PartialOutputs"]

PARTIAL_OUTPUT_INTERVAL = 0.1
"""Seconds between two published snapshots, as ``stream_output()`` debounces by default."""

PARTIAL_OUTPUT_KIND = "partial_output"
"""The ``kind`` of the ``custom_event``s that carry a partial output."""

_log = logging.getLogger(__name__)
_NOTHING = object()


class PartialOutputs:
    """Publishes one stream's partial outputs, at most one per `interval` seconds (0: every
    change; None: none), and the last snapshot when the stream ends."""

    def __init__(
        self,
        stream: AgentStream[Any, Any],
        schema: OutputSchema[Any],
        events: AgentEventWriter,
        interval: float | None,
    ) -> None:
        self._stream = stream
        self._schema = schema
        self._events = events
        self._interval = interval
        self._tool_name: str | None = None
        self._active = False
        self._validated: list[ModelResponsePart] | None = None
        self._validated_at: float | None = None
        self._last: Any = _NOTHING

    def start(self, event: FinalResultEvent) -> None:
        """The response's final result has begun: its snapshots are the output from here on."""
        # Plain text is streamed as text deltas already; a snapshot of it would repeat them
        # (and run output validators on partial text that ``agent.run`` never shows them).
        plain_text = event.tool_name is None and type(self._schema.text_processor) is TextOutputProcessor
        self._active = self._interval is not None and not plain_text
        self._tool_name = event.tool_name

    async def update(self) -> None:
        """After a stream event: publish the snapshot if the interval has passed."""
        if not self._active:
            return
        if self._validated_at is None or time.monotonic() - self._validated_at >= (self._interval or 0.0):
            await self._publish()

    async def finish(self) -> None:
        """The stream ended: publish the complete snapshot unless it went out already."""
        if self._active:
            await self._publish()

    async def _publish(self) -> None:
        response = self._stream.response
        if response.parts == self._validated:
            return  # nothing arrived since the last validation (plain skips it too)
        self._validated = list(response.parts)
        self._validated_at = time.monotonic()
        try:
            output = await self._stream.validate_response_output(response, allow_partial=True)
        except Exception:  # partial JSON is often invalid, and a partial decides nothing
            _log.debug("a partial output did not validate", exc_info=True)
            return
        value = pydantic_core.to_jsonable_python(output, fallback=str)
        if value == self._last:
            return  # the same snapshot again (a chunk inside a key, say): nothing new to show
        self._last = value
        self._events.write_custom_event(value, kind=PARTIAL_OUTPUT_KIND, tool_name=self._tool_name)
