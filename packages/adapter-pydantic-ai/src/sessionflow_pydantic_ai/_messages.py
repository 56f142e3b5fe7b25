"""Pydantic AI messages as stored session messages, and the run state of an open turn."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import pydantic_core
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    ToolReturnPart,
    UserPromptPart,
)

from sessionflow import MessageRole
from sessionflow.kit import FrameworkMessage
from sessionflow_pydantic_ai._retries import RetryBudget
from sessionflow_pydantic_ai._waits import WaitingCall

__all__ = [
    "RUN_STATE_VERSION",
    "RunState",
    "dump_messages",
    "dump_system_prompt",
    "framework_messages",
    "load_messages",
    "load_system_prompt",
    "render_output",
    "user_message",
]

RUN_STATE_VERSION = 3
"""Bumped whenever the run state's JSON shape changes; versions not in `_READ_VERSIONS` are
refused, not guessed at. 2 added the retry budget (and states that end with a retry request);
3 the framework's history (`RunState.history`), which only a state that holds one is
written as: every other state is still written as version 2, which workers of the versions
before read as they always did. (`RunState.system_prompt` is a key such a worker ignores:
it renders the system prompt again, as it always did.)"""

_HISTORY_FREE_VERSION = 2
_READ_VERSIONS = (1, 2, 3)


def dump_messages(messages: Sequence[ModelMessage]) -> list[dict[str, Any]]:
    """Each message as a JSON-able dict, Pydantic AI's own serialization."""
    return cast(list[dict[str, Any]], ModelMessagesTypeAdapter.dump_python(list(messages), mode="json"))


def load_messages(items: Iterable[Any]) -> list[ModelMessage]:
    """The inverse of `dump_messages`."""
    return ModelMessagesTypeAdapter.validate_python(list(items))


def dump_system_prompt(parts: Sequence[SystemPromptPart]) -> list[dict[str, Any]]:
    """System prompt parts as JSON (Pydantic AI's own, as the parts of a request)."""
    return cast(list[dict[str, Any]], dump_messages([ModelRequest(parts=list(parts))])[0]["parts"])


def load_system_prompt(raw: Any) -> list[SystemPromptPart]:
    """The inverse of `dump_system_prompt`."""
    [request] = load_messages([{"kind": "request", "parts": raw}])
    return (
        [p for p in request.parts if isinstance(p, SystemPromptPart)]
        if isinstance(request, ModelRequest)
        else []
    )


def user_message(text: str) -> FrameworkMessage:
    """A user turn: one `ModelRequest` holding the prompt."""
    request = ModelRequest(parts=[UserPromptPart(content=text)])
    return FrameworkMessage(role=MessageRole.USER, framework_item=dump_messages([request])[0], text=text)


def framework_messages(messages: Sequence[ModelMessage], *, final_text: str | None) -> list[FrameworkMessage]:
    """One stored message per Pydantic AI message; the last response shows `final_text`."""
    last_response = max((i for i, m in enumerate(messages) if isinstance(m, ModelResponse)), default=-1)
    items = dump_messages(messages)
    stored: list[FrameworkMessage] = []
    for index, (message, item) in enumerate(zip(messages, items, strict=True)):
        if isinstance(message, ModelResponse):
            text = final_text if index == last_response and final_text is not None else message.text
            stored.append(FrameworkMessage(role=MessageRole.ASSISTANT, framework_item=item, text=text))
        else:
            stored.append(_request_message(message, item))
    return stored


def _request_message(request: ModelRequest, item: dict[str, Any]) -> FrameworkMessage:
    returns = [part.model_response_str() for part in request.parts if isinstance(part, ToolReturnPart)]
    if returns:
        return FrameworkMessage(role=MessageRole.TOOL, framework_item=item, text="\n".join(returns))
    prompts = [part.content for part in request.parts if isinstance(part, UserPromptPart)]
    text = "\n".join(p for p in prompts if isinstance(p, str)) or None
    return FrameworkMessage(role=MessageRole.USER, framework_item=item, text=text)


def render_output(output: object) -> str:
    """The agent's final output as text: a string as is, anything else as JSON."""
    if isinstance(output, str):
        return output
    return pydantic_core.to_json(output).decode()


@dataclass(frozen=True)
class ToolStepView:
    """A tool step's view of the run state of the model step that deferred its call."""

    has_deps: bool = False
    deps: Any = None
    waiting: dict[str, WaitingCall] = field(default_factory=lambda: {})
    run_step: int = 0
    """The turn's model responses so far: the step the call's response was made in."""
    conversation_id: str | None = None
    """The conversation of the turn's latest message (None: the session's own)."""


