"""Tracing is off unless the flow opts in: no trace or span is ever created, so nothing can
be exported to the network, in model steps or in tool steps (runs nested in tools too)."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, OpenAIResponsesModel, RunConfig, set_trace_processors
from agents.tracing import Span, Trace, TracingProcessor
from openai import AsyncOpenAI

from sessionflow import AgentMessage, AgentSessionOptions
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import AgentEventWriter, AgentTurnContext, TurnCompleted
from sessionflow_openai_agents import OpenAIAgentsRunner
from tests.adapter_openai.conftest import HarnessFactory


class TraceRecorder(TracingProcessor):
    def __init__(self) -> None:
        self.traces: list[Trace] = []
        self.spans: list[Span[Any]] = []

    def on_trace_start(self, trace: Trace) -> None:
        self.traces.append(trace)

    def on_trace_end(self, trace: Trace) -> None:
        pass

    def on_span_start(self, span: Span[Any]) -> None:
        self.spans.append(span)

    def on_span_end(self, span: Span[Any]) -> None:
        pass

    def shutdown(self) -> None:
        pass

    def force_flush(self) -> None:
        pass


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> TraceRecorder:
    monkeypatch.delenv("OPENAI_AGENTS_DISABLE_TRACING", raising=False)
    recorder = TraceRecorder()
    # Replacing the processors also drops the SDK's default exporter for this process.
    set_trace_processors([recorder])
    return recorder


async def test_a_session_creates_no_traces_by_default(
    harness_factory: HarnessFactory, recorder: TraceRecorder
) -> None:
    harness = await harness_factory("agent_tool")
    harness.script(
        [ModelReply.call(ScriptedToolCall("call_x", "ask_expert", {"input": "hi"})), ModelReply.say("done")]
    )
    harness.script([ModelReply.say("expert answer")], suffix="-expert")
    await harness.start("hi")
    await harness.idle_after(1)

    assert len(harness.requests()) == 2 and len(harness.requests("-expert")) == 1
    assert recorder.traces == [] and recorder.spans == []


async def test_tracing_is_opt_in(model_server: ScriptedModelServer, recorder: TraceRecorder) -> None:
    model_server.script("traced", [ModelReply.say("hello")])
    client = AsyncOpenAI(base_url=model_server.base_url("traced"), api_key="k", max_retries=0)
    agent = Agent[Any](name="assistant", model=OpenAIResponsesModel(model="m", openai_client=client))
    runner = OpenAIAgentsRunner(agent, tracing=True)
    turn = AgentTurnContext(
        flow_id="traced",
        turn_id="turn-1",
        attempt=1,
        messages=[AgentMessage(sequence=1, turn_id="turn-1", message=runner.build_user_message("hi"))],
        framework_run_state=None,
        tool_calls={},
        policy_resolver=AgentSessionOptions().resolve_tool_policy,
        events=AgentEventWriter(None, turn_id="turn-1", step_execution_id="s", attempt=1),
        heartbeat=lambda *args: None,
    )
    outcome = await runner.run_model_step(turn)

    assert isinstance(outcome, TurnCompleted) and outcome.new_messages[-1].text == "hello"
    assert [t.name for t in recorder.traces] == ["Agent workflow"]
    assert recorder.spans


async def test_with_tracing_each_model_step_is_a_trace_of_the_run_configs_names(
    model_server: ScriptedModelServer, recorder: TraceRecorder
) -> None:
    """A documented difference (docs/extension-points/openai-agents.md, *Tracing*): a plain
    `Runner.run` is one trace; every model step of a session is a run of its own, so a trace
    of its own, with the run config's workflow name, group ID and metadata."""
    model_server.script("traced-config", [ModelReply.say("hello")])
    client = AsyncOpenAI(base_url=model_server.base_url("traced-config"), api_key="k", max_retries=0)
    agent = Agent[Any](name="assistant", model=OpenAIResponsesModel(model="m", openai_client=client))
    config = RunConfig(
        workflow_name="Support",
        group_id="thread-7",
        trace_metadata={"tier": "gold"},
        trace_id=TRACE_ID,
        trace_include_sensitive_data=False,
        tracing={"include_task_and_turn_spans": False},
    )
    runner = OpenAIAgentsRunner(agent, tracing=True, run_config=config)
    turn = AgentTurnContext(
        flow_id="traced-config",
        turn_id="turn-1",
        attempt=1,
        messages=[AgentMessage(sequence=1, turn_id="turn-1", message=runner.build_user_message("hi"))],
        framework_run_state=None,
        tool_calls={},
        policy_resolver=AgentSessionOptions().resolve_tool_policy,
        events=AgentEventWriter(None, turn_id="turn-1", step_execution_id="s", attempt=1),
        heartbeat=lambda *args: None,
    )
    await runner.run_model_step(turn)

    (exported,) = [t.export() for t in recorder.traces]
    assert exported is not None
    assert (exported["id"], exported["workflow_name"], exported["group_id"], exported["metadata"]) == (
        TRACE_ID,
        "Support",
        "thread-7",
        {"tier": "gold"},
    )
    # The run config's other tracing settings reach the step's run as given: no task or turn
    # spans, and no model input in the response span.
    kinds = [span.span_data.type for span in recorder.spans]
    assert "response" in kinds and "turn" not in kinds and "task" not in kinds
    response = next(span for span in recorder.spans if span.span_data.type == "response")
    assert getattr(response.span_data, "input", None) is None


TRACE_ID = "trace_" + "0123456789abcdef" * 2
