"""Capabilities' hooks and event streams, differential against plain Pydantic AI.

A capability that records every hook it is called at (`Recorder`) goes on the agent; both
runs record into their own log, and the records are compared family by family:

- faithful (the same calls, in the same order, with the same details): model request hooks,
  tool validation and execution hooks, output validation and processing hooks, and the
  events an event stream handler sees (`ProcessEventStream`; the flow's own
  ``event_stream_handler``, as ``agent.run(event_stream_handler=...)`` calls it);
- documented (adapter extension-point matrix, "capabilities"): every step of a session is a
  Pydantic AI run of its own, so run hooks fire once per step that runs (``before_run``,
  and ``after_run`` once per run that ends), node hooks for every node each step runs, an
  agent's `ProcessEventStream` is called once more for each tool step's node (with no
  events), and ``on_event`` listeners see each tool call's call and result events twice
  (in its tool step, and in the step that resumes with its result). The counts are asserted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterable
from dataclasses import dataclass, replace
from itertools import zip_longest
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability, AgentNode, NodeResult, ProcessEventStream
from pydantic_ai.messages import AgentStreamEvent, ModelResponse, ToolCallPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.output import OutputContext
from pydantic_ai.run import AgentRunResult
from pydantic_ai.tools import ToolDefinition

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import (
    Built,
    Models,
    Run,
    Scenario,
    assert_same_run,
    run_both,
)


@dataclass
class Recorder(AbstractCapability[Any]):
    """Records each hook it is called at, with what identifies the call."""

    log: InvocationLog

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    def _record(self, hook: str, **detail: Any) -> None:
        self.log.record("hook", hook, **detail)

    async def before_run(self, ctx: RunContext[Any]) -> None:
        self._record("before_run")

    async def after_run(self, ctx: RunContext[Any], *, result: AgentRunResult[Any]) -> AgentRunResult[Any]:
        self._record("after_run")
        return result

    async def before_node_run(self, ctx: RunContext[Any], *, node: AgentNode[Any]) -> AgentNode[Any]:
        self._record("before_node_run", node=type(node).__name__)
        return node

    async def after_node_run(
        self, ctx: RunContext[Any], *, node: AgentNode[Any], result: NodeResult[Any]
    ) -> NodeResult[Any]:
        self._record("after_node_run", node=type(node).__name__)
        return result

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self._record("before_model_request", run_step=ctx.run_step, messages=len(request_context.messages))
        return request_context

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        self._record(
            "after_model_request", run_step=ctx.run_step, calls=[c.tool_name for c in response.tool_calls]
        )
        return response

    async def before_tool_validate(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any
    ) -> Any:
        self._record("before_tool_validate", call=call.tool_call_id, tool_kind=tool_def.kind)
        return args

    async def after_tool_validate(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any
    ) -> Any:
        self._record("after_tool_validate", call=call.tool_call_id, tool_kind=tool_def.kind)
        return args

    async def before_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any
    ) -> Any:
        self._record("before_tool_execute", call=call.tool_call_id, run_step=ctx.run_step)
        return args

    async def after_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any, result: Any
    ) -> Any:
        self._record("after_tool_execute", call=call.tool_call_id, result=str(result))
        return result

    async def before_output_validate(
        self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any
    ) -> Any:
        self._record("before_output_validate", partial=ctx.partial_output)
        return output

    async def after_output_validate(
        self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any
    ) -> Any:
        self._record("after_output_validate", partial=ctx.partial_output)
        return output

    async def before_output_process(
        self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any
    ) -> Any:
        self._record("before_output_process", partial=ctx.partial_output)
        return output

    async def after_output_process(
        self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any
    ) -> Any:
        self._record("after_output_process", partial=ctx.partial_output)
        return output

    async def on_event(self, ctx: RunContext[Any], *, event: AgentStreamEvent) -> None:
        self._record("on_event", event=type(event).__name__)


def event_handler(log: InvocationLog, name: str) -> Any:
    async def handler(ctx: RunContext[Any], events: AsyncIterable[AgentStreamEvent]) -> None:
        log.record("hook", name, event="(called)")
        async for event in events:
            log.record("hook", name, event=type(event).__name__, call=_call_id(event))

    return handler


def _call_id(event: AgentStreamEvent) -> str | None:
    part = getattr(event, "part", None)
    return getattr(part, "tool_call_id", None) or getattr(event, "tool_call_id", None)


class Report(BaseModel):
    summary: str


def recorded(models: Models, log: InvocationLog) -> Built:
    """A weather reporter with every kind of hook recorded, an agent-level event stream
    processor, and the run's own event stream handler (plain's ``agent.run`` argument, the
    session's flow option)."""
    agent = Agent(
        models.model(),
        output_type=Report,
        instructions="You report the weather.",
        capabilities=[Recorder(log), ProcessEventStream(event_handler(log, "agent_event_stream"))],
    )

    @agent.tool_plain
    def weather(city: str) -> str:
        """The weather in a city."""
        log.record("tool", "weather", city=city)
        return f"sunny in {city}"

    handler = event_handler(log, "run_event_stream_handler")
    return Built(
        agent=agent,
        run_args={"event_stream_handler": handler},
        flow_args={"event_stream_handler": handler},
    )