@dataclass(frozen=True, kw_only=True)
class RunState:
    """What continues a turn after a model step: the turn's messages so far, and the
    retries it has used.

    After a response that asked for tools, the messages end with it and `deferred` holds
    the IDs of the calls the session runs; calls of that response that are not deferred
    are output tool calls, which Pydantic AI processes itself when the turn resumes. After
    an answer Pydantic AI refused (an output validator's `ModelRetry`, invalid structured
    output), the messages end with its retry request and `deferred` is empty: the next
    model step sends that request.
    """

    messages: list[ModelMessage]
    deferred: list[str]
    budget: RetryBudget = field(default_factory=RetryBudget)
    has_deps: bool = False
    """Whether `deps` holds the run's deps (states written before deps travelled hold none)."""
    deps: Any = None
    """The run's deps as JSON values (`DepsCodec.dump`)."""
    waiting: dict[str, WaitingCall] = field(default_factory=lambda: {})
    """The session's calls that stand for model calls that deferred themselves (`_waits`)."""
    values: dict[str, Any] = field(default_factory=lambda: {})
    """Values the response's calls returned, kept while others wait (`_step_update`)."""
    established_tools: list[str] | None = None
    """The tools the turn's requests have offered the model so far (Pydantic AI's
    ``established_tool_names``); None before the first request."""
    history: list[ModelMessage] | None = None
    """Pydantic AI's whole message history after the step, where a history processor made
    it differ from the stored messages plus `messages` (`_framework_history`); None: it is those."""
    system_prompt: list[SystemPromptPart] | None = None
    """The system prompt at the head of the history, as the session's first request made it
    (`_framework_history`); None: none made yet (or the history holds it)."""

    @property
    def response(self) -> ModelResponse:
        last = self.messages[-1]
        if not isinstance(last, ModelResponse):
            raise ValueError(
                "a run state with deferred calls must end with the model response that asked for them"
            )
        return last

    @property
    def retry_request(self) -> ModelRequest | None:
        """The refused answer's retry request, when the state ends with one."""
        last = self.messages[-1] if self.messages else None
        return last if isinstance(last, ModelRequest) and not self.deferred else None

    def to_json(self) -> str:
        return json.dumps(
            {
                # A worker that cannot read the history must not resume without it.
                "version": RUN_STATE_VERSION if self.history is not None else _HISTORY_FREE_VERSION,
                "messages": dump_messages(self.messages),
                "deferred": self.deferred,
                "retries": self.budget.to_json(),
                **({"deps": self.deps} if self.has_deps else {}),
                **({"waiting": {k: w.to_json() for k, w in self.waiting.items()}} if self.waiting else {}),
                **({"values": self.values} if self.values else {}),
                **(
                    {"established_tools": self.established_tools}
                    if self.established_tools is not None
                    else {}
                ),
                **({"history": dump_messages(self.history)} if self.history is not None else {}),
                **(
                    {"system_prompt": dump_system_prompt(self.system_prompt)}
                    if self.system_prompt is not None
                    else {}
                ),
            },
            separators=(",", ":"),
        )

    @staticmethod
    def read_for_tool(text: str) -> ToolStepView:
        """What a tool step needs of a stored state (messages are not validated)."""
        raw = cast(dict[str, Any], json.loads(text))
        waiting = {
            str(k): WaitingCall.from_json(v)
            for k, v in cast(dict[str, Any], raw.get("waiting") or {}).items()
        }
        messages = cast(list[dict[str, Any]], raw.get("messages") or [])
        return ToolStepView(
            has_deps="deps" in raw,
            deps=raw.get("deps"),
            waiting=waiting,
            run_step=sum(1 for m in messages if m.get("kind") == "response"),
            conversation_id=next(
                (m["conversation_id"] for m in reversed(messages) if m.get("conversation_id")), None
            ),
        )

    @classmethod
    def from_json(cls, text: str) -> RunState:
        raw = cast(dict[str, Any], json.loads(text))
        if raw.get("version") not in _READ_VERSIONS:
            raise ValueError(
                f"unsupported Pydantic AI run state version {raw.get('version')!r}; expected one of {_READ_VERSIONS}"
            )
        state = cls(
            messages=load_messages(cast(list[Any], raw["messages"])),
            deferred=[str(i) for i in cast(list[Any], raw["deferred"])],
            # Version 1 (before retries travelled) counted none: a fresh budget.
            budget=RetryBudget.from_json(raw.get("retries")),
            has_deps="deps" in raw,
            deps=raw.get("deps"),
            waiting={
                str(k): WaitingCall.from_json(v)
                for k, v in cast(dict[str, Any], raw.get("waiting") or {}).items()
            },
            values=cast(dict[str, Any], raw.get("values") or {}),
            established_tools=cast(list[str] | None, raw.get("established_tools")),
            history=load_messages(cast(list[Any], raw["history"])) if "history" in raw else None,
            system_prompt=load_system_prompt(raw["system_prompt"]) if "system_prompt" in raw else None,
        )
        if state.deferred:
            _ = state.response  # validates the shape
        elif state.retry_request is None:
            raise ValueError("a run state without deferred calls must end with a retry request")
        return state
