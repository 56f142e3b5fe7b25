"""Traces, metrics and what the Temporal UI shows (issue 26, section 3), on a real server and worker.

The worker runs in this process, so the OpenTelemetry SDK's in-memory exporter sees its
spans and its Prometheus endpoint serves its metrics.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.api.sdk.v1 import WorkflowMetadata

from sessionflow import AgentSessionClient, AgentSnapshot, AgentStatus, connect, serve_agent_flows
from sessionflow.temporal import free_port
from sessionflow.testing import CRASH_TIMINGS, save_scripted_flow, wait_until, write_script

SCRIPT_TURNS: list[list[dict[str, Any]]] = [
    [
        {
            "tool_calls": [
                {"id": "r", "name": "lookup", "arguments": {"q": "weather in Paris"}},
                {"id": "w", "name": "publish", "arguments": {"text": "x" * 5000}},
                {"id": "c", "name": "charge", "arguments": {"amount": 10}},
            ],
            "usage": {"input_tokens": 120, "output_tokens": 7},
        },
        {"text": "done", "usage": {"input_tokens": 200, "output_tokens": 9}},
    ]
]
SCRIPT_TOOLS = {
    "lookup": {"effect": "read", "crash_attempts": 1},
    "publish": {"effect": "non_idempotent_write"},
    # A write whose only attempt fails: its outcome is unknown.
    "charge": {"effect": "non_idempotent_write", "crash_attempts": 1},
}
MODEL = "gpt-4.1-mini"


def _span_exporter() -> InMemorySpanExporter:
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        trace.set_tracer_provider(TracerProvider())
        provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter


async def _run_session(sessions: AgentSessionClient, session_id: str) -> tuple[AgentSnapshot, int]:
    """Start the scripted turn, approve whatever asks, and wait for the turn to end."""
    await sessions.start_session(
        session_id, "hello", settings={"model": MODEL}, environment={"user": "alice"}
    )
    approved: set[str] = set()

    async def settled(snapshot: AgentSnapshot) -> AgentSnapshot | None:
        for interrupt in snapshot.pending_interrupts:
            if interrupt.interrupt_id not in approved:
                approved.add(interrupt.interrupt_id)
                await sessions.resolve_interrupt(session_id, interrupt.interrupt_id, approved=True)
        state = snapshot.state
        if state and state.turn_count == 1 and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE:
            return snapshot
        return None

    async def probe() -> AgentSnapshot | None:
        return await settled(await sessions.get_agent_snapshot(session_id))

    found = await wait_until("the turn to end", probe, timeout=90, interval=0.1)
    return found, len(approved)


_SAMPLE = re.compile(r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def _samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    samples: list[tuple[str, dict[str, str], float]] = []
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if line.startswith("#") or match is None:
            continue
        labels = dict(_LABEL.findall(match.group("labels") or ""))
        samples.append((match.group("name"), labels, float(match.group("value"))))
    return samples


def _value(samples: list[tuple[str, dict[str, str], float]], name: str, **labels: str) -> float:
    return sum(v for n, got, v in samples if n == name and all(got.get(k) == x for k, x in labels.items()))


async def _scrape_until(
    address: str, expected: Mapping[tuple[str, tuple[tuple[str, str], ...]], float], timeout: float = 60
) -> list[tuple[str, dict[str, str], float]]:
    """Scrape until every expected series has its value (metrics land as tasks complete)."""
    deadline = asyncio.get_running_loop().time() + timeout
    async with httpx.AsyncClient() as http:
        while True:
            samples = _samples((await http.get(f"http://{address}/metrics")).text)
            got = {key: _value(samples, key[0], **dict(key[1])) for key in expected}
            if got == dict(expected):
                return samples
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"metrics never matched: got {got}, expected {dict(expected)}")
            await asyncio.sleep(0.2)


def _attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


async def test_a_turn_is_traced_counted_and_summarised(temporal_address: str, tmp_path: Path) -> None:
    exporter = _span_exporter()
    metrics = f"127.0.0.1:{free_port()}"
    client = await connect(temporal_address, tracing=True, metrics_address=metrics)
    flow_type = f"telemetry-{uuid.uuid4().hex[:10]}"
    state_dir = tmp_path / "state"
    flow = save_scripted_flow(state_dir, flow_type, timings=CRASH_TIMINGS)
    session_id = f"{flow_type}-s"
    write_script(state_dir, session_id, SCRIPT_TURNS, SCRIPT_TOOLS)
    sessions = AgentSessionClient(client, flow)
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
    try:
        _, approvals = await _run_session(sessions, session_id)
        assert approvals == 2  # both writes ask for approval

        # -- traces: one span per step attempt, with the GenAI attributes ----------------------
        spans = [
            s
            for s in exporter.get_finished_spans()
            if _attributes(s).get("sessionflow.session.id") == session_id
        ]
        by_id = {s.context.span_id: s for s in exporter.get_finished_spans() if s.context is not None}
        chats = sorted((s for s in spans if s.name == f"chat {MODEL}"), key=lambda s: s.start_time or 0)
        assert [
            (
                _attributes(s)["gen_ai.operation.name"],
                _attributes(s)["gen_ai.request.model"],
                _attributes(s)["gen_ai.usage.input_tokens"],
                _attributes(s)["gen_ai.usage.output_tokens"],
                _attributes(s)["sessionflow.step.outcome"],
                _attributes(s)["sessionflow.step.attempt"],
            )
            for s in chats
        ] == [("chat", MODEL, 120, 7, "tool_calls", 1), ("chat", MODEL, 200, 9, "completed", 1)]
        for chat in chats:
            assert chat.parent is not None
            assert (
                by_id[chat.parent.span_id].name == "RunActivity:sessionflow.RunModel"
            )  # under Temporal's span
        tools = sorted(
            (
                _attributes(s)["gen_ai.tool.name"],
                _attributes(s)["sessionflow.step.attempt"],
                _attributes(s)["gen_ai.operation.name"],
                _attributes(s)["sessionflow.builtin.tool.effect"],
                _attributes(s)["sessionflow.step.outcome"],
            )
            for s in spans
            if s.name.startswith("execute_tool ")
        )
        assert tools == [
            ("charge", 1, "execute_tool", "non_idempotent_write", "error"),
            ("lookup", 1, "execute_tool", "read", "error"),
            ("lookup", 2, "execute_tool", "read", "succeeded"),
            ("publish", 1, "execute_tool", "non_idempotent_write", "succeeded"),
        ]

        # -- metrics: the SDK's and sessionflow's on one endpoint ------------------------------
        q = (("task_queue", flow_type),)
        expected = {
            ("sessionflow_turns", (*q, ("outcome", "completed"))): 1.0,
            ("sessionflow_model_calls", (*q, ("model", MODEL), ("outcome", "tool_calls"))): 1.0,
            ("sessionflow_model_calls", (*q, ("model", MODEL), ("outcome", "completed"))): 1.0,
            ("sessionflow_tool_calls", (*q, ("tool_effect", "read"), ("outcome", "succeeded"))): 1.0,
            (
                "sessionflow_tool_calls",
                (*q, ("tool_effect", "non_idempotent_write"), ("outcome", "succeeded")),
            ): 1.0,
            (
                "sessionflow_tool_calls",
                (*q, ("tool_effect", "non_idempotent_write"), ("outcome", "outcome_unknown")),
            ): 1.0,
            ("sessionflow_outcome_unknown", (*q, ("tool_effect", "non_idempotent_write"))): 1.0,
            ("sessionflow_approvals_requested", q): float(approvals),
            ("sessionflow_approvals_resolved", q): float(approvals),
            ("sessionflow_step_latency_count", (*q, ("step", "model"))): 2.0,
            ("sessionflow_step_latency_count", (*q, ("step", "tool"))): 4.0,
        }
        samples = await _scrape_until(metrics, expected)
        assert any(name.startswith("temporal_") for name, _, _ in samples)  # the SDK's own

        # -- the Temporal UI: step summaries and the session's current details ----------------
        handle = client.get_workflow_handle(session_id)
        summaries: list[str] = []
        async for event in handle.fetch_history_events():
            if event.HasField("activity_task_scheduled_event_attributes") and event.HasField("user_metadata"):
                summaries.append(json.loads(event.user_metadata.summary.data))
        assert summaries[0] == f"model call 1 ({MODEL})"
        assert summaries[-1] == f"model call 2 ({MODEL})"
        tool_summaries = sorted(summaries[1:-1])
        assert tool_summaries[0] == 'charge {"amount": 10}'
        assert tool_summaries[1] == 'lookup {"q": "weather in Paris"}'
        assert tool_summaries[2].startswith('publish {"text": "xxx') and tool_summaries[2].endswith("…")
        assert len(tool_summaries[2]) <= 200
        metadata = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
        assert metadata.current_details == "idle after 1 turn"
        await sessions.stop_session(session_id)
        await handle.result()
        metadata = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
        assert metadata.current_details == "stopped after 1 turn"
    finally:
        stop.set()
        await worker
