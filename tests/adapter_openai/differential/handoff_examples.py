"""handoffs/message_filter.py of the OpenAI Agents SDK's examples, as a builder for both runs.

Copied with the same agents, tool, filter and instructions. What changed, and why:

* the example runs ``first_agent`` for two turns and ``second_agent`` for two more; both are
  named ``Assistant``, and a session has one agent graph whose names are unique, so here
  one ``Assistant`` has both the random number tool and the handoff to the Spanish agent;
* the filter's ``is_gpt_5_default()`` branch (no filtering for a GPT-5 default model) is
  left out: the scripted model is not GPT-5, and the SDK's default model is, which would
  skip the filtering the example is about;
* ``random_number_tool`` returns 42 instead of a random number, the tool and the filter log
  their runs (kinds ``tool`` and ``callback``), and the agents get the scripted model.
"""

from __future__ import annotations

from typing import Any

from agents import Agent, HandoffInputData, RunConfig, handoff
from agents.decorators import tool
from agents.extensions import handoff_filters

from sessionflow.testing import InvocationLog
from tests.adapter_openai.differential.harness import Built, Models

__all__ = ["message_filter", "message_filter_in_run_config"]


def message_filter(models: Models, log: InvocationLog) -> Built:
    """The example's agents, the filter on the handoff to the Spanish assistant."""
    return _message_filter(models, log, in_run_config=False)


def message_filter_in_run_config(models: Models, log: InvocationLog) -> Built:
    """The same filter as every handoff's, ``RunConfig(handoff_input_filter=...)`` (docs/handoffs.md)."""
    return _message_filter(models, log, in_run_config=True)


def _message_filter(models: Models, log: InvocationLog, *, in_run_config: bool) -> Built:
    @tool
    def random_number_tool(max: int) -> int:
        """Return a random integer between 0 and the given maximum."""
        log.record("tool", "random_number_tool", max=max)
        return 42

    def spanish_handoff_message_filter(handoff_message_data: HandoffInputData) -> HandoffInputData:
        log.record(
            "callback", "spanish_handoff_message_filter", history=len(handoff_message_data.input_history)
        )
        # First, we'll remove any tool-related messages from the message history
        handoff_message_data = handoff_filters.remove_all_tools(handoff_message_data)

        # Second, we'll also remove the first two items from the history, just for demonstration
        history = (
            tuple(handoff_message_data.input_history[2:])
            if isinstance(handoff_message_data.input_history, tuple)
            else handoff_message_data.input_history
        )

        # or, you can use the HandoffInputData.clone(kwargs) method
        return HandoffInputData(
            input_history=history,
            pre_handoff_items=tuple(handoff_message_data.pre_handoff_items),
            new_items=tuple(handoff_message_data.new_items),
        )

    spanish_agent = Agent[Any](
        name="Spanish Assistant",
        instructions="You only speak Spanish and are extremely concise.",
        handoff_description="A Spanish-speaking assistant.",
        model=models.model(),
    )
    assistant = Agent[Any](
        name="Assistant",
        instructions=(
            "Be a helpful assistant. If the user speaks Spanish, handoff to the Spanish assistant."
        ),
        tools=[random_number_tool],
        handoffs=[
            handoff(spanish_agent, input_filter=None if in_run_config else spanish_handoff_message_filter)
        ],
        model=models.model(),
    )
    if in_run_config:
        return Built(assistant, run_config=RunConfig(handoff_input_filter=spanish_handoff_message_filter))
    return Built(assistant)
