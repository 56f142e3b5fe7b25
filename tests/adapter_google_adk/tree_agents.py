"""Agent trees of the tests, after ADK's multi-agent docs: a help desk coordinator that
transfers to two sub-agents (LLM-driven delegation), a `SequentialAgent` pipeline whose
first agent's `output_key` feeds the next one's instruction (`{key}`), and a `LoopAgent`
of a writer and a critic whose exit tool escalates (the iterative refinement sample)."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent, LoopAgent, SequentialAgent  # pyright: ignore[reportDeprecated]
from google.adk.models.google_llm import Gemini
from google.adk.tools.tool_context import ToolContext

from sessionflow import AgentSessionFlow, AgentSessionOptions, tool_effect
from sessionflow.kit import current_tool_invocation
from sessionflow.testing import InvocationLog
from sessionflow_google_adk import google_adk_session_flow
from tests.adapter_google_adk.agents import MODEL, TIMINGS
from tests.crash_tool_log import ToolLog


def _key() -> str | None:
    invocation = current_tool_invocation()
    return invocation.idempotency_key if invocation else None


def help_desk(base_url: str, log: InvocationLog) -> LlmAgent:
    """ADK's coordinator sample: `HelpDeskCoordinator` routes to `Billing` and `Support`."""

    @tool_effect("read")
    def check_service_status(service: str, tool_context: ToolContext) -> dict[str, Any]:
        """Checks whether a service is up."""
        log.record("tool", "check_service_status", service=service, key=_key())
        tool_context.state["checked"] = service
        return {"service": service, "status": "up"}

    @tool_effect("idempotent_write")
    def refund(order_id: str) -> str:
        """Refunds an order."""
        log.record("tool", "refund", order_id=order_id, key=_key())
        return f"refunded {order_id}"

    @tool_effect("read")
    def hand_to_billing(reason: str, tool_context: ToolContext) -> str:
        """Hands the conversation to billing (a tool that transfers: ToolContext.actions)."""
        log.record("tool", "hand_to_billing", reason=reason, key=_key())
        tool_context.actions.transfer_to_agent = "Billing"
        return "handed over"

    model = Gemini(model=MODEL, base_url=base_url)
    billing = LlmAgent(name="Billing", model=model, description="Handles billing inquiries.", tools=[refund])
    support = LlmAgent(
        name="Support",
        model=model,
        description="Handles technical support requests.",
        instruction="You fix technical problems. Last checked: {checked?}",
        tools=[check_service_status, hand_to_billing],
    )
    return LlmAgent(
        name="HelpDeskCoordinator",
        model=model,
        instruction="Route user requests: Use Billing agent for payment issues, Support agent "
        "for technical problems.",
        description="Main help desk router.",
        sub_agents=[billing, support],
    )


def closed_help_desk(base_url: str, log: InvocationLog) -> LlmAgent:
    """`help_desk` whose `Support` may transfer neither back nor to a peer (ADK's
    `disallow_transfer_to_parent` / `disallow_transfer_to_peers`): the next turn goes back
    to the coordinator."""
    root = help_desk(base_url, log)
    support = root.find_agent("Support")
    assert isinstance(support, LlmAgent)
    support.disallow_transfer_to_parent = True
    support.disallow_transfer_to_peers = True
    return root


