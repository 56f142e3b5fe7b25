"""Agents with one run setting each, from the SDK's docs (``docs/running_agents.md``,
``docs/agents.md``, ``docs/handoffs.md``) and examples, as builders for both runs.

The agents are the examples' (basic/tools.py's weather agent, agent_patterns/
forcing_tool_use.py's, output_guardrails.py's, handoffs/message_filter.py's); each builder
adds the one setting the docs show. The guardrails, filters and formatters log their runs
(kinds ``guardrail``, ``callback``), so the tests count them.
"""

from __future__ import annotations

from typing import Any

from agents import (
    Agent,
    GuardrailFunctionOutput,
    RunConfig,
    RunContextWrapper,
    RunErrorHandlerInput,
    RunErrorHandlerResult,
    ToolErrorFormatterArgs,
    TResponseInputItem,
    function_tool,
    input_guardrail,
    output_guardrail,
)
from agents.run import CallModelData, ModelInputData

from sessionflow.testing import InvocationLog
from tests.adapter_openai.differential import sdk_examples
from tests.adapter_openai.differential.harness import Built, Models

__all__ = [
    "blocked_terminal_output",
    "colliding_names",
    "formatted_tool_errors",
    "max_turns_handled",
    "model_in_run_config",
    "nested_handoff_history",
    "omitted_reasoning_ids",
    "refusal_handled",
    "refusing",
    "run_guardrails",
    "tool_choice_kept",
    "tool_choice_reset",
    "tool_not_found_to_model",
    "trimmed_input",
]


def run_guardrails(models: Models, log: InvocationLog) -> Built:
    """basic/tools.py's agent with ``RunConfig(input_guardrails=..., output_guardrails=...)``."""

    @input_guardrail(run_in_parallel=False)
    async def no_secrets(
        context: RunContextWrapper[Any], agent: Agent[Any], input: str | list[TResponseInputItem]
    ) -> GuardrailFunctionOutput:
        log.record("guardrail", "no_secrets", agent=agent.name)
        return GuardrailFunctionOutput(output_info=None, tripwire_triggered="secret" in str(input))

    @output_guardrail
    async def no_shouting(
        context: RunContextWrapper[Any], agent: Agent[Any], output: Any
    ) -> GuardrailFunctionOutput:
        log.record("guardrail", "no_shouting", agent=agent.name)
        return GuardrailFunctionOutput(output_info=None, tripwire_triggered=str(output).isupper())

    config = RunConfig(input_guardrails=[no_secrets], output_guardrails=[no_shouting])
    return Built(sdk_examples.tools(models, log).agent, run_config=config)


def trimmed_input(models: Models, log: InvocationLog) -> Built:
    """docs/running_agents.md's ``drop_old_messages``: the last 5 items go to the model."""

    def drop_old_messages(data: CallModelData[Any]) -> ModelInputData:
        log.record("callback", "drop_old_messages", items=len(data.model_data.input))
        # Keep only the last 5 items and preserve existing instructions.
        trimmed = data.model_data.input[-5:]
        return ModelInputData(input=trimmed, instructions=data.model_data.instructions)

    return Built(
        sdk_examples.tools(models, log).agent, run_config=RunConfig(call_model_input_filter=drop_old_messages)
    )


def _format_rejection(log: InvocationLog) -> Any:
    def format_rejection(args: ToolErrorFormatterArgs[Any]) -> str | None:
        log.record("callback", "format_rejection", error_kind=args.kind, tool=args.tool_name)
        if args.kind == "approval_rejected":
            return (
                f"Tool call '{args.tool_name}' was rejected by a human reviewer. "
                "Ask for confirmation or suggest a safer alternative."
            )
        if args.kind == "tool_not_found":
            return f"There is no tool named '{args.tool_name}'."
        return None

    return format_rejection


def formatted_tool_errors(models: Models, log: InvocationLog) -> Built:
    """docs/running_agents.md's ``format_rejection`` on basic/tools.py's agent, whose tool
    asks a person (``needs_approval=True``, as agent_patterns/human_in_the_loop.py's do)."""
    agent = sdk_examples.tools(models, log).agent
    weather = agent.tools[0]
    weather.needs_approval = True  # pyright: ignore[reportAttributeAccessIssue]
    return Built(agent, run_config=RunConfig(tool_error_formatter=_format_rejection(log)))


def tool_not_found_to_model(models: Models, log: InvocationLog) -> Built:
    """basic/tools.py's agent with ``tool_not_found_behavior="return_error_to_model"``."""
    config = RunConfig(
        tool_not_found_behavior="return_error_to_model", tool_error_formatter=_format_rejection(log)
    )
    return Built(sdk_examples.tools(models, log).agent, run_config=config)


