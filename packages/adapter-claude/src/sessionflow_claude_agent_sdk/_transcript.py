"""The Claude Code session transcript as sessionflow state.

The CLI keeps a conversation as a JSONL transcript in its config folder. sessionflow
moves it between workers itself:

* during a turn, the run state holds the whole transcript (compressed) plus the deferred
  call; the next model step writes it into a fresh, private ``CLAUDE_CONFIG_DIR`` and
  resumes the session there;
* when a turn completes, its last stored message carries the transcript lines the turn
  added; the next turn joins the pieces of every completed turn.

User messages stored after the last completed turn (the messages of a failed turn and
sessionflow's note about it) are added as user entries before the new prompt, so the
model sees them too. Transcript lines are kept byte for byte, except the CLI's own
diagnostic lines (``api-request*``), which a resume does not read.
"""

from __future__ import annotations

import base64
import json
import uuid
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from claude_agent_sdk import project_key_for_directory

from sessionflow import AgentMessage, MessageRole
from sessionflow.kit import FrameworkMessage

__all__ = [
    "ANSWERED_DENIAL",
    "RUN_STATE_VERSION",
    "TRANSCRIPT_KEY",
    "History",
    "PendingCall",
    "RunState",
    "SubRun",
    "assemble_history",
    "claude_session_id",
    "entry_field",
    "final_text",
    "framework_messages",
    "last_assistant_uuid",
    "pending_tool_uses",
    "read_transcript",
    "tool_use_entry_uuid",
    "unique_call_ids",
    "user_entries",
    "without_deferrals",
    "without_resume_entries",
    "write_transcript",
]

RUN_STATE_VERSION = 4
"""Bumped whenever the run state's JSON shape changes; versions 1 and 2 are still read, others
are refused. Version 3 added ``cost_usd`` (the session's spending, for ``max_budget_usd``)."""

TRANSCRIPT_KEY = "claude_transcript"
"""Key, in a turn's last stored message, of the transcript lines that turn added."""

Json = dict[str, Any]

_SESSION_NAMESPACE = uuid.UUID("9f0f3a52-4a51-4d6e-9a43-0c7a3b8f1d21")

# Bookkeeping lines the CLI writes for its own diagnostics; a resume does not need them,
# and they repeat every request's full system prompt and tool schemas. ``cost-state`` is
# the CLI's running cost, which a resumed CLI would restore: the adapter counts the
# session's cost itself (`_budget`), so each step reports what it alone spent.
_DROPPED_TYPES = frozenset({"api-request-shape", "api-request-blob", "api-request", "cost-state"})


def claude_session_id(flow_id: str) -> str:
    """The Claude Code session ID of a sessionflow session: the same on every worker."""
    return str(uuid.uuid5(_SESSION_NAMESPACE, flow_id))


def encode_lines(lines: Sequence[str]) -> str:
    return base64.b64encode(zlib.compress("\n".join(lines).encode(), 6)).decode("ascii")


def decode_lines(text: str) -> list[str]:
    joined = zlib.decompress(base64.b64decode(text)).decode()
    return joined.split("\n") if joined else []


def transcript_path(config_dir: Path, cwd: Path, session_id: str) -> Path:
    return config_dir / "projects" / project_key_for_directory(cwd) / f"{session_id}.jsonl"


