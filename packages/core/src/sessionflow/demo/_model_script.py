"""What the scripted model server answers (replies, tool calls, usage, faults) and what
it records (:class:`RecordedRequest`, read back without knowing the wire shape).

These are plain frozen dataclasses with ``to_json``/``from_json`` so scripts and records
travel over the server's control API to and from any process.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

from sessionflow.kit._frameworks import ModelApi

__all__ = [
    "DEFAULT_USAGE",
    "FaultKind",
    "ModelFault",
    "ModelReply",
    "RecordedRequest",
    "ScriptedToolCall",
    "ScriptedUsage",
    "WireApi",
]

WireApi = ModelApi | Literal["gemini"]
"""The wire APIs the scripted server speaks: a framework's `ModelApi`, and Gemini's
``generateContent`` (`google-genai`, Google ADK)."""

FaultKind = Literal["http_500", "http_429", "http_503", "drop"]
_FAULT_KINDS: frozenset[str] = frozenset(get_args(FaultKind))
_HEADER_NAME = re.compile(r"[A-Za-z0-9-]{1,100}")


@dataclass(frozen=True)
class ScriptedUsage:
    """Token usage reported with a reply, mapped onto each API's native usage fields."""

    input_tokens: int
    output_tokens: int

    def to_json(self) -> dict[str, Any]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScriptedUsage:
        return cls(input_tokens=int(data["input_tokens"]), output_tokens=int(data["output_tokens"]))


DEFAULT_USAGE = ScriptedUsage(input_tokens=10, output_tokens=5)


@dataclass(frozen=True)
class ScriptedToolCall:
    """A tool call the model makes.

    ``arguments`` is either a JSON object or a raw string sent verbatim, so a script can
    also produce malformed arguments on purpose.
    """

    id: str
    name: str
    arguments: dict[str, Any] | str = field(default_factory=lambda: cast(dict[str, Any], {}))

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, separators=(",", ":"))

    def arguments_dict(self) -> dict[str, Any]:
        """The arguments as an object; raw strings that are not a JSON object give ``{}``."""
        if not isinstance(self.arguments, str):
            return self.arguments
        try:
            parsed: Any = json.loads(self.arguments)
        except ValueError:
            return {}
        return cast(dict[str, Any], parsed) if isinstance(parsed, dict) else {}

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScriptedToolCall:
        arguments: Any = data.get("arguments", {})
        if not isinstance(arguments, str | dict):
            raise ValueError(f"tool call arguments must be an object or a string, got {arguments!r}")
        return cls(
            id=str(data["id"]), name=str(data["name"]), arguments=cast(dict[str, Any] | str, arguments)
        )


@dataclass(frozen=True)
class ModelFault:
    """A failure instead of an answer.

    ``http_500``, ``http_429`` and ``http_503`` answer with that status in the API's error
    shape; ``drop`` closes the connection without sending any response. ``headers`` are the
    error's response headers: None sends ``retry-after: 0`` and ``retry-after-ms: 1`` (the
    SDKs' own retries then go at once), ``{}`` sends none, and ``{"retry-after": "3"}`` asks
    the client to wait three seconds.
    """

    kind: FaultKind
    message: str | None = None
    headers: dict[str, str] | None = None

    def __post_init__(self) -> None:
        if self.kind not in _FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; expected one of {sorted(_FAULT_KINDS)}")
        for name, value in (self.headers or {}).items():
            if not _HEADER_NAME.fullmatch(name) or "\r" in value or "\n" in value:
                raise ValueError(f"fault header {name!r}: {value!r} cannot be sent")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "headers": self.headers}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelFault:
        message = data.get("message")
        headers: Any = data.get("headers")
        return cls(
            kind=cast(FaultKind, data["kind"]),
            message=None if message is None else str(message),
            headers=None
            if headers is None
            else {str(k): str(v) for k, v in cast(dict[str, Any], headers).items()},
        )