def tool_choice_reset(models: Models, log: InvocationLog) -> Built:
    """forcing_tool_use.py ``-t default``: ``tool_choice="required"``; the SDK resets it after
    the tool call (``reset_tool_choice=True``, the default), so the model may answer."""
    return Built(sdk_examples._forcing_agent(models, log, "run_llm_again"))  # pyright: ignore[reportPrivateUsage]


def tool_choice_kept(models: Models, log: InvocationLog) -> Built:
    """The same with ``reset_tool_choice=False`` (docs/agents.md): every call keeps ``required``."""
    agent = sdk_examples._forcing_agent(models, log, "run_llm_again")  # pyright: ignore[reportPrivateUsage]
    return Built(agent.clone(reset_tool_choice=False))


def nested_handoff_history(models: Models, log: InvocationLog) -> Built:
    """customer_service/main.py with ``RunConfig(nest_handoff_history=True)`` (docs/handoffs.md)."""
    built = sdk_examples.customer_service(models, log)
    return Built(built.agent, context=built.context, run_config=RunConfig(nest_handoff_history=True))


def omitted_reasoning_ids(models: Models, log: InvocationLog) -> Built:
    """basic/hello_world.py's agent with ``RunConfig(reasoning_item_id_policy="omit")``."""
    return Built(
        sdk_examples.hello_world(models, log).agent, run_config=RunConfig(reasoning_item_id_policy="omit")
    )


def refusing(models: Models, log: InvocationLog) -> Built:
    """output_guardrails.py's agent (a structured output), which the model refuses."""
    return sdk_examples.output_guardrails(models, log)


def refusal_handled(models: Models, log: InvocationLog) -> Built:
    """The same with docs/running_agents.md's ``error_handlers={"model_refusal": ...}``."""

    def on_refusal(data: RunErrorHandlerInput[Any]) -> RunErrorHandlerResult:
        log.record("callback", "on_refusal", error=type(data.error).__name__)
        return RunErrorHandlerResult(
            final_output=sdk_examples.MessageOutput(
                reasoning="refused", response="I can't help.", user_name=None
            )
        )

    return Built(
        sdk_examples.output_guardrails(models, log).agent, error_handlers={"model_refusal": on_refusal}
    )


def max_turns_handled(models: Models, log: InvocationLog) -> Built:
    """basic/tools.py with ``max_turns=2`` and docs/running_agents.md's ``max_turns`` handler."""

    def on_max_turns(data: RunErrorHandlerInput[Any]) -> RunErrorHandlerResult:
        log.record("callback", "on_max_turns", error=type(data.error).__name__)
        return RunErrorHandlerResult(
            final_output="I couldn't finish within the allowed turns.", include_in_history=False
        )

    return Built(
        sdk_examples.tools(models, log).agent, max_turns=2, error_handlers={"max_turns": on_max_turns}
    )


def model_in_run_config(models: Models, log: InvocationLog) -> Built:
    """basic/tools.py's agent naming no model; ``RunConfig(model=...)`` gives it (docs/models)."""
    agent = sdk_examples.tools(models, log).agent.clone(model=None)
    return Built(agent, run_config=RunConfig(model=models.model()))


def colliding_names(models: Models, log: InvocationLog) -> Built:
    """A function tool named as a handoff's tool, with ``tool_name_collision_policy="error"``."""

    @function_tool
    def transfer_to_helper() -> str:
        """Not a handoff."""
        log.record("tool", "transfer_to_helper")
        return "done"

    helper = Agent[Any](name="helper", instructions="Help.", model=models.model())
    agent = Agent[Any](
        name="Assistant",
        instructions="Help.",
        tools=[transfer_to_helper],
        handoffs=[helper],
        model=models.model(),
    )
    return Built(agent, run_config=RunConfig(tool_name_collision_policy="error"))


def blocked_terminal_output(models: Models, log: InvocationLog) -> Built:
    """basic/tools.py's ``StopAtTools`` agent with an output guardrail that trips on the tool's
    result, the final output (``RunConfig.output_guardrail_blocked_message``'s case)."""

    @output_guardrail
    async def no_weather(
        context: RunContextWrapper[Any], agent: Agent[Any], output: Any
    ) -> GuardrailFunctionOutput:
        log.record("guardrail", "no_weather")
        return GuardrailFunctionOutput(output_info=None, tripwire_triggered="Sunny" in str(output))

    agent = sdk_examples.tools_stop_at(models, log).agent.clone(output_guardrails=[no_weather])
    return Built(agent, run_config=RunConfig(output_guardrail_blocked_message="[withheld]"))
