"""Partial output while a model step streams, without changing what the run's own code sees.

From the response's final result on (Pydantic AI's `FinalResultEvent`: the output tool's
call, or the text of a structured text output), each snapshot of the response is parsed
and published as a ``custom_event`` with ``kind="partial_output"``. How it is parsed
follows the run the session stands for:

* ``agent.run`` (the default): plain runs no output validator, output function or output
  hook of a capability on a partial response, so neither does a snapshot. It is the output
  type's own validation with partial JSON allowed (what Pydantic AI's output processor
  does before any hook, ``hook_validate``); an output that only a function makes (an output
  function, `TextOutput`) has no snapshots.
* ``run_stream`` (``validate=True``): as ``run_stream().stream_output()`` validates each
  snapshot (``validate_response_output(allow_partial=True)``): output functions, validators
  and output hooks run on it with ``ctx.partial_output`` True.

Nothing here decides the output: the run's own output handling does, once, after the
stream; a snapshot that does not validate is skipped, and no failure of one ever fails
the step.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import Any

import pydantic_core
from pydantic_ai import FinalResultEvent, RunContext
from pydantic_ai._output import BaseOutputProcessor, OutputSchema, TextOutputProcessor
from pydantic_ai.messages import ModelResponse, ModelResponsePart, NativeToolCallPart, TextPart
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
    change; None: none), and the last snapshot when the stream ends.

    ``validate`` runs the run's output validation on each snapshot, as ``run_stream`` does;
    without it (``agent.run``) only the output type's own validation parses them.
    """

    def __init__(
        self,
        stream: AgentStream[Any, Any],
        schema: OutputSchema[Any],
        events: AgentEventWriter,
        interval: float | None,
        *,
        run_context: RunContext[Any],
        validate: bool = False,
    ) -> None:
        self._stream = stream
        self._schema = schema
        self._events = events
        self._interval = interval
        self._run_context = run_context
        self._validate = validate
        self._processor: BaseOutputProcessor[Any] | None = None
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
        if self._active and not self._validate:
            processor = self._output_processor(event.tool_name)
            # An output only a function makes (an output function, `TextOutput`): `agent.run`
            # never calls it on partial input, so there is nothing to show until the end.
            made_by_function = processor is None or processor.get_output_context(self._schema).has_function
            self._active = not made_by_function
            self._processor = processor

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
            if self._validate:
                output = await self._stream.validate_response_output(response, allow_partial=True)
            else:
                output = self._parse(response)
        except Exception:  # partial JSON is often invalid, and a partial decides nothing
            _log.debug("a partial output did not validate", exc_info=True)
            return
        value = pydantic_core.to_jsonable_python(output, fallback=str)
        if value == self._last:
            return  # the same snapshot again (a chunk inside a key, say): nothing new to show
        self._last = value
        self._events.write_custom_event(value, kind=PARTIAL_OUTPUT_KIND, tool_name=self._tool_name)

    def _output_processor(self, tool_name: str | None) -> BaseOutputProcessor[Any] | None:
        if tool_name is None:
            return self._schema.text_processor
        toolset = self._schema.toolset
        return toolset.processors.get(tool_name) if toolset is not None else None

    def _parse(self, response: ModelResponse) -> Any:
        """The snapshot as the output type validates it, partial JSON allowed: no output
        validator, output function or output hook runs (`agent.run` runs none on partials)."""
        processor = self._processor
        assert processor is not None  # `start` made the snapshots active only with one
        data: str | dict[str, Any] | None
        if self._tool_name is not None:
            call = next(c for c in response.tool_calls if c.tool_name == self._tool_name)
            data = call.args
        else:
            data = _output_text(response)
        context = replace(self._run_context, partial_output=True)
        semantic, _ = processor.hook_validate(data, run_context=context, allow_partial=True)
        return semantic


def _output_text(response: ModelResponse) -> str:
    """The text a structured text output is read from, as `AgentStream` reads it: text
    before a provider's native tool call is its thinking aloud, unless nothing follows it."""
    text = ""
    before_native_call = ""
    for part in response.parts:
        if isinstance(part, TextPart):
            text += part.content
        elif isinstance(part, NativeToolCallPart):
            before_native_call = text or before_native_call
            text = ""
    if not response.tool_calls:
        text = text or before_native_call
    return text
