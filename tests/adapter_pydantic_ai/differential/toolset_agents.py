"""Agents from Pydantic AI's toolsets docs, as builders for both runs of the differential tests.

Copied from pydantic/pydantic-ai at commit 4fda38988f2939fa6ea9cdefcf120693e10ef491:
``docs/toolsets.md`` (function_toolset.py, combined_toolset.py, filtered_toolset.py,
renamed_toolset.py, prepared_toolset.py, dynamic_toolset.py) and ``docs/tools-advanced.md``
(tool_only_if_42.py, customize_name.py, agent_prepare_tools_filter_out.py). What changed, and why:

* every agent gets the run's scripted model (`Models`) instead of ``TestModel``, so the
  model requests are real Chat Completions bodies the two runs can be compared on;
* every tool logs its run to the run's `InvocationLog` once it has done its work;
* datetime_toolset's ``now`` returns a fixed time: two runs never agree on ``datetime.now()``;
* the docs build their toolsets at module level; here each builder builds fresh ones, so
  both runs get their own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from pydantic_ai import (
    AbstractToolset,
    Agent,
    CombinedToolset,
    FunctionToolset,
    RunContext,
    Tool,
    ToolDefinition,
)
from pydantic_ai.capabilities import PrepareTools

from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import Built, Models

__all__ = [
    "NOW",
    "ToggleableDeps",
    "datetime_toolset",
    "dynamic_toolset",
    "filtered_toolsets",
    "prepare_tools_filter_out",
    "prepared_renamed_toolsets",
    "tool_prepare",
    "weather_toolset",
]

NOW = datetime(2026, 3, 14, 15, 9, 26)
"""What ``now`` returns (upstream: ``datetime.now()``)."""


def weather_toolset(log: InvocationLog) -> FunctionToolset[Any]:
    """function_toolset.py's weather_toolset; ``conditions`` answers by ``ctx.run_step``."""

    def temperature_celsius(city: str) -> float:
        log.record("tool", "temperature_celsius", city=city)
        return 21.0

    def temperature_fahrenheit(city: str) -> float:
        log.record("tool", "temperature_fahrenheit", city=city)
        return 69.8

    toolset = FunctionToolset[Any](tools=[temperature_celsius, temperature_fahrenheit])

    @toolset.tool
    def conditions(ctx: RunContext[Any], city: str) -> str:
        log.record("tool", "conditions", city=city, run_step=ctx.run_step)
        if ctx.run_step % 2 == 0:
            return "It's sunny"
        else:
            return "It's raining"

    return toolset


def datetime_toolset(log: InvocationLog) -> FunctionToolset[Any]:
    """function_toolset.py's datetime_toolset, its ``now`` fixed."""

    def now() -> datetime:
        log.record("tool", "now")
        return NOW

    toolset = FunctionToolset[Any]()
    toolset.add_function(now, name="now")
    return toolset


def _combined(log: InvocationLog) -> CombinedToolset[Any]:
    """combined_toolset.py (the prefixed version)."""
    return CombinedToolset(
        [weather_toolset(log).prefixed("weather"), datetime_toolset(log).prefixed("datetime")]
    )


def filtered_toolsets(models: Models, log: InvocationLog) -> Built:
    """filtered_toolset.py: the prefixed, combined toolsets without the Fahrenheit tool."""
    filtered_toolset = _combined(log).filtered(lambda ctx, tool_def: "fahrenheit" not in tool_def.name)
    return Built(agent=Agent(models.model(), toolsets=[filtered_toolset]))


_DESCRIPTIONS = {
    "temperature_celsius": "Get the temperature in degrees Celsius",
    "temperature_fahrenheit": "Get the temperature in degrees Fahrenheit",
    "weather_conditions": "Get the current weather conditions",
    "current_time": "Get the current time",
}