def write_transcript(config_dir: Path, cwd: Path, session_id: str, lines: Sequence[str]) -> None:
    path = transcript_path(config_dir, cwd, session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Turns stored before the CLI's cost lines were dropped may still hold some.
    kept = [line for line in lines if not (_COST_STATE in line and _entry_type(line) == "cost-state")]
    path.write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")


_COST_STATE = '"cost-state"'


def _entry_type(line: str) -> object:
    entry = _entry(line)
    return entry.get("type") if entry is not None else None


def read_transcript(config_dir: Path, cwd: Path, session_id: str) -> list[str]:
    """The transcript the CLI left, without its diagnostic bookkeeping lines."""
    path = transcript_path(config_dir, cwd, session_id)
    if not path.exists():
        return []
    kept: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut short when the CLI was killed
        if isinstance(entry, dict) and cast(Json, entry).get("type") in _DROPPED_TYPES:
            continue
        kept.append(line)
    return kept


@dataclass(frozen=True, kw_only=True)
class PendingCall:
    """A tool call of the model's last response, deferred to its own step."""

    id: str
    name: str
    input: Json = field(default_factory=lambda: {})
    """The arguments the model sent (the transcript keeps them; the step may run updated ones)."""
    denial: str | None = None
    """Set when the user's hooks or permission options denied the call: the text the model sees."""

    def to_json(self) -> Json:
        data: Json = {"id": self.id, "name": self.name, "input": self.input}
        if self.denial is not None:
            data["denial"] = self.denial
        return data

    @classmethod
    def from_json(cls, data: Json) -> PendingCall:
        denial = data.get("denial")
        return cls(
            id=str(data["id"]),
            name=str(data["name"]),
            input=cast(Json, data.get("input") or {}),
            denial=denial if isinstance(denial, str) else None,
        )


@dataclass(frozen=True, kw_only=True)
class SubRun:
    """A sub-agent the parent started with the ``Agent`` tool: its own conversation."""

    call_id: str
    """The parent's ``Agent`` call; the sub-agent's calls are ``<call_id>.<their ID>``."""
    agent_type: str
    prompt: str
    session_id: str
    lines: list[str] = field(default_factory=lambda: [])
    calls: list[PendingCall] = field(default_factory=lambda: [])
    model_calls: int = 0
    answer: str | None = None
    context: str | None = None
    """What its SubagentStart hooks added (``additionalContext``): it heads the environment
    block of each of its requests, as Claude Code puts it (version 4)."""

    def to_json(self) -> Json:
        data: Json = {
            "call_id": self.call_id,
            "agent_type": self.agent_type,
            "prompt": self.prompt,
            "session_id": self.session_id,
            "transcript": encode_lines(self.lines),
            "calls": [call.to_json() for call in self.calls],
            "model_calls": self.model_calls,
        }
        if self.answer is not None:
            data["answer"] = self.answer
        if self.context is not None:
            data["context"] = self.context
        return data

    @classmethod
    def from_json(cls, data: Json) -> SubRun:
        answer = data.get("answer")
        context = data.get("context")
        return cls(
            call_id=str(data["call_id"]),
            agent_type=str(data["agent_type"]),
            prompt=str(data["prompt"]),
            session_id=str(data["session_id"]),
            lines=decode_lines(str(data.get("transcript") or "")) if data.get("transcript") else [],
            calls=[PendingCall.from_json(cast(Json, c)) for c in cast(list[Any], data.get("calls") or [])],
            model_calls=int(data.get("model_calls") or 0),
            answer=answer if isinstance(answer, str) else None,
            context=context if isinstance(context, str) else None,
        )


@dataclass(frozen=True, kw_only=True)
class RunState:
    """An open turn: the transcript so far and the calls of the model's last response."""

    session_id: str
    lines: list[str]
    turn_base: int
    """How many of `lines` the turn started with (earlier turns' lines)."""
    calls: list[PendingCall]
    model_calls: int = 1
    """Model requests the turn has made so far (`max_turns` counts them)."""
    sub_runs: list[SubRun] = field(default_factory=lambda: [])
    """The sub-agents this response's ``Agent`` calls started, in the order of the calls."""
    cost_usd: float = 0.0
    """What the session's model requests have cost so far, this turn's included (`_budget`)."""

    def answers(self) -> dict[str, str]:
        """The sub-agents' answers, by the parent's ``Agent`` call."""
        return {sub.call_id: sub.answer for sub in self.sub_runs if sub.answer is not None}

    def with_sub(self, sub: SubRun) -> RunState:
        return replace(self, sub_runs=[sub if s.call_id == sub.call_id else s for s in self.sub_runs])

    def to_json(self) -> str:
        data: Json = {
            "v": RUN_STATE_VERSION,
            "session_id": self.session_id,
            "transcript": encode_lines(self.lines),
            "turn_base": self.turn_base,
            "calls": [call.to_json() for call in self.calls],
            "model_calls": self.model_calls,
            "cost_usd": self.cost_usd,
        }
        if self.sub_runs:
            data["sub_runs"] = [sub.to_json() for sub in self.sub_runs]
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> RunState:
        data = cast(Json, json.loads(text))
        version = data.get("v")
        if version == 1:
            # One deferred call, replayed by the CLI; its result is now written like any other.
            deferred = cast(Json, data["deferred"])
            calls = [PendingCall(id=str(deferred["id"]), name=str(deferred["name"]))]
            model_calls = 1
            subs: list[SubRun] = []
        elif version in (2, 3, RUN_STATE_VERSION):
            calls = [PendingCall.from_json(cast(Json, c)) for c in cast(list[Any], data["calls"])]
            model_calls = int(data.get("model_calls") or 1)
            subs = [SubRun.from_json(cast(Json, d)) for d in cast(list[Any], data.get("sub_runs") or [])]
        else:
            raise ValueError(f"unsupported Claude Agent SDK run state version {version!r}")
        return cls(
            session_id=str(data["session_id"]),
            lines=decode_lines(str(data["transcript"])),
            turn_base=int(data["turn_base"]),
            calls=calls,
            model_calls=model_calls,
            sub_runs=subs,
            cost_usd=float(data.get("cost_usd") or 0.0),
        )


def final_text(lines: Sequence[str]) -> str | None:
    """The text of the conversation's last model response, or None when it has none."""
    for message in reversed(framework_messages(lines, session_id="", delta=[])):
        if message.role is MessageRole.ASSISTANT and message.text:
            return message.text
    return None


def last_assistant_uuid(lines: Sequence[str]) -> str | None:
    for line in reversed(lines):
        entry = _entry(line)
        if entry is not None and entry.get("type") == "assistant" and isinstance(entry.get("uuid"), str):
            return str(entry["uuid"])
    return _leaf_uuid(lines)


def unique_call_ids(lines: Sequence[str]) -> list[str]:
    """`lines` where a call ID the model used again is renamed in its earlier uses.

    Claude Code pairs results with calls by ID across the whole conversation, so a call whose
    ID an earlier call had is shown to the model as "[Tool use interrupted]" and its result
    is lost. The model's own (last) use keeps the ID; each earlier one becomes ``<ID>~<n>``
    in its ``tool_use`` and in the results that answer it. Models that make unique IDs (the
    Anthropic API does) never see a change.
    """
    last: dict[str, int] = {}
    uses = 0
    for index, line in enumerate(lines):
        if '"tool_use"' not in line:  # most entries hold no call: no need to parse them
            continue
        for use in _tool_uses(_entry(line)):
            last[str(use.get("id"))] = index
            uses += 1
    if len(last) == uses:
        return list(lines)
    seen: dict[str, int] = {}
    active: dict[str, str] = {}
    out: list[str] = []
    for index, line in enumerate(lines):
        entry = _entry(line)
        changed = False
        for use in _tool_uses(entry):
            call_id = str(use.get("id"))
            seen[call_id] = seen.get(call_id, 0) + 1
            alias = call_id if last.get(call_id) == index else f"{call_id}~{seen[call_id]}"
            active[call_id] = alias
            if alias != call_id:
                use["id"] = alias
                changed = True
        for result in _result_blocks(entry):
            call_id = str(result.get("tool_use_id"))
            alias = active.get(call_id, call_id)
            if alias != call_id:
                result["tool_use_id"] = alias
                changed = True
        out.append(json.dumps(entry, ensure_ascii=False) if changed and entry is not None else line)
    return out


def _tool_uses(entry: Json | None) -> list[Json]:
    message = entry.get("message") if entry is not None and entry.get("type") == "assistant" else None
    if not isinstance(message, dict):
        return []
    return [b for b in _blocks(cast(Json, message).get("content")) if b.get("type") == "tool_use"]


def _result_blocks(entry: Json | None) -> list[Json]:
    message = entry.get("message") if entry is not None and entry.get("type") == "user" else None
    if not isinstance(message, dict):
        return []
    return [b for b in _blocks(cast(Json, message).get("content")) if b.get("type") == "tool_result"]


def tool_use_entry_uuid(lines: Sequence[str], call_id: str) -> str | None:
    """The last response entry that holds the ``tool_use`` with `call_id`."""
    for line in reversed(lines):
        entry = _entry(line)
        message = entry.get("message") if entry is not None else None
        if entry is None or entry.get("type") != "assistant" or not isinstance(message, dict):
            continue
        blocks = _blocks(cast(Json, message).get("content"))
        if any(b.get("type") == "tool_use" and b.get("id") == call_id for b in blocks):
            return cast(str | None, entry.get("uuid"))
    return None


def entry_field(lines: Sequence[str], entry_uuid: str | None, name: str) -> Any:
    """A field of the entry with `entry_uuid`, or None."""
    for line in reversed(lines):
        entry = _entry(line)
        if entry is not None and entry.get("uuid") == entry_uuid:
            return entry.get(name)
    return None


def pending_tool_uses(lines: Sequence[str]) -> list[Json]:
    """The ``tool_use`` blocks of the model's last response that have no result yet.

    Claude Code writes one transcript entry per content block; the blocks of one response
    share its message ID.
    """
    last_id: str | None = None
    uses: list[Json] = []
    answered: set[str] = set()
    for line in lines:
        entry = _entry(line)
        if entry is None or entry.get("isSidechain") is True:
            continue
        message = entry.get("message")
        if not isinstance(message, dict):
            continue
        body = cast(Json, message)
        if entry.get("type") == "assistant" and body.get("model") != "<synthetic>":
            own_id = str(body.get("id") or entry.get("uuid"))
            if own_id != last_id:
                last_id, uses, answered = own_id, [], set()
            uses.extend(b for b in _blocks(body.get("content")) if b.get("type") == "tool_use")
        elif entry.get("type") == "user":
            answered.update(
                str(b.get("tool_use_id"))
                for b in _blocks(body.get("content"))
                if b.get("type") == "tool_result"
            )
    return [use for use in uses if str(use.get("id")) not in answered]


def without_resume_entries(lines: list[str], start: int, resume_texts: Sequence[str]) -> list[str]:
    """`lines` without what a resumed CLI wrote besides the turn (from `start` on).

    * The pair it adds when it continues an interrupted turn: an assistant entry "No
      response requested." (model ``<synthetic>``) and a meta user entry with its resume
      prompt. sessionflow took them off the request (`ModelWire`); a later request would
      show them.
    * The result it records when told not to run the last deferred call again
      (`ANSWERED_DENIAL`). It sent the result sessionflow wrote, but keeps this one too.
    """
    return drop_entries(
        lines, start, lambda entry: _is_resume_entry(entry, resume_texts) or _is_answer_denial(entry)
    )


def without_deferrals(lines: list[str]) -> list[str]:
    """`lines` without the CLI's records of deferred calls (``hook_deferred_tool``).

    A new turn starts from a transcript whose calls all have results; left in, the record of
    the last deferred call would make the CLI take it up again instead of the new prompt.
    """
    return drop_entries(lines, 0, _is_deferral)


ANSWERED_DENIAL = "sessionflow already recorded this call's result"
"""Why the resumed CLI is told not to run again the call it deferred last."""


def drop_entries(lines: list[str], start: int, dropped_if: Callable[[Json], bool]) -> list[str]:
    """`lines` without the entries (from `start` on) `dropped_if` picks; an entry whose parent
    was dropped is chained to the nearest kept ancestor."""
    dropped: dict[str, str | None] = {}
    kept: list[str] = list(lines[:start])
    for line in lines[start:]:
        entry = _entry(line)
        if entry is not None and dropped_if(entry):
            dropped[str(entry.get("uuid"))] = cast(str | None, entry.get("parentUuid"))
            continue
        kept.append(line)
    if not dropped:
        return kept
    relinked: list[str] = []
    for index, line in enumerate(kept):
        entry = _entry(line) if index >= start else None
        parent = entry.get("parentUuid") if entry is not None else None
        if entry is not None and isinstance(parent, str) and parent in dropped:
            while isinstance(parent, str) and parent in dropped:
                parent = dropped[parent]
            entry["parentUuid"] = parent
            line = json.dumps(entry, separators=(",", ":"), ensure_ascii=False)
        relinked.append(line)
    return relinked


def _is_deferral(entry: Json) -> bool:
    attachment = entry.get("attachment")
    return (
        entry.get("type") == "attachment"
        and isinstance(attachment, dict)
        and cast(Json, attachment).get("type") == "hook_deferred_tool"
    )


def _is_answer_denial(entry: Json) -> bool:
    message = entry.get("message")
    if entry.get("type") != "user" or not isinstance(message, dict):
        return False
    results = [b for b in _blocks(cast(Json, message).get("content")) if b.get("type") == "tool_result"]
    return bool(results) and all(ANSWERED_DENIAL in result_text(b.get("content")) for b in results)


def _is_resume_entry(entry: Json, resume_texts: Sequence[str]) -> bool:
    message = entry.get("message")
    if not isinstance(message, dict):
        return False
    body = cast(Json, message)
    texts = [str(b.get("text")) for b in _blocks(body.get("content")) if b.get("type") == "text"]
    if entry.get("type") == "assistant":
        return body.get("model") == "<synthetic>" and texts == ["No response requested."]
    if entry.get("type") == "user":
        return entry.get("isMeta") is True and bool(texts) and all(t in resume_texts for t in texts)
    return False


@dataclass(frozen=True, kw_only=True)
class History:
    """What a turn starts from: earlier turns' transcript, unanswered user messages, the prompt."""

    lines: list[str]
    pending: list[FrameworkMessage]
    prompt: FrameworkMessage
    cost_usd: float = 0.0
    """What the session's model requests cost up to the last completed turn (`_budget`)."""


def assemble_history(messages: Sequence[AgentMessage]) -> History:
    """Join the transcript pieces of completed turns and find the messages the CLI has not seen."""
    lines: list[str] = []
    last = -1
    cost = 0.0
    for index, stored in enumerate(messages):
        piece = _transcript_piece(stored.message)
        if piece is not None:
            delta = piece.get("delta")
            if isinstance(delta, str):
                lines.extend(decode_lines(delta))
                last = index
            spent = piece.get("cost_usd")
            if isinstance(spent, int | float):
                cost = float(spent)
    rest = [stored.message for stored in messages[last + 1 :]]
    if not rest or rest[-1].role is not MessageRole.USER:
        raise ValueError("a turn must start with a user message")
    return History(lines=lines, pending=rest[:-1], prompt=rest[-1], cost_usd=cost)


def _transcript_piece(message: FrameworkMessage) -> Json | None:
    item: object = message.framework_item
    if isinstance(item, dict):
        piece = cast(Json, item).get(TRANSCRIPT_KEY)
        if isinstance(piece, dict):
            return cast(Json, piece)
    return None


def user_entries(
    lines: Sequence[str], messages: Iterable[FrameworkMessage], *, session_id: str, cwd: Path
) -> list[str]:
    """Transcript user entries for `messages`, chained after the last entry of `lines`."""
    parent = _leaf_uuid(lines)
    entries: list[str] = []
    for message in messages:
        text = message_text(message)
        if not text:
            continue
        own = str(uuid.uuid4())
        entry: Json = {
            "parentUuid": parent,
            "isSidechain": False,
            "type": "user",
            "message": {"role": "user", "content": text},
            "uuid": own,
            "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "userType": "external",
            "entrypoint": "sdk-py",
            "cwd": str(cwd),
            "sessionId": session_id,
        }
        entries.append(json.dumps(entry, separators=(",", ":"), ensure_ascii=False))
        parent = own
    return entries


def message_text(message: FrameworkMessage) -> str:
    if message.text is not None:
        return message.text
    item: object = message.framework_item
    if isinstance(item, dict):
        content = cast(Json, item).get("content")
        if isinstance(content, str):
            return content
    return ""


def _leaf_uuid(lines: Sequence[str]) -> str | None:
    for line in reversed(lines):
        entry = _entry(line)
        if entry is not None and "parentUuid" in entry and isinstance(entry.get("uuid"), str):
            return str(entry["uuid"])
    return None


def _entry(line: str) -> Json | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return cast(Json, value) if isinstance(value, dict) else None


# --------------------------------------------------------------------------- stored messages


def framework_messages(
    lines: Sequence[str], *, session_id: str, delta: Sequence[str], cost_usd: float | None = None
) -> list[FrameworkMessage]:
    """The turn's assistant messages and tool results, for people; the last one carries `delta`
    (and `cost_usd`, the session's spending so far, when known).

    The user entries of the turn (its prompt, earlier unanswered messages, the CLI's
    "Continue from where you left off.") are not repeated: the session stored them already.
    """
    produced: list[FrameworkMessage] = []
    message_id: str | None = None
    blocks: list[Json] = []

    def flush() -> None:
        nonlocal message_id, blocks
        if message_id is not None:
            produced.append(_assistant(message_id, blocks))
        message_id, blocks = None, []

    for line in lines:
        entry = _entry(line)
        if entry is None:
            continue
        kind = entry.get("type")
        message = entry.get("message")
        if not isinstance(message, dict):
            continue
        body = cast(Json, message)
        if kind == "assistant":
            if body.get("model") == "<synthetic>":
                continue
            own_id = str(body.get("id") or entry.get("uuid"))
            if own_id != message_id:
                flush()
                message_id = own_id
            blocks.extend(_blocks(body.get("content")))
        elif kind == "user":
            results = [b for b in _blocks(body.get("content")) if b.get("type") == "tool_result"]
            if results:
                flush()
                produced.append(_tool_results(results))
    flush()
    if not produced:
        produced.append(
            FrameworkMessage(role=MessageRole.ASSISTANT, framework_item={"type": "assistant", "content": []})
        )
    last = produced[-1]
    piece: Json = {"session_id": session_id, "delta": encode_lines(delta)}
    if cost_usd is not None:
        piece["cost_usd"] = cost_usd
    item = {**cast(Json, last.framework_item), TRANSCRIPT_KEY: piece}
    produced[-1] = FrameworkMessage(role=last.role, framework_item=item, text=last.text)
    return produced


def _blocks(content: object) -> list[Json]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [cast(Json, b) for b in cast(list[object], content) if isinstance(b, dict)]
    return []


def _assistant(message_id: str, blocks: list[Json]) -> FrameworkMessage:
    texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
    return FrameworkMessage(
        role=MessageRole.ASSISTANT,
        framework_item={"type": "assistant", "id": message_id, "content": blocks},
        text="".join(texts) if texts else None,
    )


def _tool_results(results: list[Json]) -> FrameworkMessage:
    items = [
        {
            "tool_use_id": str(r.get("tool_use_id")),
            "content": result_text(r.get("content")),
            "is_error": r.get("is_error") is True,
        }
        for r in results
    ]
    return FrameworkMessage(
        role=MessageRole.TOOL,
        framework_item={"type": "tool_results", "results": items},
        text="\n".join(str(i["content"]) for i in items),
    )


def result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    return "".join(str(b.get("text", "")) for b in _blocks(content) if b.get("type") == "text")
