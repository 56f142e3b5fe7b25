"""basic/lifecycle_example.py and basic/agent_lifecycle_example.py of the SDK's examples.

Copied with the same agents, tools, output types and hooks. What changed, and why:

* every hook logs its call to the run's `InvocationLog` (kind ``hook``) where the example
  prints it, with what it printed that both runs can agree on (the agent, the tool, the
  call ID, the result, the request count of the run's usage); so the tests count how often
  each hook fired and in what order, around the tools' own runs (kind ``tool``);
* ``random_number`` returns what the example's auto mode returns (``min(max, 37)``, made
  odd), since two runs never agree on a random number;
* the agents get the run's scripted model;
* `LoggingHooks` also logs the agent's ``on_llm_start`` and ``on_llm_end`` (not in the
  example), so the agent's model hooks are counted too;
* `lifecycle_approved` (not in the examples) gives ``multiply_by_two`` the SDK's own
  ``needs_approval=True``: the plain run stops there and resumes, which fires the start
  hooks again, and the session must fire them as often.

Each builder is module-level, so a worker child rebuilds it by name (`crash.py`).
"""

from __future__ import annotations

from typing import Any, cast

from agents import (
    Agent,
    AgentHookContext,
    AgentHooks,
    FunctionTool,
    RunContextWrapper,
    RunHooks,
    Tool,
)
from agents.decorators import tool
from agents.items import ModelResponse, TResponseInputItem
from agents.tool_context import ToolContext
from pydantic import BaseModel

from sessionflow.testing import InvocationLog
from tests.adapter_openai.differential.harness import Built, Models

__all__ = ["FinalResult", "agent_lifecycle", "agents_as_tools_hooked", "lifecycle", "lifecycle_approved"]


class LoggingHooks(AgentHooks[Any]):
    def __init__(self, log: InvocationLog) -> None:
        self.log = log

    async def on_start(self, context: AgentHookContext[Any], agent: Agent[Any]) -> None:
        self.log.record("hook", "agent.on_start", agent=agent.name, turn_input=len(context.turn_input))

    async def on_end(self, context: RunContextWrapper[Any], agent: Agent[Any], output: Any) -> None:
        self.log.record("hook", "agent.on_end", agent=agent.name, output=repr(output))

    # Not in the example: the agent's own model hooks, so their count is tested too.
    async def on_llm_start(
        self,
        context: RunContextWrapper[Any],
        agent: Agent[Any],
        system_prompt: str | None,
        input_items: list[TResponseInputItem],
    ) -> None:
        self.log.record("hook", "agent.on_llm_start", agent=agent.name, items=len(input_items))

    async def on_llm_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse
    ) -> None:
        self.log.record("hook", "agent.on_llm_end", agent=agent.name)


class ExampleHooks(RunHooks[Any]):
    def __init__(self, log: InvocationLog, prefix: str = "run") -> None:
        self.event_counter = 0
        self.log = log
        self.prefix = prefix

    async def on_agent_start(self, context: AgentHookContext[Any], agent: Agent[Any]) -> None:
        self.event_counter += 1
        self.log.record("hook", f"{self.prefix}.on_agent_start", agent=agent.name, counter=self.event_counter)

    async def on_llm_start(
        self,
        context: RunContextWrapper[Any],
        agent: Agent[Any],
        system_prompt: str | None,
        input_items: list[TResponseInputItem],
    ) -> None:
        self.event_counter += 1
        self.log.record("hook", f"{self.prefix}.on_llm_start", agent=agent.name, counter=self.event_counter)

    async def on_llm_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse
    ) -> None:
        self.event_counter += 1
        self.log.record("hook", f"{self.prefix}.on_llm_end", agent=agent.name, counter=self.event_counter)

    async def on_agent_end(self, context: RunContextWrapper[Any], agent: Agent[Any], output: Any) -> None:
        self.event_counter += 1
        self.log.record(
            "hook",
            f"{self.prefix}.on_agent_end",
            agent=agent.name,
            output=repr(output),
            counter=self.event_counter,
        )

    async def on_tool_start(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool) -> None:
        self.event_counter += 1
        tool_context = cast(ToolContext[Any], context)
        self.log.record(
            "hook",
            f"{self.prefix}.on_tool_start",
            tool=tool.name,
            call_id=tool_context.tool_call_id,
            args=tool_context.tool_arguments,
            counter=self.event_counter,
        )

    async def on_tool_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: object
    ) -> None:
        self.event_counter += 1
        tool_context = cast(ToolContext[Any], context)
        self.log.record(
            "hook",
            f"{self.prefix}.on_tool_end",
            tool=tool.name,
            result=repr(result),
            call_id=tool_context.tool_call_id,
            counter=self.event_counter,
        )

    async def on_handoff(
        self, context: RunContextWrapper[Any], from_agent: Agent[Any], to_agent: Agent[Any]
    ) -> None:
        self.event_counter += 1
        self.log.record(
            "hook",
            f"{self.prefix}.on_handoff",
            source=from_agent.name,
            to=to_agent.name,
            counter=self.event_counter,
        )


