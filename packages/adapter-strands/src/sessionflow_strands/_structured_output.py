"""The agent's structured output (``Agent(structured_output_model=...)``), as Strands' event loop runs it.

Plain Strands registers a structured output tool for the invocation (`StructuredOutputTool`,
named after the Pydantic model) beside the agent's tools. When the model calls it, Strands'
tool executor validates the input (a validation error is the tool's error result, and the
loop goes on) and the invocation stops after that response's tool results, with the
validated object as ``AgentResult.structured_output``. When the model answers in text
instead, Strands appends a user message (``structured_output_prompt``, by default "You must
format the previous response as structured output."), forces the tool (``tool_choice``;
a provider without native structured output is sent that tool only) and calls the model
again; text from that forced call must be one JSON object of the model.

Here the same: the model step offers the tool, the tool step runs it through Strands'
executor, and the model step that takes its result ends the turn with the object in the
snapshot's ``framework_state["structured_output"]`` (its JSON, ``model_dump(mode="json")``).
The forcing prompt is a user message the runner wrote (stored with role ``system``), and
the forced call is a model step of its own.
"""

from __future__ import annotations

from typing import Any, cast

from pydantic import BaseModel
from strands.agent import Agent
from strands.tools.registry import ToolRegistry
from strands.tools.structured_output import DEFAULT_STRUCTURED_OUTPUT_PROMPT
from strands.tools.structured_output._structured_output_context import (
    StructuredOutputContext,
)
from strands.tools.structured_output.structured_output_tool import StructuredOutputTool
from strands.types.exceptions import StructuredOutputException

from sessionflow import ToolEffect, effect
from sessionflow.kit import TurnAborted
from sessionflow_strands._hooks import borrowed_registry

__all__ = ["RESULT_KEY", "StructuredOutput", "structured_output_of"]

RESULT_KEY = "structured_output"
"""Where a tool step's update, and the turn's framework state, hold the validated object's JSON."""


class StructuredOutput:
    """An agent's structured output model and prompt, and the tool Strands makes of them."""

    def __init__(self, model: type[BaseModel], prompt: str | None) -> None:
        self.model = model
        self.prompt = prompt or DEFAULT_STRUCTURED_OUTPUT_PROMPT
        # It only validates its input: a read, never asked about, retried if its step dies.
        self.tool = effect(StructuredOutputTool(model), ToolEffect.READ)

    @property
    def name(self) -> str:
        return self.tool.tool_name

    def registry(self, agent: Agent) -> ToolRegistry:
        """A copy of the agent's registry with the tool registered, as Strands registers it
        for the invocation (a dynamic tool); the agent's own registry is never written."""
        registry = borrowed_registry(agent.tool_registry)
        registry.dynamic_tools = dict(agent.tool_registry.dynamic_tools)
        if self.name not in registry.dynamic_tools:
            registry.register_dynamic_tool(self.tool)
        return registry

    def request(
        self, agent: Agent, specs: list[dict[str, Any]], forced: bool
    ) -> tuple[list[dict[str, Any]], Any, type[BaseModel] | None]:
        """The tool specs, tool choice and native output model of one model call
        (`_structured_output_request`): all tools unforced; forced, the tool alone unless
        the provider enforces structured output itself."""
        if not forced:
            return specs, None, None
        choice = {"tool": {"name": self.name}}
        if getattr(agent.model, "_supports_structured_output", False) is True:
            return specs, choice, self.model
        return [s for s in specs if s.get("name") == self.name], choice, None

    def context(self) -> StructuredOutputContext:
        return StructuredOutputContext(self.model, self.prompt)

    def from_text(self, message: dict[str, Any]) -> dict[str, Any]:
        """The forced call's text as the object, as Strands validates it.

        Raises:
            TurnAborted: Not one JSON object of the model: plain Strands raises
                `StructuredOutputException` with the same text.
        """
        try:
            result = self.context().result_from_text(cast(Any, message))
        except StructuredOutputException as error:
            raise TurnAborted(str(error)) from None
        return result.model_dump(mode="json")


def structured_output_of(agent: Agent) -> StructuredOutput | None:
    """The agent's structured output, or None when it has none."""
    model = cast(type[BaseModel] | None, getattr(agent, "_default_structured_output_model", None))
    if model is None:
        return None
    return StructuredOutput(model, cast(str | None, getattr(agent, "_structured_output_prompt", None)))
