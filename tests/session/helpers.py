"""Factories shared by the pure session-model tests (no engine, no I/O)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from sessionflow import AgentToolCall, AgentToolCallStatus, AgentUsage, MessageRole, ToolEffect, ToolPolicy
from sessionflow.kit import DeferredToolCall, FrameworkMessage, ToolCallsRequested
from sessionflow.session.model import SessionModel

NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)

READ = ToolPolicy(effect=ToolEffect.READ)
"""A policy that never asks for approval."""
WRITE = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)
"""A policy that always asks for approval."""


def user(text: str = "hi") -> FrameworkMessage:
    return FrameworkMessage(
        role=MessageRole.USER, framework_item={"role": "user", "content": text}, text=text
    )


def assistant(text: str = "ok") -> FrameworkMessage:
    return FrameworkMessage(
        role=MessageRole.ASSISTANT, framework_item={"role": "assistant", "content": text}, text=text
    )


def call(
    tool_call_id: str, *, policy: ToolPolicy = READ, tool_name: str = "lookup", arguments: str = '{"q": 1}'
) -> DeferredToolCall:
    return DeferredToolCall(
        tool_call_id=tool_call_id, tool_name=tool_name, arguments=arguments, policy=policy
    )


def requested(*calls: DeferredToolCall, run_state: str = "state-1", requests: int = 1) -> ToolCallsRequested:
    return ToolCallsRequested(
        framework_run_state=run_state,
        tool_calls=list(calls),
        usage=AgentUsage(requests=requests, input_tokens=10, output_tokens=5),
    )


def record(
    status: AgentToolCallStatus,
    *,
    tool_call_id: str = "c1",
    tool_name: str = "lookup",
    arguments: str = "{}",
    deferral_order: int = 1,
    **changes: Any,
) -> AgentToolCall:
    return AgentToolCall(
        tool_call_id=tool_call_id,
        tool_name=tool_name,
        arguments=arguments,
        policy=READ,
        deferral_order=deferral_order,
        status=status,
        **changes,
    )


def model_in_turn(text: str = "hi") -> SessionModel:
    """A fresh model with turn-1 open and its user message stored."""
    model = SessionModel()
    model.begin_turn()
    model.store_user_message(user(text))
    return model


def clone(model: SessionModel) -> SessionModel:
    return copy.deepcopy(model)