async def _add_descriptions(ctx: RunContext[Any], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
    return [
        replace(tool_def, description=description)
        if (description := _DESCRIPTIONS.get(tool_def.name, None))
        else tool_def
        for tool_def in tool_defs
    ]


def prepared_renamed_toolsets(models: Models, log: InvocationLog) -> Built:
    """renamed_toolset.py, then prepared_toolset.py's descriptions on top."""
    renamed_toolset = _combined(log).renamed(
        {
            "current_time": "datetime_now",
            "temperature_celsius": "weather_temperature_celsius",
            "temperature_fahrenheit": "weather_temperature_fahrenheit",
        }
    )
    prepared_toolset: AbstractToolset[Any] = renamed_toolset.prepared(_add_descriptions)
    return Built(agent=Agent(models.model(), toolsets=[prepared_toolset]))


# -- dynamic_toolset.py --------------------------------------------------------------------


@dataclass
class ToggleableDeps:
    active: Literal["weather", "datetime"]

    def toggle(self) -> None:
        if self.active == "weather":
            self.active = "datetime"
        else:
            self.active = "weather"


def dynamic_toolset(models: Models, log: InvocationLog) -> Built:
    """dynamic_toolset.py: ``@agent.toolset`` picks a toolset by deps, which a tool toggles."""
    weather, date_time = weather_toolset(log), datetime_toolset(log)
    agent = Agent(models.model(), deps_type=ToggleableDeps)

    @agent.toolset
    def toggleable_toolset(ctx: RunContext[ToggleableDeps]) -> AbstractToolset[Any]:
        if ctx.deps.active == "weather":
            return weather
        else:
            return date_time

    @agent.tool
    def toggle(ctx: RunContext[ToggleableDeps]) -> None:
        ctx.deps.toggle()
        log.record("tool", "toggle", active=ctx.deps.active)

    return Built(agent=agent, deps=lambda: ToggleableDeps("weather"))


# -- tools-advanced.md ---------------------------------------------------------------------


def tool_prepare(models: Models, log: InvocationLog, *, deps: int) -> Built:
    """tool_only_if_42.py's ``hitchhiker`` and customize_name.py's ``greet``: per-tool ``prepare``
    by deps (an int here, the docs' two examples' deps types merged)."""

    async def only_if_42(ctx: RunContext[int], tool_def: ToolDefinition) -> ToolDefinition | None:
        log.record("hook", "only_if_42", run_step=ctx.run_step)
        if ctx.deps == 42:
            return tool_def

    def greet(name: str) -> str:
        log.record("tool", "greet", person=name)
        return f"hello {name}"

    async def prepare_greet(ctx: RunContext[int], tool_def: ToolDefinition) -> ToolDefinition | None:
        log.record("hook", "prepare_greet", run_step=ctx.run_step)
        d = f"Name of the {'human' if ctx.deps == 42 else 'machine'} to greet."
        tool_def.parameters_json_schema["properties"]["name"]["description"] = d
        return tool_def

    agent = Agent(models.model(), tools=[Tool(greet, prepare=prepare_greet)], deps_type=int)

    @agent.tool(prepare=only_if_42)
    def hitchhiker(ctx: RunContext[int], answer: str) -> str:
        log.record("tool", "hitchhiker", answer=answer)
        return f"{ctx.deps} {answer}"

    return Built(agent=agent, deps=lambda: deps)


def prepare_tools_filter_out(models: Models, log: InvocationLog, *, deps: bool) -> Built:
    """agent_prepare_tools_filter_out.py: the agent-wide ``PrepareTools`` drops a tool by deps."""

    def launch_potato(target: str) -> str:
        log.record("tool", "launch_potato", target=target)
        return f"Potato launched at {target}!"

    async def filter_out_tools_by_name(
        ctx: RunContext[bool], tool_defs: list[ToolDefinition]
    ) -> list[ToolDefinition]:
        log.record("hook", "filter_out_tools_by_name", run_step=ctx.run_step)
        if ctx.deps:
            return [tool_def for tool_def in tool_defs if tool_def.name != "launch_potato"]
        return tool_defs

    def answer(question: str) -> str:
        log.record("tool", "answer", question=question)
        return "42"

    agent = Agent(
        models.model(),
        tools=[Tool(launch_potato), Tool(answer)],
        capabilities=[PrepareTools(filter_out_tools_by_name)],
        deps_type=bool,
    )
    return Built(agent=agent, deps=lambda: deps)
