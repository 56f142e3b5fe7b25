"""A framework-free runner for any OpenAI-compatible Chat Completions endpoint."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

import httpx

from sessionflow.builtin._carry import with_carried
from sessionflow.builtin._tool_state import STATE_KEY, merged_tool_state, state_line
from sessionflow.kit._images import image_data_url, image_ref_part, with_images_read
from sessionflow.kit._tool_asks import with_tool_asks
from sessionflow.kit._tool_specs import ToolSpec
from sessionflow.session.errors import SessionRunError
from sessionflow.session.messages import FrameworkMessage, MessageRole
from sessionflow.session.outcomes import (
    AgentTurnOutcome,
    ContinueRequested,
    ToolCallsRequested,
    TurnCompleted,
)
from sessionflow.session.runner import (
    AgentFrameworkRunner,
    AgentTurnContext,
    DeferredToolExecution,
    ImageInput,
)
from sessionflow.session.tools import (
    DeferredToolCall,
    ToolEffect,
    ToolExecutionError,
    ToolExecutionResult,
    describe_tool_call_outcome,
    tool_arguments_object,
)
from sessionflow.session.usage import AgentUsage
from sessionflow.session.verify import VerifyCall, VerifyResult

__all__ = ["ChatCompletionsRunner", "ModelHTTPError"]

Json = dict[str, Any]
RUN_STATE_VERSION = 1
_STEERED_KEY = "steered"
"""Run state key: where in the turn's items the steered user messages are (index, text)."""


