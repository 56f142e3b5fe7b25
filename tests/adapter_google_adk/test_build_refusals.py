"""What the adapter does not run step by step yet is refused (and agent trees it runs are taken) when the flow is built, with
the option and the reason, before any session starts."""

from __future__ import annotations

import warnings

import pytest
from google.adk.agents import BaseAgent, LlmAgent, LoopAgent, ParallelAgent, SequentialAgent  # pyright: ignore[reportDeprecated]
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from google.adk.version import __version__ as adk_version
from google.adk.workflow import Workflow

from sessionflow import UnsupportedOptionError
from sessionflow_google_adk import google_adk_session_flow
from sessionflow_google_adk._refusals import transfers_resume


def ask_manager(question: str) -> None:
    """Asks a manager (a long-running tool)."""


class Custom(BaseAgent):
    """An agent of one's own (as ADK's workflow agents are): not an LlmAgent."""


def helper() -> LlmAgent:
    return LlmAgent(name="helper", model="gemini-2.5-flash", instruction="Help.")


def parallel() -> BaseAgent:
    """ADK's research sample: a sequence whose second stage is a ParallelAgent."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        fan_out = ParallelAgent(name="ParallelWebResearchAgent", sub_agents=[helper()])  # pyright: ignore[reportDeprecated]
        return SequentialAgent(name="ResearchPipeline", sub_agents=[helper_named("plan"), fan_out])  # pyright: ignore[reportDeprecated]


def helper_named(name: str) -> LlmAgent:
    return LlmAgent(name=name, model="gemini-2.5-flash", instruction="Help.")


def test_agent_trees_are_taken() -> None:
    """`sub_agents` with transfer, SequentialAgent and LoopAgent, at any depth, build."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        loop = LoopAgent(name="loop", sub_agents=[helper_named("a"), helper_named("b")], max_iterations=2)  # pyright: ignore[reportDeprecated]
        tree = SequentialAgent(  # pyright: ignore[reportDeprecated]
            name="seq", sub_agents=[loop, LlmAgent(name="c", model="gemini-2.5-flash", sub_agents=[helper()])]
        )
    assert google_adk_session_flow(tree, flow_type="tree").flow_type == "tree"


@pytest.mark.parametrize(
    ("agent", "option", "reason"),
    [
        (Custom(name="custom", sub_agents=[helper()]), "agent", "Custom is not supported"),
        (
            Runner(app_name="app", agent=helper(), session_service=InMemorySessionService()),
            "agent",
            "a Runner is not an ADK agent",
        ),
        (Workflow(name="graph"), "agent", "a Workflow is not an ADK agent"),
        (
            LlmAgent(name="root", model="gemini-2.5-flash", sub_agents=[Custom(name="custom")]),
            "agent.sub_agents[0]",
            "Custom is not supported",
        ),
        (parallel(), "agent.sub_agents[1]", "ParallelAgent is not supported yet"),
        (
            LlmAgent(
                name="root",
                model="gemini-2.5-flash",
                sub_agents=[LlmAgent(name="h", model="gemini-2.5-flash", tools=[AgentTool(agent=helper())])],
            ),
            "agent.sub_agents[0].tools[0]",
            "AgentTool is not supported",
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


@pytest.mark.parametrize(
    ("version", "resumes"), [("2.5.0", False), ("2.12.3", False), ("2.13.0", True), ("3.0.0rc1", True)]
)
def test_transfers_are_taken_from_the_adk_version_that_resumes_them(version: str, resumes: bool) -> None:
    """On an older ADK an LlmAgent with sub_agents is refused (2.5 resumes a peer transfer at
    the agent that transferred); the installed version takes it."""
    assert transfers_resume(version) is resumes
    assert transfers_resume(adk_version)