FAITHFUL: dict[str, set[str]] = {
    "model request hooks": {"before_model_request", "after_model_request"},
    "tool hooks": {
        "before_tool_validate",
        "after_tool_validate",
        "before_tool_execute",
        "after_tool_execute",
    },
    "output hooks": {
        "before_output_validate",
        "after_output_validate",
        "before_output_process",
        "after_output_process",
    },
    "the run's event stream handler": {"run_event_stream_handler"},
}
"""Each family is compared as a sequence of its own. Across families the order differs where
a tool runs: its hooks run in its tool step, before the resuming model step streams the
call's events (in plain, inside the one tool node's stream)."""
FAITHFUL_NAMES = set[str]().union(*FAITHFUL.values())


def family(run: Run, names: set[str]) -> list[dict[str, Any]]:
    return [h for h in run.hook_runs if h["name"] in names]


def counts(run: Run, name: str, key: str) -> Counter[str]:
    return Counter(str(h.get(key)) for h in run.hook_runs if h["name"] == name)


async def test_hooks_and_event_streams_of_a_capability(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="capabilities",
        build=recorded,
        script=[
            ModelReply.call(ScriptedToolCall("c1", "weather", {"city": "Oslo"})),
            ModelReply.call(ScriptedToolCall("c2", "weather", {"city": "Rome"})),
            ModelReply.call(ScriptedToolCall("o1", "final_result", {"summary": "Sunny in both."})),
            ModelReply.call(ScriptedToolCall("o2", "final_result", {"summary": "Still sunny."})),
        ],
        turns=["Weather in Oslo and Rome?", "And now?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # Faithful: the same calls, in order, with the same details.
    assert len(family(plain, {"before_model_request"})) == 4
    assert len(family(plain, {"before_tool_execute"})) == 2
    assert [h["partial"] for h in family(plain, {"after_output_process"})] == [False, False]
    for what, names in FAITHFUL.items():
        assert family(session, names) == family(plain, names), (
            what
            + ":\n"
            + "\n".join(
                f"{a}    |    {b}" for a, b in zip_longest(family(plain, names), family(session, names))
            )
        )
    # The agent's event stream processor sees the same events.
    agent_events = [
        h for h in plain.hook_runs if h["name"] == "agent_event_stream" and h["event"] != "(called)"
    ]
    assert [
        h for h in session.hook_runs if h["name"] == "agent_event_stream" and h["event"] != "(called)"
    ] == (agent_events)

    # Documented: one Pydantic AI run per step. 2 turns: model steps 3 + 1 (the first turn's
    # two tool calls come one response at a time), tool steps 2.
    tool_steps, model_steps = 2, 4
    assert counts(plain, "before_run", "name") == Counter({"before_run": 2})
    assert counts(session, "before_run", "name") == Counter({"before_run": model_steps + tool_steps})
    assert counts(session, "after_run", "name") == counts(plain, "after_run", "name")  # only runs that end
    plain_nodes = counts(plain, "before_node_run", "node")
    assert plain_nodes == Counter({"UserPromptNode": 2, "ModelRequestNode": 4, "CallToolsNode": 4})
    # Each step's run starts with its own user prompt node; each tool step runs the call's
    # tool node, and the steps that stopped before their response's tool node leave it to the
    # step that resumes with the results.
    assert counts(session, "before_node_run", "node") == Counter(
        {"UserPromptNode": model_steps + tool_steps, "ModelRequestNode": 4, "CallToolsNode": 4 + tool_steps}
    )
    assert counts(session, "agent_event_stream", "event")["(called)"] == (
        counts(plain, "agent_event_stream", "event")["(called)"] + tool_steps
    )
    plain_events = counts(plain, "on_event", "event")
    session_events = counts(session, "on_event", "event")
    for event in ("FunctionToolCallEvent", "FunctionToolResultEvent"):
        assert plain_events[event] == 2 and session_events[event] == 2 * plain_events[event]
    assert {k: v for k, v in session_events.items() if not k.startswith("FunctionTool")} == {
        k: v for k, v in plain_events.items() if not k.startswith("FunctionTool")
    }

    documented = {
        "before_run",
        "after_run",
        "before_node_run",
        "after_node_run",
        "agent_event_stream",
        "on_event",
    }
    assert {h["name"] for h in plain.hook_runs} <= FAITHFUL_NAMES | documented
    assert counts(session, "after_node_run", "node") - counts(session, "before_node_run", "node") == Counter()
    # Everything else (requests, outputs, history, tool runs) as plain; the hooks as above.
    assert_same_run(replace(plain, hook_runs=[]), replace(session, hook_runs=[]))