@dataclass(frozen=True)
class ModelReply:
    """One scripted model turn; each request to a key consumes the next one.

    ``text_chunks`` is how the text is split into streaming deltas; when only
    ``text_chunks`` is given the text is their concatenation, and when both are given
    they must agree. ``delay_seconds`` sleeps before answering (a slow model).
    ``message=False`` leaves out the (empty) assistant message a reply without text or
    tool calls otherwise gets, so it answers reasoning alone (``reasoning_only``): on the
    Responses and Anthropic wires; a Chat Completions reply always has its message.
    ``refusal`` makes the reply the provider's explicit refusal (`refuse`), in each wire's
    own shape: Chat Completions' ``message.refusal`` (streamed as ``delta.refusal``), a
    Responses ``refusal`` content part (``response.refusal.delta`` and ``.done``), and
    Anthropic's ``stop_reason: "refusal"`` with the text as ``stop_details.explanation``.
    Gemini has no refusal of that kind (a blocked answer is a finish reason), so a refusal
    is not rendered there.
    """

    text: str | None = None
    text_chunks: list[str] | None = None
    reasoning: str | None = None
    tool_calls: list[ScriptedToolCall] = field(default_factory=lambda: cast(list[ScriptedToolCall], []))
    usage: ScriptedUsage | None = None
    fault: ModelFault | None = None
    delay_seconds: float = 0.0
    message: bool = True
    # Raw Responses output items the provider itself produced (hosted MCP's `mcp_list_tools`,
    # `mcp_approval_request`, `mcp_call`; see `hosted_mcp`), sent after the reasoning and
    # before the message. Only the Responses wire has them.
    output_items: list[dict[str, Any]] = field(default_factory=lambda: cast(list[dict[str, Any]], []))
    refusal: str | None = None

    def __post_init__(self) -> None:
        if self.refusal is not None and (
            self.full_text is not None or self.tool_calls or self.output_items or not self.message
        ):
            raise ValueError("a refusal is the whole answer: no text, tool calls or output items")
        if self.text is not None and self.text_chunks is not None and "".join(self.text_chunks) != self.text:
            raise ValueError(f"text_chunks {self.text_chunks!r} do not join to text {self.text!r}")
        if not self.message and self.full_text is not None:
            raise ValueError("a reply with message=False has no text")
        if self.delay_seconds < 0:
            raise ValueError("delay_seconds must be >= 0")

    @classmethod
    def say(
        cls,
        text: str,
        chunks: Sequence[str] | None = None,
        *,
        reasoning: str | None = None,
        usage: ScriptedUsage | None = None,
        delay_seconds: float = 0.0,
    ) -> ModelReply:
        """A plain text answer, streamed as ``chunks`` when given."""
        return cls(
            text=text,
            text_chunks=None if chunks is None else list(chunks),
            reasoning=reasoning,
            usage=usage,
            delay_seconds=delay_seconds,
        )

    @classmethod
    def call(
        cls,
        *tool_calls: ScriptedToolCall,
        text: str | None = None,
        reasoning: str | None = None,
        usage: ScriptedUsage | None = None,
    ) -> ModelReply:
        """An answer that calls tools (optionally with some text before the calls)."""
        if not tool_calls:
            raise ValueError("ModelReply.call needs at least one tool call")
        return cls(text=text, reasoning=reasoning, tool_calls=list(tool_calls), usage=usage)

    @classmethod
    def refuse(cls, refusal: str, *, usage: ScriptedUsage | None = None) -> ModelReply:
        """The provider's explicit refusal, with ``refusal`` as its human-readable text."""
        return cls(refusal=refusal, usage=usage)

    @classmethod
    def reasoning_only(cls, reasoning: str, *, usage: ScriptedUsage | None = None) -> ModelReply:
        """A response that only thinks: a reasoning item, no message and no tool call."""
        return cls(reasoning=reasoning, usage=usage, message=False)

    @classmethod
    def fail(
        cls,
        kind: FaultKind,
        message: str | None = None,
        *,
        delay_seconds: float = 0.0,
        headers: dict[str, str] | None = None,
    ) -> ModelReply:
        """A fault instead of an answer; it consumes one script entry like any reply.

        ``headers`` replace the fault's default response headers (see `ModelFault`).
        """
        return cls(fault=ModelFault(kind=kind, message=message, headers=headers), delay_seconds=delay_seconds)

    @property
    def full_text(self) -> str | None:
        if self.text is not None:
            return self.text
        if self.text_chunks is not None:
            return "".join(self.text_chunks)
        return None

    def stream_chunks(self) -> list[str]:
        """The text deltas to stream, never containing empty strings."""
        if self.text_chunks is not None:
            return [c for c in self.text_chunks if c]
        return [self.text] if self.text else []

    @property
    def effective_usage(self) -> ScriptedUsage:
        return self.usage if self.usage is not None else DEFAULT_USAGE

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "text_chunks": None if self.text_chunks is None else list(self.text_chunks),
            "reasoning": self.reasoning,
            "tool_calls": [c.to_json() for c in self.tool_calls],
            "usage": None if self.usage is None else self.usage.to_json(),
            "fault": None if self.fault is None else self.fault.to_json(),
            "delay_seconds": self.delay_seconds,
            "message": self.message,
            "output_items": [dict(item) for item in self.output_items],
            "refusal": self.refusal,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelReply:
        chunks: Any = data.get("text_chunks")
        usage: Any = data.get("usage")
        fault: Any = data.get("fault")
        calls: Any = data.get("tool_calls") or []
        return cls(
            text=_opt_str(data.get("text")),
            text_chunks=None if chunks is None else [str(c) for c in cast(list[Any], chunks)],
            reasoning=_opt_str(data.get("reasoning")),
            tool_calls=[ScriptedToolCall.from_json(c) for c in cast(list[dict[str, Any]], calls)],
            usage=None if usage is None else ScriptedUsage.from_json(cast(dict[str, Any], usage)),
            fault=None if fault is None else ModelFault.from_json(cast(dict[str, Any], fault)),
            delay_seconds=float(data.get("delay_seconds") or 0.0),
            # Scripts written before the option have every reply's message.
            message=data.get("message") is not False,
            # Scripts written before the option have none.
            output_items=[dict(item) for item in cast(list[dict[str, Any]], data.get("output_items") or [])],
            refusal=_opt_str(data.get("refusal")),
        )


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True)
class RecordedRequest:
    """A model request as the server received it, recorded before it was answered.

    ``index`` is the request's 0-based position among the requests to its ``key``;
    ``headers`` have lower-cased names.
    """

    api: WireApi
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    index: int
    key: str = "default"

    @property
    def model(self) -> str | None:
        if self.api == "gemini":
            # Gemini names the model in the path: ``.../models/{model}:generateContent``.
            return self.path.rpartition("/models/")[2].partition(":")[0] or None
        model = self.body.get("model")
        return model if isinstance(model, str) else None

    @property
    def stream(self) -> bool:
        if self.api == "gemini":
            return ":streamGenerateContent" in self.path
        return self.body.get("stream") is True

    def sent_texts(self) -> list[str]:
        """Every plain text the client sent, in order: system prompt or instructions
        first, then each message's content and each tool result, whatever the wire shape.
        """
        texts: list[str] = []
        if self.api == "gemini":
            return _gemini_texts(self.body)
        if self.api == "anthropic_messages":
            texts += _content_texts(self.body.get("system"))
        elif self.api == "responses":
            texts += _content_texts(self.body.get("instructions"))
        conversation: Any = self.body.get("input") if self.api == "responses" else self.body.get("messages")
        if isinstance(conversation, str):
            return [*texts, conversation]
        for item in _as_list(conversation):
            texts += _content_texts(item)
        return texts

    def saw(self, text: str) -> bool:
        """Whether ``text`` occurs in any of :meth:`sent_texts`."""
        return any(text in sent for sent in self.sent_texts())

    def last_user_text(self, *, ignore: Collection[str] = ()) -> str | None:
        """The joined text of the last user message (tool results are not user text).

        Text parts equal to one of ``ignore`` (after stripping) are left out, as if the
        framework had not sent them; a message left with only tool results is skipped.
        """
        if self.api == "gemini":
            return _gemini_last_user_text(self.body, {text.strip() for text in ignore})
        conversation: Any = self.body.get("input") if self.api == "responses" else self.body.get("messages")
        if isinstance(conversation, str):
            return conversation
        dropped = {text.strip() for text in ignore}
        for item in reversed(_as_list(conversation)):
            if item.get("role") != "user":
                continue
            content = _without_texts(item.get("content"), dropped)
            parts = [] if _is_tool_result_only(content) else _content_texts(content)
            if parts:
                return "".join(parts)
        return None

    def conversation(self, *, ignore: Collection[str] = ()) -> list[tuple[str, str]]:
        """The tool results and user texts the client sent, in order, whatever the wire shape.

        Each entry is ``("tool_result", call_id)`` or ``("user", text)`` (a user message's
        text parts joined); assistant messages and the system prompt are left out. User
        text parts equal to one of ``ignore`` (after stripping) are left out too, as in
        `last_user_text`. One user message that holds tool results and text (Anthropic
        Messages) gives its results first, then its text, as the blocks come.
        """
        dropped = {text.strip() for text in ignore}
        if self.api == "gemini":
            return _gemini_conversation(self.body, dropped)
        conversation: Any = self.body.get("input") if self.api == "responses" else self.body.get("messages")
        if isinstance(conversation, str):
            return [("user", conversation)]
        entries: list[tuple[str, str]] = []
        for item in _as_list(conversation):
            if item.get("role") == "tool" and "tool_call_id" in item:
                entries.append(("tool_result", str(item["tool_call_id"])))
            elif item.get("type") in ("function_call_output", "custom_tool_call_output"):
                entries.append(("tool_result", str(item.get("call_id"))))
            elif item.get("role") == "user":
                texts: list[str] = []
                for block in _as_list(item.get("content")):
                    if block.get("type") == "tool_result":
                        entries.append(("tool_result", str(block.get("tool_use_id"))))
                content = _without_texts(item.get("content"), dropped)
                if isinstance(content, list):
                    blocks = [b for b in _as_list(content) if b.get("type") != "tool_result"]
                    texts = [t for b in blocks for t in _content_texts(b)]
                else:
                    texts = _content_texts(content)
                if texts:
                    entries.append(("user", "".join(texts)))
        return entries

    def tool_results(self) -> dict[str, str]:
        """Tool outputs sent back to the model, by tool call id."""
        results: dict[str, str] = {}
        if self.api == "gemini":
            return _gemini_tool_results(self.body)
        conversation: Any = self.body.get("input") if self.api == "responses" else self.body.get("messages")
        for item in _as_list(conversation):
            if item.get("role") == "tool" and "tool_call_id" in item:
                results[str(item["tool_call_id"])] = "".join(_content_texts(item.get("content")))
            elif item.get("type") in ("function_call_output", "custom_tool_call_output"):
                results[str(item.get("call_id"))] = "".join(_content_texts(item.get("output")))
            for block in _as_list(item.get("content")):
                if block.get("type") == "tool_result":
                    results[str(block.get("tool_use_id"))] = "".join(_content_texts(block.get("content")))
        return results

    def mcp_approval_responses(self) -> dict[str, bool]:
        """The hosted MCP approvals the client sent (Responses), approve or not by request id."""
        conversation: Any = self.body.get("input") if self.api == "responses" else None
        return {
            str(item.get("approval_request_id")): item.get("approve") is True
            for item in _as_list(conversation)
            if item.get("type") == "mcp_approval_response"
        }

    def tool_names(self) -> list[str]:
        """Names of the tools offered to the model."""
        names: list[str] = []
        if self.api == "gemini":
            return [
                str(declaration.get("name"))
                for tool in _as_list(self.body.get("tools"))
                for declaration in _as_list(tool.get("functionDeclarations"))
            ]
        for tool in _as_list(self.body.get("tools")):
            function: Any = tool.get("function")
            name: Any = (
                cast(dict[str, Any], function).get("name") if isinstance(function, dict) else tool.get("name")
            )
            if isinstance(name, str):
                names.append(name)
        return names

    def to_json(self) -> dict[str, Any]:
        return {
            "api": self.api,
            "path": self.path,
            "headers": dict(self.headers),
            "body": self.body,
            "index": self.index,
            "key": self.key,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RecordedRequest:
        return cls(
            api=cast(WireApi, data["api"]),
            path=str(data["path"]),
            headers={str(k): str(v) for k, v in cast(dict[str, Any], data.get("headers") or {}).items()},
            body=cast(dict[str, Any], data.get("body") or {}),
            index=int(data["index"]),
            key=str(data.get("key", "default")),
        )


_NOT_SENT_TEXT = frozenset(
    {
        "tool_use",
        "server_tool_use",
        "function_call",
        "custom_tool_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "mcp_call",
        "thinking",
        "redacted_thinking",
        "reasoning",
        "image",
        "image_url",
        "input_image",
        "input_audio",
        "input_file",
        "document",
    }
)


def _as_list(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    return [cast(dict[str, Any], v) for v in cast(list[Any], value) if isinstance(v, dict)]


def _without_texts(content: Any, dropped: set[str]) -> Any:
    """``content`` without the text parts whose stripped text is in ``dropped``."""
    if not dropped:
        return content
    if isinstance(content, str):
        return "" if content.strip() in dropped else content
    return [
        block
        for block in _as_list(content)
        if not (block.get("type") in ("text", "input_text") and str(block.get("text", "")).strip() in dropped)
    ]


def _is_tool_result_only(content: Any) -> bool:
    blocks = _as_list(content)
    return bool(blocks) and all(b.get("type") == "tool_result" for b in blocks)


def _content_texts(content: Any) -> list[str]:
    """Flatten any message, content part, tool result or system entry into its texts."""
    if isinstance(content, str):
        return [content] if content else []
    if isinstance(content, list):
        return [text for part in cast(list[Any], content) for text in _content_texts(part)]
    if not isinstance(content, dict):
        return []
    part = cast(dict[str, Any], content)
    if part.get("type") in _NOT_SENT_TEXT:
        return []
    text = part.get("text")
    if isinstance(text, str):
        return [text] if text else []
    if "content" in part:
        return _content_texts(part["content"])
    if "output" in part:
        return _content_texts(part["output"])
    return []


# Gemini ------------------------------------------------------------------------------
# A request is ``{"systemInstruction": {"parts": [...]}, "contents": [{"role": "user" |
# "model", "parts": [...]}], "tools": [{"functionDeclarations": [...]}]}``; a part is
# ``{"text"}`` (``"thought": true`` for reasoning), ``{"functionCall"}`` or
# ``{"functionResponse": {"id", "name", "response"}}``.


def _gemini_part_text(part: dict[str, Any]) -> str | None:
    text = part.get("text")
    if isinstance(text, str) and text and part.get("thought") is not True:
        return text
    return None


def _gemini_texts(body: dict[str, Any]) -> list[str]:
    texts: list[str] = []
    system: Any = body.get("systemInstruction")
    contents = [cast(dict[str, Any], system)] if isinstance(system, dict) else []
    contents += _as_list(body.get("contents"))
    for content in contents:
        for part in _as_list(content.get("parts")):
            text = _gemini_part_text(part)
            if text is not None:
                texts.append(text)
            response: Any = part.get("functionResponse")
            if isinstance(response, dict):
                texts.append(_gemini_response_text(cast(dict[str, Any], response)))
    return texts


# Gemini's convention for a function response: ``output`` for the output, ``error`` for
# the error; google-genai and ADK wrap a value that is not an object as ``result``.
_GEMINI_SINGLE_FIELDS = frozenset({"result", "output", "error"})


def _gemini_response_text(function_response: dict[str, Any]) -> str:
    """A function response as text: its one field when that is ``result``, ``output`` or
    ``error``, else the JSON object."""
    response: Any = function_response.get("response")
    if isinstance(response, dict) and len(cast(dict[str, Any], response)) == 1:
        ((name, value),) = cast(dict[str, Any], response).items()
        if name in _GEMINI_SINGLE_FIELDS:
            return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return json.dumps(response, separators=(",", ":"))


def _gemini_last_user_text(body: dict[str, Any], dropped: set[str]) -> str | None:
    for content in reversed(_as_list(body.get("contents"))):
        if content.get("role", "user") != "user":
            continue
        texts = [
            text
            for part in _as_list(content.get("parts"))
            if (text := _gemini_part_text(part)) is not None and text.strip() not in dropped
        ]
        if texts:
            return "".join(texts)
    return None


def _gemini_conversation(body: dict[str, Any], dropped: set[str]) -> list[tuple[str, str]]:
    """`RecordedRequest.conversation` of a Gemini request: a user content's function
    responses (by ID, else name) first, then its text parts joined, as the parts come."""
    entries: list[tuple[str, str]] = []
    for content in _as_list(body.get("contents")):
        if content.get("role", "user") != "user":
            continue
        texts: list[str] = []
        for part in _as_list(content.get("parts")):
            response: Any = part.get("functionResponse")
            if isinstance(response, dict):
                typed = cast(dict[str, Any], response)
                entries.append(("tool_result", str(typed.get("id") or typed.get("name"))))
            elif (text := _gemini_part_text(part)) is not None and text.strip() not in dropped:
                texts.append(text)
        if texts:
            entries.append(("user", "".join(texts)))
    return entries


def _gemini_tool_results(body: dict[str, Any]) -> dict[str, str]:
    results: dict[str, str] = {}
    for content in _as_list(body.get("contents")):
        for part in _as_list(content.get("parts")):
            response: Any = part.get("functionResponse")
            if isinstance(response, dict):
                typed = cast(dict[str, Any], response)
                key = typed.get("id") or typed.get("name")
                results[str(key)] = _gemini_response_text(typed)
    return results