def pipeline(base_url: str, log: InvocationLog) -> BaseAgent:
    """ADK's sequential sample: a writer's `output_key` feeds the reviewer's `{key}`."""

    @tool_effect("read")
    def word_count(text: str) -> int:
        """Counts the words of a text."""
        log.record("tool", "word_count", text=text, key=_key())
        return len(text.split())

    model = Gemini(model=MODEL, base_url=base_url)
    writer = LlmAgent(
        name="CodeWriterAgent",
        model=model,
        instruction="Write a haiku about the user's topic.",
        tools=[word_count],
        output_key="generated_code",
    )
    reviewer = LlmAgent(
        name="CodeReviewerAgent",
        model=model,
        instruction="Review this haiku:\n{generated_code}",
        output_key="review_comments",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return SequentialAgent(name="CodePipelineAgent", sub_agents=[writer, reviewer])  # pyright: ignore[reportDeprecated]


def counted_pipeline(base_url: str, log: InvocationLog) -> BaseAgent:
    """`pipeline` with every agent, model and tool callback of the writer counted (ADK's
    callback docs' shapes: each returns None, so nothing is replaced)."""
    tree = pipeline(base_url, log)
    writer = tree.sub_agents[0]
    assert isinstance(writer, LlmAgent)

    def counted(name: str) -> Any:
        def callback(*args: Any, **kwargs: Any) -> None:
            log.record("callback", name)

        return callback

    for name in (
        "before_agent_callback",
        "after_agent_callback",
        "before_model_callback",
        "after_model_callback",
        "before_tool_callback",
        "after_tool_callback",
    ):
        setattr(writer, name, counted(name))
    return tree


def refinement_loop(base_url: str, log: InvocationLog) -> BaseAgent:
    """ADK's iterative refinement sample: a writer and a critic in a `LoopAgent`; the
    critic's `exit_loop` sets ``tool_context.actions.escalate``."""

    @tool_effect("read")
    def exit_loop(tool_context: ToolContext) -> dict[str, Any]:
        """Call this function ONLY when the critique indicates no further changes are needed."""
        log.record("tool", "exit_loop", key=_key())
        tool_context.actions.escalate = True
        tool_context.actions.skip_summarization = True
        return {}

    model = Gemini(model=MODEL, base_url=base_url)
    refiner = LlmAgent(
        name="RefinerAgent",
        model=model,
        instruction="Improve the draft:\n{current_document?}",
        output_key="current_document",
    )
    critic = LlmAgent(
        name="CriticAgent",
        model=model,
        instruction="Critique the draft:\n{current_document?}\nCall exit_loop when it is good.",
        tools=[exit_loop],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        loop = LoopAgent(name="RefinementLoop", sub_agents=[refiner, critic], max_iterations=5)  # pyright: ignore[reportDeprecated]
        return SequentialAgent(  # pyright: ignore[reportDeprecated]
            name="IterativeWritingPipeline",
            sub_agents=[
                loop,
                LlmAgent(name="Publisher", model=model, instruction="Publish:\n{current_document?}"),
            ],
        )


def bounded_loop(base_url: str, log: InvocationLog) -> BaseAgent:
    """ADK's loop sample without an exit: a `LoopAgent` of one agent, `max_iterations=2`, whose
    `output_key` feeds its own next iteration's `{draft?}`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return LoopAgent(  # pyright: ignore[reportDeprecated]
            name="DraftLoop",
            max_iterations=2,
            sub_agents=[
                LlmAgent(
                    name="Drafter",
                    model=Gemini(model=MODEL, base_url=base_url),
                    instruction="Improve:\n{draft?}",
                    output_key="draft",
                )
            ],
        )


TREES = {
    "help_desk": help_desk,
    "closed_help_desk": closed_help_desk,
    "pipeline": pipeline,
    "counted_pipeline": counted_pipeline,
    "refinement_loop": refinement_loop,
}


def save_tree_spec(state_dir: Path, *, tree: str, flow_type: str, base_url: str) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    spec = {"tree": tree, "flow_type": flow_type, "base_url": base_url}
    (state_dir / "flow.json").write_text(json.dumps(spec))


def load_tree_flow(state_dir: Path, log: InvocationLog | None = None) -> AgentSessionFlow:
    """The flow of a worker process (`tree_worker`): the tree of `flow.json`."""
    spec = json.loads((state_dir / "flow.json").read_text())
    log = log or ToolLog.from_env(state_dir / "invocations.jsonl", os.environ)
    return google_adk_session_flow(
        TREES[spec["tree"]](spec["base_url"], log),
        flow_type=spec["flow_type"],
        options=AgentSessionOptions(timings=TIMINGS),
    )