class ModelHTTPError(SessionRunError, RuntimeError):
    """The endpoint answered with an error status; the session retries the model call.

    `headers` keeps the answer's retry headers (``retry-after``, ``retry-after-ms``): on a
    429 or 503 the session waits as long as they ask before the next attempt.
    """

    def __init__(self, status: int, body: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(f"model endpoint answered HTTP {status}: {body[:500]}")
        self.status = status
        self.body = body[:500]
        self.headers = {k.lower(): v[:100] for k, v in (headers or {}).items() if k.lower() in _RETRY_HEADERS}

    def __reduce__(self) -> tuple[Any, ...]:
        # The constructor takes (status, body, headers), not the formatted text in `args`.
        return (type(self), (self.status, self.body, self.headers))


_RETRY_HEADERS = frozenset({"retry-after", "retry-after-ms"})


@dataclass
class _Reply:
    text: str = ""
    reasoning: str = ""
    tool_calls: dict[int, Json] = field(default_factory=lambda: {})
    usage: AgentUsage = field(default_factory=AgentUsage)


class ChatCompletionsRunner(AgentFrameworkRunner):
    """One model call per `run_model_step`, streamed with httpx; every tool is deferred.

    Works with OpenAI, vLLM, Ollama, a LiteLLM proxy, or anything else that speaks
    Chat Completions. The base URL and key default to `OPENAI_BASE_URL` and `OPENAI_API_KEY`.

    `output_validator` checks a final answer: when it returns a retry prompt, the step
    ends with `ContinueRequested`, and the next model call sees the refused answer and
    the prompt as a user message (as Pydantic AI's `ModelRetry` does). The refused answer
    and the prompt stay in the turn's messages, so the transcript shows what the model saw.

    `carry` decides what a completed turn carries into the next: it gets the carry the
    turn started with (or None) and the final answer, and returns the next one (None
    clears it). Every model call of the next turn sees a carry as a system message just
    before that turn's messages (`[sessionflow] Carried from the previous turn: ...`).
    Without a hook nothing is carried.
    Tool state: a tool that returns `ToolOutput(text, state_update={...})` sets keys of a
    JSON object kept in the run state. The updates of one model response's calls merge in
    model order (a shallow update per call; the call the model asked for later wins), the
    next model call sees the state as a ``Tool state: {...}`` line of its system message,
    and later tools read it with `sessionflow.builtin.tool_state`. It lasts for the turn.
    A tool's own approval rule (`ToolSpec.needs_approval`, `ToolSpec.pre_approved`) and
    its question (`ToolSpec.question`, see `sessionflow.kit.question_tool`) go on the
    deferred call; the session's floor still decides. A question's answer is the tool's
    output the model sees. A rejection, of the session's approval or the tool's own, reaches
    the model as `describe_tool_call_outcome` words it (this runner has no wording of its own).
    """

    def __init__(
        self,
        *,
        model: str,
        tools: Sequence[ToolSpec] = (),
        system_prompt: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        stream: bool = True,
        timeout: float = 600.0,
        extra_body: Json | None = None,
        output_validator: Callable[[str], str | None] | None = None,
        carry: Callable[[str | None, str], str | None] | None = None,
    ) -> None:
        self.model = model
        self.tools = {spec.name: spec for spec in tools}
        self.system_prompt = system_prompt
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip(
            "/"
        )
        self._api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        self.stream = stream
        self.timeout = timeout
        self.extra_body = extra_body or {}
        self.output_validator = output_validator
        self.carry = carry
        self._clients: dict[int, httpx.AsyncClient] = {}

    # -- messages ------------------------------------------------------------------------

    def build_user_message(self, text: str) -> FrameworkMessage:
        return FrameworkMessage(
            role=MessageRole.USER, framework_item={"role": "user", "content": text}, text=text
        )

    def build_user_message_with_images(self, text: str, images: Sequence[ImageInput]) -> FrameworkMessage:
        # Only the store path is kept in the session; the bytes are read at model-call time.
        parts: list[Json] = [{"type": "text", "text": text}]
        parts += [image_ref_part(image) for image in images]
        return FrameworkMessage(
            role=MessageRole.USER, framework_item={"role": "user", "content": parts}, text=text
        )

    # -- model ---------------------------------------------------------------------------

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        items: list[Json] = []
        tool_state: Json = {}
        steered: dict[int, str | None] = {}  # index in items -> text, of each steered message
        if turn.framework_run_state is not None:
            state = cast(Json, json.loads(turn.framework_run_state))
            if state.get("v") != RUN_STATE_VERSION:
                raise ValueError(f"unsupported run state version {state.get('v')!r}")
            items = list(cast(list[Json], state["items"]))
            tool_state = cast(Json, state.get(STATE_KEY) or {})
            steered = {int(i): t for i, t in cast(list[list[Any]], state.get(_STEERED_KEY) or [])}
            for tool_call_id in cast(list[str], state["pending"]):
                record = turn.recorded_tool_call(tool_call_id)
                items.append(
                    {
                        "role": "tool",
                        "tool_call_id": tool_call_id,
                        "content": describe_tool_call_outcome(record),
                    }
                )
        # A message that steers the turn comes after the tool results, as the user's next
        # message would in a plain Chat Completions loop.
        for message in turn.steered_messages:
            steered[len(items)] = message.text
            items.append(cast(Json, message.framework_item))
        tool_state = merged_tool_state(tool_state, turn.state_updates())
        history = with_carried(turn, [cast(Json, m.message.framework_item) for m in turn.messages])
        # The state joins the one leading system message: many chat templates refuse a
        # second system message, or one after the conversation started.
        system = "\n\n".join(
            [
                *([self.system_prompt] if self.system_prompt else []),
                *([state_line(tool_state)] if tool_state else []),
            ]
        )
        messages = ([{"role": "system", "content": system}] if system else []) + history + items
        reply = await self._complete(turn, [_wire_message(m) for m in messages])
        assistant: Json = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            calls = [reply.tool_calls[i] for i in sorted(reply.tool_calls)]
            assistant["tool_calls"] = calls
            deferred = [
                with_tool_asks(
                    DeferredToolCall(
                        tool_call_id=str(c["id"]),
                        tool_name=str(c["function"]["name"]),
                        arguments=str(c["function"]["arguments"] or "{}"),
                        policy=turn.resolve_tool_policy(
                            str(c["function"]["name"]), self._framework_effect(str(c["function"]["name"]))
                        ),
                    ),
                    self.tools.get(str(c["function"]["name"])),
                )
                for c in calls
            ]
            deferred = [await self._verifiable(d) for d in deferred]
            state = {
                "v": RUN_STATE_VERSION,
                "items": [*items, assistant],
                "pending": [d.tool_call_id for d in deferred],
                STATE_KEY: tool_state,
                **_steered_state(steered),
            }
            return ToolCallsRequested(
                framework_run_state=json.dumps(state), tool_calls=deferred, usage=reply.usage
            )
        produced = [*items, assistant]
        retry = self.output_validator(reply.text) if self.output_validator is not None else None
        if retry is not None:
            state = {
                "v": RUN_STATE_VERSION,
                "items": [*produced, {"role": "user", "content": retry}],
                "pending": [],
                STATE_KEY: tool_state,
                **_steered_state(steered),
            }
            return ContinueRequested(
                framework_run_state=json.dumps(state), note=f"output validator: {retry}", usage=reply.usage
            )
        return TurnCompleted(
            new_messages=[
                _user_message(item, steered[i]) if i in steered else _framework_message(item)
                for i, item in enumerate(produced)
            ],
            usage=reply.usage,
            carry=self.carry(turn.carried_state, reply.text) if self.carry is not None else None,
        )

    async def _verifiable(self, call: DeferredToolCall) -> DeferredToolCall:
        """A call of a tool with a verify is deferred verifiable, with its basis recorded now."""
        spec = self.tools.get(call.tool_name)
        if spec is None or spec.verify is None:
            return call
        arguments = tool_arguments_object(call.arguments)
        basis = await spec.deferral_basis(arguments) if arguments is not None else None
        return replace(call, verifiable=True, verify_basis=basis)

    def _framework_effect(self, name: str) -> ToolEffect | None:
        spec = self.tools.get(name)
        return spec.framework_effect if spec is not None else None

    def _client(self) -> httpx.AsyncClient:
        key = id(asyncio.get_running_loop())
        client = self._clients.get(key)
        if client is None or client.is_closed:
            client = self._clients[key] = httpx.AsyncClient(timeout=self.timeout)
        return client

    async def _complete(self, turn: AgentTurnContext, messages: list[Json]) -> _Reply:
        body: Json = {"model": self.model, "messages": messages, **self.extra_body}
        if self.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": s.name,
                        "description": s.description,
                        "parameters": dict(s.parameters),
                    },
                }
                for s in self.tools.values()
            ]
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        url = f"{self.base_url}/chat/completions"
        if not self.stream:
            response = await self._client().post(url, json=body, headers=headers)
            if response.status_code >= 400:
                raise ModelHTTPError(response.status_code, response.text, response.headers)
            return _parse_completion(cast(Json, response.json()))
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        reply = _Reply()
        async with self._client().stream("POST", url, json=body, headers=headers) as response:
            if response.status_code >= 400:
                text = (await response.aread()).decode(errors="replace")
                raise ModelHTTPError(response.status_code, text, response.headers)
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                _apply_chunk(reply, cast(Json, json.loads(data)), turn)
        return reply

    # -- tools ---------------------------------------------------------------------------

    def accepts_steering(self) -> bool:
        """Steered messages join the run after the step's tool results (see `run_model_step`)."""
        return True

    def tool_catalog(self, session_settings: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]]:
        """Every tool this runner offers, with its JSON schema (for the session's proposal check)."""
        return {name: spec.parameters for name, spec in self.tools.items()}

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        record = call.tool_call
        spec = self.tools.get(record.tool_name)
        if spec is None:
            raise ToolExecutionError(f"unknown tool {record.tool_name!r}")
        output = await spec.call_output(record.parsed_arguments(), call.invocation)
        update = json.dumps(dict(output.state_update), ensure_ascii=False) if output.state_update else None
        return ToolExecutionResult(output=output.text, state_update=update)

    async def verify_tool_call(self, call: DeferredToolExecution) -> VerifyResult | None:
        """The tool's `ToolSpec.verify`, for a write whose step died; None when it has none."""
        spec = self.tools.get(call.tool_call.tool_name)
        if spec is None or spec.verify is None:
            return None
        return await spec.run_verify(call.tool_call.parsed_arguments(), VerifyCall.of(call))


