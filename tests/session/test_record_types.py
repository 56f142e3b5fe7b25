"""The session's records are values: immutable once made, and made by keyword.

Records are what the workflow stores and what a snapshot, an event or a page hands out;
one changed in place would change what another holder (the history, a cached snapshot)
sees. Every field is given by name, so fields can be added without moving callers'
arguments. (Each line here is what ci/mutants found no test holding to.)
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import cast

import pytest

from sessionflow.session import (
    approvals,
    bodies,
    events,
    fork,
    guardrails,
    invocation,
    memory,
    messages,
    model_fields,
    options,
    outcomes,
    queued_message,
    runner,
    state,
    tools,
    usage,
    verify,
)

FROZEN: list[type] = [
    approvals.ApprovalDecision,
    bodies.BodyRef,
    events.AgentEvent,
    events.AgentEventsPage,
    fork.ForkedFrom,
    guardrails.Budget,
    invocation.ToolInvocation,
    memory.MemoryNote,
    messages.FrameworkMessage,
    messages.AgentMessage,
    options.SessionTimings,
    options.SessionBudget,
    options.MemoryOptions,
    options.AgentSessionOptions,
    outcomes.TurnCompleted,
    outcomes.ToolCallsRequested,
    outcomes.ContinueRequested,
    queued_message.QueuedUserMessage,
    runner.AgentTurnContext,
    runner.DeferredToolExecution,
    runner.ImageInput,
    state.AgentState,
    state.AgentInterrupt,
    state.AgentSnapshot,
    state.AgentMessagesPage,
    tools.ToolPolicy,
    tools.DeferredToolCall,
    tools.AgentToolCall,
    tools.ToolExecutionResult,
    usage.AgentUsage,
    verify.TookEffect,
    verify.NoEffect,
    verify.EffectUnknown,
    verify.VerifyCall,
]
MUTABLE: list[type] = [events.EventLog, memory.MemoryStore, model_fields.SessionFields]


def _bare(record: type) -> object:
    """An instance made without its fields (`__init__` not run)."""
    return cast(object, object.__new__(record))


@pytest.mark.parametrize("record", FROZEN, ids=lambda record: record.__name__)
def test_a_record_cannot_be_changed_in_place(record: type) -> None:
    instance = _bare(record)
    for each in dataclasses.fields(record):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(instance, each.name, None)


@pytest.mark.parametrize("record", FROZEN + MUTABLE, ids=lambda record: record.__name__)
def test_a_record_takes_its_fields_by_keyword_only(record: type) -> None:
    parameters = list(inspect.signature(record).parameters.values())
    assert parameters, record
    assert [p.name for p in parameters if p.kind is not inspect.Parameter.KEYWORD_ONLY] == []


@pytest.mark.parametrize("record", MUTABLE, ids=lambda record: record.__name__)
def test_the_stores_change_in_place(record: type) -> None:
    instance = _bare(record)
    name = dataclasses.fields(record)[0].name
    setattr(instance, name, None)
    assert getattr(instance, name) is None
