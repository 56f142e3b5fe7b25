"""What the adapter does not run step by step yet is refused when the flow is built, with
the option and the reason, before any session starts."""

from __future__ import annotations

import pytest
from google.adk.agents import BaseAgent, LlmAgent
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.long_running_tool import LongRunningFunctionTool

from sessionflow import UnsupportedOptionError
from sessionflow_google_adk import google_adk_session_flow


def ask_manager(question: str) -> None:
    """Asks a manager (a long-running tool)."""


class Custom(BaseAgent):
    """An agent of one's own (as ADK's workflow agents are): not an LlmAgent."""


def helper() -> LlmAgent:
    return LlmAgent(name="helper", model="gemini-2.5-flash", instruction="Help.")


@pytest.mark.parametrize(
    ("agent", "option", "reason"),
    [
        (Custom(name="custom", sub_agents=[helper()]), "agent", "Custom is not supported"),
        (
            LlmAgent(name="root", model="gemini-2.5-flash", sub_agents=[helper()]),
            "sub_agents",
            "agent transfer is not supported",
        ),
        (
            LlmAgent(name="root", model="gemini-2.5-flash", tools=[AgentTool(agent=helper())]),
            "tools[0]",
            "AgentTool is not supported",
        ),
        (
            LlmAgent(name="root", model="gemini-2.5-flash", tools=[LongRunningFunctionTool(ask_manager)]),
            "tools[0]",
            "LongRunningFunctionTool is not supported",
        ),
    ],
)
def test_what_is_not_run_step_by_step_is_refused_at_build(agent: object, option: str, reason: str) -> None:
    with pytest.raises(UnsupportedOptionError) as refused:
        google_adk_session_flow(agent, flow_type="refused")  # pyright: ignore[reportArgumentType]
    assert refused.value.option == option and reason in refused.value.why