class CustomAgentHooks(AgentHooks[Any]):
    def __init__(self, display_name: str, log: InvocationLog) -> None:
        self.event_counter = 0
        self.display_name = display_name
        self.log = log

    def _record(self, hook: str, **fields: Any) -> None:
        self.event_counter += 1
        self.log.record("hook", f"{self.display_name}.{hook}", counter=self.event_counter, **fields)

    async def on_start(self, context: AgentHookContext[Any], agent: Agent[Any]) -> None:
        self._record("on_start", agent=agent.name)

    async def on_end(self, context: RunContextWrapper[Any], agent: Agent[Any], output: Any) -> None:
        self._record("on_end", agent=agent.name, output=repr(output))

    async def on_handoff(
        self, context: RunContextWrapper[Any], agent: Agent[Any], source: Agent[Any]
    ) -> None:
        self._record("on_handoff", agent=agent.name, source=source.name)

    async def on_tool_start(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool) -> None:
        self._record("on_tool_start", agent=agent.name, tool=tool.name)

    async def on_tool_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: object
    ) -> None:
        self._record("on_tool_end", agent=agent.name, tool=tool.name, result=repr(result))


class FinalResult(BaseModel):
    number: int


def _tools(log: InvocationLog) -> tuple[FunctionTool, FunctionTool]:
    @tool
    def random_number(max: int) -> int:
        """Generate a random number from 0 to max (inclusive)."""
        # The example's auto mode: deterministic and odd, so the start agent hands off.
        value = min(max, 37)
        if value % 2 == 0:
            value = value - 1 if value > 1 else 1
        log.record("tool", "random_number", max=max, value=value)
        return value

    @tool
    def multiply_by_two(x: int) -> int:
        """Return x times two."""
        log.record("tool", "multiply_by_two", x=x)
        return x * 2

    return random_number, multiply_by_two


def _agents(models: Models, log: InvocationLog, hooks: Any, multiply_hooks: Any) -> Agent[Any]:
    random_number, multiply_by_two = _tools(log)
    multiply_agent = Agent[Any](
        name="Multiply Agent",
        instructions="Multiply the number by 2 and then return the final result.",
        tools=[multiply_by_two],
        output_type=FinalResult,
        hooks=multiply_hooks,
        model=models.model(),
    )
    return Agent[Any](
        name="Start Agent",
        instructions="Generate a random number. If it's even, stop. If it's odd, hand off to the multiplier agent.",
        tools=[random_number],
        output_type=FinalResult,
        handoffs=[multiply_agent],
        hooks=hooks,
        model=models.model(),
    )


def lifecycle(models: Models, log: InvocationLog) -> Built:
    """lifecycle_example.py: the run's `ExampleHooks` and each agent's `LoggingHooks`."""
    start = _agents(models, log, LoggingHooks(log), LoggingHooks(log))
    return Built(start, hooks=ExampleHooks(log))


def agent_lifecycle(models: Models, log: InvocationLog) -> Built:
    """agent_lifecycle_example.py: each agent's own `CustomAgentHooks`, no run hooks."""
    start = _agents(
        models,
        log,
        CustomAgentHooks(display_name="Start Agent", log=log),
        CustomAgentHooks(display_name="Multiply Agent", log=log),
    )
    return Built(start)


def lifecycle_approved(models: Models, log: InvocationLog) -> Built:
    """lifecycle_example.py with ``multiply_by_two`` held for a person (not in the example)."""
    built = lifecycle(models, log)
    multiply = built.agent.handoffs[0]
    assert isinstance(multiply, Agent)
    multiply_tool = cast(FunctionTool, multiply.tools[0])
    multiply_tool.needs_approval = True
    return built


def agents_as_tools_hooked(models: Models, log: InvocationLog) -> Built:
    """agent_patterns/agents_as_tools.py's orchestrator with lifecycle_example.py's hooks on
    the run (``run.*``) and on the nested run (``as_tool(hooks=...)``, ``nested.*``), its
    translator with a glossary tool (not in the examples)."""

    @tool
    def lookup_glossary(word: str) -> str:
        """Look up the house translation of a word."""
        log.record("tool", "lookup_glossary", word=word)
        return f"{word}: mundo"

    spanish_agent = Agent[Any](
        name="spanish_agent",
        instructions="You translate the user's message to Spanish",
        handoff_description="An english to spanish translator",
        tools=[lookup_glossary],
        model=models.model(),
    )
    orchestrator_agent = Agent[Any](
        name="orchestrator_agent",
        instructions=(
            "You are a translation agent. You use the tools given to you to translate."
            "If asked for multiple translations, you call the relevant tools in order."
            "You never translate on your own, you always use the provided tools."
        ),
        tools=[
            spanish_agent.as_tool(
                tool_name="translate_to_spanish",
                tool_description="Translate the user's message to Spanish",
                hooks=ExampleHooks(log, prefix="nested"),
            )
        ],
        model=models.model(),
    )
    return Built(orchestrator_agent, hooks=ExampleHooks(log))
