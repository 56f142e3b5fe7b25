"""A per-call policy decides approval from the arguments and the turn's settings."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from sessionflow import ToolEffect, ToolPolicy, serve_agent_flows
from sessionflow.kit import DeferredToolCall
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after, pending_interrupt


def shell_policy(call: DeferredToolCall, settings: Mapping[str, Any]) -> ToolPolicy:
    allow = set(settings.get("allow", []))
    command = json.loads(call.arguments)["command"]
    return ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=command not in allow)


async def test_call_policy_uses_arguments_and_turn_settings(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(workers=0)
    harness.flow.options = replace(harness.flow.options, call_policy=shell_policy)
    harness.script(
        "p-shell",
        [
            [
                {
                    "tool_calls": [
                        {"id": "a", "name": "sh", "arguments": {"command": "ls"}},
                        {"id": "b", "name": "sh", "arguments": {"command": "rm -rf x"}},
                    ]
                },
                {"text": "done"},
            ]
        ],
        {"sh": {"output": "ran"}},
    )
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(harness.stack.client, [harness.flow], stop=stop))
    try:
        await harness.sessions.start_session("p-shell", "clean up", settings={"allow": ["ls"]})
        interrupt = await pending_interrupt(harness, "p-shell")
        assert interrupt.tool_call_id == "b"
        snapshot = await harness.sessions.get_agent_snapshot("p-shell")
        assert {r.tool_call_id: r.policy.is_approval_required for r in snapshot.tool_calls} == {
            "a": False,
            "b": True,
        }
        assert await harness.sessions.resolve_interrupt("p-shell", interrupt.interrupt_id, approved=False)
        await idle_after(harness, "p-shell", 1)
        assert [e["tool_call_id"] for e in harness.log.entries("tool", "sh")] == ["a"]
    finally:
        stop.set()
        await worker