def _apply_chunk(reply: _Reply, chunk: Json, turn: AgentTurnContext) -> None:
    usage = chunk.get("usage")
    if usage:
        reply.usage = _usage(cast(Json, usage))
    for choice in cast(list[Json], chunk.get("choices") or []):
        delta = cast(Json, choice.get("delta") or {})
        if delta.get("content"):
            reply.text += str(delta["content"])
            turn.events.write_text_delta(str(delta["content"]))
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning:
            reply.reasoning += str(reasoning)
            turn.events.write_reasoning_delta(str(reasoning))
        for fragment in cast(list[Json], delta.get("tool_calls") or []):
            index = int(fragment.get("index", 0))
            call = reply.tool_calls.setdefault(
                index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
            )
            if fragment.get("id"):
                call["id"] = fragment["id"]
            function = cast(Json, fragment.get("function") or {})
            if function.get("name"):
                call["function"]["name"] += function["name"]
            if function.get("arguments"):
                call["function"]["arguments"] += function["arguments"]


def _parse_completion(data: Json) -> _Reply:
    reply = _Reply(usage=_usage(cast(Json, data.get("usage") or {})))
    message = cast(Json, cast(list[Json], data["choices"])[0]["message"])
    reply.text = str(message.get("content") or "")
    reply.reasoning = str(message.get("reasoning_content") or "")
    for index, call in enumerate(cast(list[Json], message.get("tool_calls") or [])):
        reply.tool_calls[index] = {"id": call["id"], "type": "function", "function": dict(call["function"])}
    return reply


def _usage(raw: Json) -> AgentUsage:
    return AgentUsage(
        requests=1,
        input_tokens=int(raw.get("prompt_tokens", 0) or 0),
        output_tokens=int(raw.get("completion_tokens", 0) or 0),
    )


def _framework_message(item: Json) -> FrameworkMessage:
    # A user item inside a turn is the output validator's retry prompt: the runner wrote
    # it, not the person, so it is stored as SYSTEM (a chat view does not show it as theirs).
    role = {"tool": MessageRole.TOOL, "user": MessageRole.SYSTEM}.get(
        str(item["role"]), MessageRole.ASSISTANT
    )
    text = item.get("content") if isinstance(item.get("content"), str) else None
    return FrameworkMessage(role=role, framework_item=item, text=text)


def _user_message(item: Json, text: str | None) -> FrameworkMessage:
    """A message that steered the turn: the person's, stored as they sent it."""
    return FrameworkMessage(role=MessageRole.USER, framework_item=item, text=text)


def _steered_state(steered: dict[int, str | None]) -> Json:
    # Left out when empty, so a run state without steering keeps its bytes.
    return {_STEERED_KEY: [[i, t] for i, t in sorted(steered.items())]} if steered else {}


def _wire_message(item: Json) -> Json:
    """Turn stored image references into data URLs for the endpoint."""
    return with_images_read(item, _image_url)


def _image_url(image: ImageInput) -> Json:
    return {"type": "image_url", "image_url": {"url": image_data_url(image)}}
