"""Agent graphs the adapter tests run, built alike in the test process and in worker children.

A test saves a `Scenario` to its state folder; ``python -m tests.adapter_openai.worker``
loads it and serves the same flow. Tools log each real run to the folder's invocation log
and can wait at a `FileGate` on their first attempt, so a test can SIGKILL a worker there.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from agents import (
    Agent,
    FunctionTool,
    GuardrailFunctionOutput,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunContextWrapper,
    TResponseInputItem,
    function_tool,
    handoff,
    input_guardrail,
    output_guardrail,
)
from agents.mcp import MCPServerStdio
from mcp.types import ToolAnnotations
from openai import AsyncOpenAI

from sessionflow import AgentSessionFlow, AgentSessionOptions, ToolEffect, ToolPolicy
from sessionflow.builtin import tool as neutral_tool
from sessionflow.kit import current_tool_invocation
from sessionflow.testing import FileGate, InvocationLog
from sessionflow_openai_agents import openai_agents_session_flow
from tests.harness import FAST
from tests.ledger_tool import pay_tool

__all__ = ["MCP_SERVERS", "SCENARIO_FILE", "Scenario", "load_flow", "save_flow"]

SCENARIO_FILE = "openai-scenario.json"
# The first run of the SDK in a process blocks its event loop for a moment (lazy imports and
# schema building); on a loaded machine that can outlast the core tests' 2 s heartbeat timeout.
TIMINGS = replace(
    FAST, model_heartbeat_timeout=timedelta(seconds=5), tool_heartbeat_timeout=timedelta(seconds=5)
)
Api = Literal["responses", "chat_completions"]


@dataclass(frozen=True)
class Scenario:
    """Which graph to build, its flow type, and where its model server conversation lives."""

    kind: str
    flow_type: str
    model_url: str
    key: str
    api: Api = "responses"
    gates: list[str] = field(default_factory=lambda: [])

    def base_url(self, suffix: str = "") -> str:
        return f"{self.model_url}/k/{self.key}{suffix}/v1"


def save_flow(state_dir: Path, scenario: Scenario) -> AgentSessionFlow:
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / SCENARIO_FILE).write_text(json.dumps(asdict(scenario)))
    return load_flow(state_dir)


def load_flow(state_dir: Path) -> AgentSessionFlow:
    scenario = Scenario(**json.loads((state_dir / SCENARIO_FILE).read_text()))
    return _Builder(scenario, state_dir).flow()


class _Builder:
    def __init__(self, scenario: Scenario, state_dir: Path) -> None:
        self.scenario = scenario
        self.state_dir = state_dir
        self.log = InvocationLog(state_dir / "invocations.jsonl")

    def model(self, suffix: str = "") -> OpenAIResponsesModel | OpenAIChatCompletionsModel:
        client = AsyncOpenAI(base_url=self.scenario.base_url(suffix), api_key="test-key", max_retries=0)
        if self.scenario.api == "responses":
            return OpenAIResponsesModel(model="scripted", openai_client=client)
        return OpenAIChatCompletionsModel(model="scripted", openai_client=client)

    async def ran(self, name: str, **fields: Any) -> None:
        """Log one real run of a tool, then wait at its gate on the first attempt."""
        invocation = current_tool_invocation()
        attempt = invocation.attempt if invocation else 0
        key = invocation.idempotency_key if invocation else None
        self.log.record("tool", name, attempt=attempt, idempotency_key=key, **fields)
        if name in self.scenario.gates and attempt == 1:
            await FileGate(self.state_dir, name).wait_for_release()

    def flow(self) -> AgentSessionFlow:
        builders: dict[str, Callable[[], AgentSessionFlow]] = {
            "assistant": self.assistant,
            "handoff": self.handoffs,
            "agent_tool": self.agent_tool,
            "agent_tool_asks": self.agent_tool_asks,
            "agent_tool_with_a_tool": self.agent_tool_with_a_tool,
            "two_agent_tools": self.two_agent_tools,
            "mcp_annotations": self.mcp_annotations,
            "local_mcp": self.local_mcp,
            "context": self.context,
            "ledger": self.ledger,
        }
        return builders[self.scenario.kind]()

    def options(self, **policies: ToolPolicy) -> AgentSessionOptions:
        return AgentSessionOptions(tool_policies=policies, timings=TIMINGS)

    # -- scenarios -----------------------------------------------------------------------

    def assistant(self) -> AgentSessionFlow:
        """One agent: a read, a refund that needs approval, a failing tool, a guarded input."""
        builder = self

        @function_tool
        async def get_weather(city: str) -> str:
            """Weather for a city."""
            await builder.ran("get_weather", city=city)
            return f"sunny in {city}"

        @function_tool
        async def refund(order_id: int) -> str:
            """Refund an order."""
            await builder.ran("refund", order_id=order_id)
            return f"refunded order {order_id}"

        @function_tool
        async def flaky(reason: str) -> str:
            """Always fails."""
            await builder.ran("flaky")
            raise RuntimeError(f"backend down: {reason}")

        @input_guardrail
        async def no_secrets(
            context: RunContextWrapper[Any], agent: Agent[Any], items: str | list[TResponseInputItem]
        ) -> GuardrailFunctionOutput:
            return GuardrailFunctionOutput(
                output_info=None,
                tripwire_triggered="secret" in json.dumps(items[-1] if isinstance(items, list) else items),
            )

        @output_guardrail
        async def no_forbidden(
            context: RunContextWrapper[Any], agent: Agent[Any], output: Any
        ) -> GuardrailFunctionOutput:
            return GuardrailFunctionOutput(output_info=None, tripwire_triggered="forbidden" in str(output))

        def save_note(text: str) -> str:
            """Save a note."""
            invocation = current_tool_invocation()
            builder.log.record("tool", "save_note", key=invocation.idempotency_key if invocation else None)
            return f"saved {text!r}"

        agent = Agent[Any](
            name="assistant",
            instructions="You are a helpful assistant.",
            model=self.model(),
            tools=[get_weather, refund, flaky],
            input_guardrails=[no_secrets],
            output_guardrails=[no_forbidden],
        )
        return openai_agents_session_flow(
            agent,
            flow_type=self.scenario.flow_type,
            options=self.options(
                get_weather=ToolPolicy(effect=ToolEffect.READ),
                refund=ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE),
                flaky=ToolPolicy(effect=ToolEffect.READ),
            ),
            tool_sources=[neutral_tool(save_note, policy=ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE))],
        )

    def handoffs(self) -> AgentSessionFlow:
        """A triage agent hands off to a specialist, who looks up orders (and can hand back)."""
        builder = self

        @function_tool
        async def lookup_order(order_id: int) -> str:
            """Look up an order."""
            await builder.ran("lookup_order", order_id=order_id)
            return f"order {order_id}: shipped"

        triage = Agent[Any](name="triage", instructions="You route requests.", model=self.model())
        specialist = Agent[Any](
            name="orders_specialist",
            instructions="You are the orders specialist.",
            model=self.model(),
            tools=[lookup_order],
            handoffs=[handoff(triage)],
        )
        triage.handoffs = [specialist]
        return openai_agents_session_flow(
            triage,
            flow_type=self.scenario.flow_type,
            options=self.options(lookup_order=ToolPolicy(effect=ToolEffect.READ)),
        )

    def agent_tool(self) -> AgentSessionFlow:
        """An agent that asks an expert agent, used as a tool, with its own model conversation."""
        expert = Agent[Any](name="expert", instructions="You are the expert.", model=self.model("-expert"))
        main = Agent[Any](
            name="main",
            instructions="Ask the expert when unsure.",
            model=self.model(),
            tools=[expert.as_tool(tool_name="ask_expert", tool_description="Ask the expert a question.")],
        )
        return openai_agents_session_flow(
            main,
            flow_type=self.scenario.flow_type,
            options=self.options(ask_expert=ToolPolicy(effect=ToolEffect.READ)),
        )

    def agent_tool_asks(self) -> AgentSessionFlow:
        """`agent_tool` with the agent tool's call held for approval."""
        expert = Agent[Any](name="expert", instructions="You are the expert.", model=self.model("-expert"))
        main = Agent[Any](
            name="main",
            instructions="Ask the expert when unsure.",
            model=self.model(),
            tools=[expert.as_tool(tool_name="ask_expert", tool_description="Ask the expert a question.")],
        )
        return openai_agents_session_flow(
            main,
            flow_type=self.scenario.flow_type,
            options=self.options(ask_expert=ToolPolicy(effect=ToolEffect.READ, requires_approval=True)),
        )

    def agent_tool_with_a_tool(self) -> AgentSessionFlow:
        """`agent_tool` whose expert has a tool of its own."""
        builder = self

        @function_tool
        async def get_weather(city: str) -> str:
            """Weather for a city."""
            await builder.ran("get_weather", city=city)
            return f"sunny in {city}"

        expert = Agent[Any](
            name="expert",
            instructions="You are the expert.",
            model=self.model("-expert"),
            tools=[get_weather],
        )
        main = Agent[Any](
            name="main",
            instructions="Ask the expert when unsure.",
            model=self.model(),
            tools=[expert.as_tool(tool_name="ask_expert", tool_description="Ask the expert a question.")],
        )
        return openai_agents_session_flow(
            main,
            flow_type=self.scenario.flow_type,
            options=self.options(
                ask_expert=ToolPolicy(effect=ToolEffect.READ), get_weather=ToolPolicy(effect=ToolEffect.READ)
            ),
        )

    def two_agent_tools(self) -> AgentSessionFlow:
        """An agent that can ask an expert and a critic, each an agent used as a tool."""
        expert = Agent[Any](name="expert", instructions="You are the expert.", model=self.model("-expert"))
        critic = Agent[Any](name="critic", instructions="You are the critic.", model=self.model("-critic"))
        main = Agent[Any](
            name="main",
            instructions="Ask both.",
            model=self.model(),
            tools=[
                expert.as_tool(tool_name="ask_expert", tool_description="Ask the expert a question."),
                critic.as_tool(tool_name="ask_critic", tool_description="Ask the critic a question."),
            ],
        )
        return openai_agents_session_flow(
            main,
            flow_type=self.scenario.flow_type,
            options=self.options(
                ask_expert=ToolPolicy(effect=ToolEffect.READ), ask_critic=ToolPolicy(effect=ToolEffect.READ)
            ),
        )

    def mcp_annotations(self) -> AgentSessionFlow:
        """Tools that look as if they came from an MCP server: effects from their annotations."""
        builder = self

        def mcp_like(name: str, annotations: ToolAnnotations) -> FunctionTool:
            async def invoke(context: Any, arguments: str) -> str:
                await builder.ran(name)
                return f"{name} done"

            tool = FunctionTool(
                name=name,
                description=f"The {name} tool.",
                params_json_schema={"type": "object", "properties": {}, "additionalProperties": False},
                on_invoke_tool=invoke,
            )
            tool._mcp_annotations = annotations  # pyright: ignore[reportPrivateUsage]
            return tool

        agent = Agent[Any](
            name="assistant",
            instructions="Use the tools.",
            model=self.model(),
            tools=[
                mcp_like("read_file", ToolAnnotations(read_only_hint=True)),
                mcp_like("upsert_row", ToolAnnotations(idempotent_hint=True)),
                mcp_like("delete_file", ToolAnnotations(destructive_hint=True)),
            ],
        )
        return openai_agents_session_flow(agent, flow_type=self.scenario.flow_type, options=self.options())

    def local_mcp(self) -> AgentSessionFlow:
        """A real MCP server over stdio; the test connects it (`MCP_SERVERS[flow_type]`)."""
        server = MCPServerStdio(
            params={
                "command": sys.executable,
                "args": ["-m", "tests.adapter_openai.mcp_server"],
                "cwd": str(Path(__file__).resolve().parents[2]),
                "env": {**os.environ, "MCP_TEST_LOG": str(self.log.path)},
            },
            name="notes",
        )
        MCP_SERVERS[self.scenario.flow_type] = server
        agent = Agent[Any](
            name="assistant", instructions="Manage notes.", model=self.model(), mcp_servers=[server]
        )
        return openai_agents_session_flow(agent, flow_type=self.scenario.flow_type, options=self.options())

    def context(self) -> AgentSessionFlow:
        """An agent built by a factory on every step, with a run context built per session."""
        builder = self

        def instructions(context: RunContextWrapper[dict[str, str]], agent: Agent[dict[str, str]]) -> str:
            return f"You serve {context.context['user']}."

        @function_tool
        def whoami(context: RunContextWrapper[dict[str, str]]) -> str:
            """Who is the user?"""
            return context.context["user"]

        def build() -> Agent[Any]:
            builder.log.record("factory", "agent")
            return Agent[dict[str, str]](
                name="assistant", instructions=instructions, model=self.model(), tools=[whoami]
            )

        return openai_agents_session_flow(
            build,
            flow_type=self.scenario.flow_type,
            options=self.options(whoami=ToolPolicy(effect=ToolEffect.READ)),
            context_factory=lambda session_id: {"user": f"user-of-{session_id}"},
        )

    def ledger(self) -> AgentSessionFlow:
        """One agent with ``pay``, a neutral tool with a verify (`tests.ledger_tool`), at the scenario's gates."""
        agent = Agent[Any](name="assistant", instructions="You pay.", model=self.model())
        return openai_agents_session_flow(
            agent,
            flow_type=self.scenario.flow_type,
            options=self.options(),
            tool_sources=[pay_tool(self.state_dir, self.scenario.gates)],
        )


MCP_SERVERS: dict[str, MCPServerStdio] = {}
"""The local MCP server of each `local_mcp` flow built in this process, by flow type."""


def state_dir_from_env() -> Path:
    from sessionflow.testing import STATE_DIR_ENV

    return Path(os.environ[STATE_DIR_ENV])
