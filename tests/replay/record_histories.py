"""Record golden session histories: `uv run python -m tests.replay.record_histories [name ...]`.

Without names it records every scenario; with names, only those (the others stay as they
were recorded).

Run this only when adding a new recorded shape; never to "fix" a replay failure, which
means the workflow code broke compatibility with running sessions.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from sessionflow import (
    AgentSessionClient,
    AgentStatus,
    MessageRole,
    SessionTimings,
    ToolEffect,
    ToolPolicy,
    serve_agent_flows,
)
from sessionflow.kit import FrameworkMessage
from sessionflow.temporal import DevServer, DevServerConfig, export_history, with_payload_store
from sessionflow.testing import FileGate, save_scripted_flow, wait_for_agent_snapshot, write_script

HERE = Path(__file__).parent / "histories"

SCENARIOS: dict[str, tuple[list[list[dict[str, Any]]], dict[str, Any]]] = {
    "text-turn": ([[{"text": "hello", "deltas": ["hel", "lo"]}], [{"text": "again"}]], {}),
    "flow-type-client": (
        [
            [{"tool_calls": [{"id": "r", "name": "lookup", "arguments": {"q": 1}}]}, {"text": "found"}],
            [{"text": "bye"}],
        ],
        {"lookup": {"effect": "read"}},
    ),
    "tools-and-approval": (
        [
            [
                {
                    "tool_calls": [
                        {"id": "r", "name": "lookup", "arguments": {"q": 1}},
                        {"id": "w", "name": "publish", "arguments": {}},
                    ]
                },
                {"text": "done"},
            ]
        ],
        {"lookup": {"effect": "read", "crash_attempts": 1}, "publish": {"effect": "non_idempotent_write"}},
    ),
    "model-failure-note": (
        [[{"tool_calls": [{"id": "s", "name": "save", "arguments": {}}]}, {"fail_attempts": 3}]],
        {"save": {"effect": "idempotent_write"}},
    ),
    # The answer arrives while the model step that raises the approval still runs; the
    # update is accepted and waits for the step's result.
    "early-answer": (
        [
            [
                {"gate": "early", "tool_calls": [{"id": "w", "name": "publish", "arguments": {}}]},
                {"text": "done"},
            ]
        ],
        {"publish": {"effect": "non_idempotent_write"}},
    ),
    # Approval integrity (issue 42): the write is approved, its framework rewrites the
    # arguments in the tool step, so it did not run and asks again (interrupt "#2", a step
    # "#2"); approved again, it runs the rewritten arguments once.
    "approval-rebound": (
        [
            [
                {"tool_calls": [{"id": "w", "name": "publish", "arguments": {"title": "draft"}}]},
                {"text": "done"},
            ]
        ],
        {"publish": {"effect": "non_idempotent_write", "rewrite_arguments": {"title": "final"}}},
    ),
    # Turn records (issue 44): the first step streams its text and asks for a read and a
    # write with a preview; the write is approved; the steps' text rides in RunModel's
    # results (`step_text`) and the marker sessionflow-model-step-events is recorded.
    "turn-records": (
        [
            [
                {
                    "tool_calls": [
                        {"id": "r", "name": "lookup", "arguments": {"q": 1}},
                        {"id": "w", "name": "write_file", "arguments": {"path": "a.md", "content": "new"}},
                    ],
                    "deltas": ["Let me ", "look."],
                },
                {"text": "done", "deltas": ["do", "ne"]},
            ],
            [{"text": "again"}],
        ],
        {
            "lookup": {"effect": "read"},
            "write_file": {
                "effect": "non_idempotent_write",
                "preview": {"kind": "diff", "summary": "overwrites 1 line", "text": "-old\n+new"},
            },
        },
    ),
    # Continue steps (issue 20): a retry-style continue, a tool call, a continue after the
    # tool's result, then the answer; each continued call is its own RunModel step.
    "continue-steps": (
        [
            [
                {"continue": "answer again"},
                {"tool_calls": [{"id": "r", "name": "lookup", "arguments": {"q": 1}}]},
                {"continue": "check the result"},
                {"text": "done"},
            ]
        ],
        {"lookup": {"effect": "read"}},
    ),
    # Nine continues against the default limit of eight: the turn stops (continue_limit)
    # and the next turn's model sees the stop note.
    "continue-limit": ([[{"continue": f"again {n}"} for n in range(1, 10)], [{"text": "after"}]], {}),
    # Carry between turns (issue 20): turn 1 carries, turn 2 (a tool call, then the answer)
    # replaces it, turn 3 fails and keeps it, turn 4 completes without one and clears it.
    "carry-between-turns": (
        [
            [{"text": "one", "carry": "agent=billing"}],
            [
                {"tool_calls": [{"id": "r", "name": "lookup", "arguments": {"q": 1}}]},
                {"text": "two", "carry": "agent=refunds"},
            ],
            [{"fail_attempts": 3}],
            [{"text": "four"}],
        ],
        {"lookup": {"effect": "read"}},
    ),
    # Tool state (issue 20): two parallel calls return state updates, which the next model
    # call gets in model order; a third call updates again before the answer.
    "tool-state-update": (
        [
            [
                {
                    "tool_calls": [
                        {"id": "a", "name": "seat", "arguments": {"n": 1}},
                        {"id": "b", "name": "meal", "arguments": {"n": 2}},
                    ]
                },
                {"tool_calls": [{"id": "c", "name": "seat", "arguments": {"n": 3}}]},
                {"text": "all set"},
            ]
        ],
        {
            "seat": {"effect": "read", "state_update": {"step": "seat", "seat": "12A"}},
            "meal": {"effect": "read", "state_update": {"step": "meal", "meal": "veg"}},
        },
    ),
    # Framework approvals (issue 20): the framework asks for a read the session would run
    # at once, and pre-approves a write whose floor asks anyway; both are approved.
    "framework-approval": (
        [
            [
                {
                    "tool_calls": [
                        {"id": "r", "name": "lookup", "arguments": {"q": 1}},
                        {"id": "w", "name": "publish", "arguments": {}},
                    ]
                },
                {"text": "done"},
            ]
        ],
        {
            "lookup": {"effect": "read", "framework_approval": "required"},
            "publish": {"effect": "non_idempotent_write", "framework_approval": "pre_approved"},
        },
    ),
    # Questions (issue 20): a question answered with a value, which the tool returns.
    "question-answered": (
        [
            [
                {"tool_calls": [{"id": "q", "name": "ask", "arguments": {"question": "Which colour?"}}]},
                {"text": "ok"},
            ]
        ],
        {"ask": {"effect": "read", "question": True, "returns_answer": True}},
    ),
    # Compact payloads (issue 22): a tool turn written by the converter that leaves out
    # absent fields: a read with a state update, an approved write, a question, a read
    # whose step gets no run state (skip_run_state); then a text turn. The client builds
    # both user messages, so neither turn runs a BuildUserMessage step. Replayed by Temporal's default converter, as a worker before it would.
    "compact-payloads": (
        [
            [
                {
                    "tool_calls": [
                        {"id": "r", "name": "seat", "arguments": {"n": 1}},
                        {"id": "w", "name": "publish", "arguments": {}},
                        {"id": "q", "name": "ask", "arguments": {"question": "Which colour?"}},
                        {"id": "s", "name": "lookup", "arguments": {"q": 1}},
                    ]
                },
                {"text": "done", "carry": "agent=billing"},
            ],
            [{"text": "again"}],
        ],
        {
            "seat": {"effect": "read", "state_update": {"step": "seat", "seat": "12A"}},
            "publish": {"effect": "non_idempotent_write"},
            "ask": {"effect": "read", "question": True, "returns_answer": True},
            "lookup": {"effect": "read", "skip_run_state": True},
        },
    ),
    "start-with-history": ([[{"text": "hello Ada"}], [{"text": "again"}]], {}),
    # Telemetry (issue 26): step summaries, current details, and the search attributes the
    # session upserts (patch marker sessionflow-search-attributes) as it runs a tool turn,
    # waits for an approval, goes idle, runs a text turn, and stops.
    "search-attributes": (
        [
            [
                {
                    "tool_calls": [
                        {"id": "r", "name": "lookup", "arguments": {"q": "x" * 500}},
                        {"id": "w", "name": "publish", "arguments": {}},
                    ]
                },
                {"text": "done"},
            ],
            [{"text": "again"}],
        ],
        {"lookup": {"effect": "read"}, "publish": {"effect": "non_idempotent_write"}},
    ),
    # Local steps (issue 25): two reads whose policy has a local_timeout run as local
    # activities (markers), the first failing once and retried; a regular read beside them.
    "local-reads": (
        [
            [
                {
                    "tool_calls": [
                        {"id": "a", "name": "local_lookup", "arguments": {"q": 1}},
                        {"id": "b", "name": "local_lookup", "arguments": {"q": 2}},
                        {"id": "c", "name": "lookup", "arguments": {"q": 3}},
                    ]
                },
                {"text": "done"},
            ],
            [{"text": "again"}],
        ],
        {"local_lookup": {"effect": "read", "crash_attempts": 1}, "lookup": {"effect": "read"}},
    ),
    # Verified outcomes (issue 20): an approved write whose step fails, then its verify step
    # (sessionflow.VerifyTool) answers; the patch marker sessionflow-verify is recorded.
    **{
        f"verify-{answer}": (
            [[{"tool_calls": [{"id": "w", "name": "pay", "arguments": {"amount": 10}}]}, {"text": "done"}]],
            {
                "pay": {
                    "effect": "non_idempotent_write",
                    "crash_attempts": 1,
                    "verify": {
                        "result": answer,
                        "output": "payment found",
                        "message": f"verify says {answer}",
                    },
                }
            },
        )
        for answer in ("succeeded", "failed", "unknown")
    },
}

HISTORIES: dict[str, list[FrameworkMessage]] = {
    # A session started from an existing history (payload version 6): three messages, one
    # large enough to go by reference, and the index chunk the client wrote for them.
    "start-with-history": [
        FrameworkMessage(
            role=MessageRole.USER,
            framework_item={"role": "user", "content": "my name is Ada"},
            text="my name is Ada",
        ),
        FrameworkMessage(
            role=MessageRole.ASSISTANT, framework_item={"role": "assistant", "content": "hello"}, text="hello"
        ),
        FrameworkMessage(
            role=MessageRole.USER, framework_item={"role": "user", "content": "x" * 20_000}, text="x" * 20_000
        ),
    ],
}
"""Scenarios whose session starts from a history (`start_session(history=...)`)."""

EARLY_ANSWERS = {"early-answer": ("early", "turn-1:w")}
"""Scenarios whose first model step waits at a gate until an answer naming its call was sent."""

BY_FLOW_TYPE = {"flow-type-client"}
"""Scenarios whose client has only the flow type: the session asks its worker for its
configuration (FlowRunConfig) and builds every user message; later turns are sent as
`run_turn` sends them, with a message ID."""


async def record(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        async with DevServer(DevServerConfig(data_dir=root / "server")) as server:
            # The converter a worker uses (compact payloads), for the client's payloads too.
            client = with_payload_store(await server.connect())
            timings = SessionTimings(
                retry_initial_interval=timedelta(milliseconds=100), heartbeat_interval=timedelta(seconds=1)
            )
            flow = save_scripted_flow(
                root / "state",
                "replay-recorder",
                timings=timings,
                # Only the local-reads scenario calls this tool.
                tool_policies={"local_lookup": ToolPolicy(effect=ToolEffect.READ, local_timeout=5)},
            )
            sessions = AgentSessionClient(client, flow)
            stop = asyncio.Event()
            worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
            try:
                for name, (turns, tools) in SCENARIOS.items():
                    if names and name not in names:
                        continue
                    write_script(root / "state", name, turns, tools)
                    by_type = name in BY_FLOW_TYPE
                    talker = AgentSessionClient(client, flow.flow_type) if by_type else sessions
                    await talker.start_session(name, "start", history=HISTORIES.get(name, ()))
                    early: asyncio.Task[bool] | None = None
                    if name in EARLY_ANSWERS:
                        gate_name, interrupt_id = EARLY_ANSWERS[name]
                        gate = FileGate(root / "state", gate_name)
                        await gate.wait_until_reached()
                        early = asyncio.create_task(
                            sessions.resolve_interrupt(name, interrupt_id, approved=True)
                        )
                        await asyncio.sleep(1)
                        gate.release()
                        if not await early:
                            raise RuntimeError(f"{name}: the early answer was refused")
                    for turn in range(1, len(turns) + 1):
                        if turn > 1:
                            message_id = f"message-{turn}" if by_type else None
                            await talker.send_user_message(name, f"turn {turn}", message_id=message_id)
                        while True:
                            snapshot = await sessions.get_agent_snapshot(name)
                            for interrupt in snapshot.pending_interrupts:
                                answer = "teal" if interrupt.kind == "question" else None
                                await sessions.resolve_interrupt(
                                    name, interrupt.interrupt_id, approved=True, answer=answer
                                )
                            state = snapshot.state
                            if (
                                state
                                and state.turn_count == turn
                                and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
                            ):
                                break
                            await asyncio.sleep(0.05)
                    await sessions.stop_session(name)
                    await wait_for_agent_snapshot(sessions, name, lambda s: s.stopped, description="stopped")
                    await client.get_workflow_handle(name).result()
                    await export_history(client, name, HERE / f"{name}.json")
                    print(f"recorded {name}")
            finally:
                stop.set()
                await worker


if __name__ == "__main__":
    unknown = sorted(set(sys.argv[1:]) - set(SCENARIOS))
    if unknown:
        raise SystemExit(f"unknown scenarios {unknown}; known: {sorted(SCENARIOS)}")
    asyncio.run(record(sys.argv[1:]))
