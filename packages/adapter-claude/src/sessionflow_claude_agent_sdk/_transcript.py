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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from claude_agent_sdk import project_key_for_directory

from sessionflow.session import AgentMessage, FrameworkMessage, MessageRole

__all__ = [
    "RUN_STATE_VERSION",
    "TRANSCRIPT_KEY",
    "History",
    "RunState",
    "assemble_history",
    "claude_session_id",
    "framework_messages",
    "read_transcript",
    "user_entries",
    "write_transcript",
]

RUN_STATE_VERSION = 1
"""Bumped whenever the run state's JSON shape changes; other versions are refused."""

TRANSCRIPT_KEY = "claude_transcript"
"""Key, in a turn's last stored message, of the transcript lines that turn added."""

Json = dict[str, Any]

_SESSION_NAMESPACE = uuid.UUID("9f0f3a52-4a51-4d6e-9a43-0c7a3b8f1d21")

# Bookkeeping lines the CLI writes for its own diagnostics; a resume does not need them,
# and they repeat every request's full system prompt and tool schemas.
_DROPPED_TYPES = frozenset({"api-request-shape", "api-request-blob", "api-request"})


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
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


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
class RunState:
    """An open turn: the transcript so far and the call the CLI deferred."""

    session_id: str
    lines: list[str]
    turn_base: int
    """How many of `lines` the turn started with (earlier turns' lines)."""
    deferred_id: str
    deferred_name: str

    def to_json(self) -> str:
        return json.dumps(
            {
                "v": RUN_STATE_VERSION,
                "session_id": self.session_id,
                "transcript": encode_lines(self.lines),
                "turn_base": self.turn_base,
                "deferred": {"id": self.deferred_id, "name": self.deferred_name},
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> RunState:
        data = cast(Json, json.loads(text))
        if data.get("v") != RUN_STATE_VERSION:
            raise ValueError(f"unsupported Claude Agent SDK run state version {data.get('v')!r}")
        deferred = cast(Json, data["deferred"])
        return cls(
            session_id=str(data["session_id"]),
            lines=decode_lines(str(data["transcript"])),
            turn_base=int(data["turn_base"]),
            deferred_id=str(deferred["id"]),
            deferred_name=str(deferred["name"]),
        )


@dataclass(frozen=True, kw_only=True)
class History:
    """What a turn starts from: earlier turns' transcript, unanswered user messages, the prompt."""

    lines: list[str]
    pending: list[FrameworkMessage]
    prompt: FrameworkMessage


def assemble_history(messages: Sequence[AgentMessage]) -> History:
    """Join the transcript pieces of completed turns and find the messages the CLI has not seen."""
    lines: list[str] = []
    last = -1
    for index, stored in enumerate(messages):
        piece = _transcript_piece(stored.message)
        if piece is not None:
            lines.extend(decode_lines(piece))
            last = index
    rest = [stored.message for stored in messages[last + 1 :]]
    if not rest or rest[-1].role is not MessageRole.USER:
        raise ValueError("a turn must start with a user message")
    return History(lines=lines, pending=rest[:-1], prompt=rest[-1])


def _transcript_piece(message: FrameworkMessage) -> str | None:
    item: object = message.framework_item
    if isinstance(item, dict):
        piece = cast(Json, item).get(TRANSCRIPT_KEY)
        if isinstance(piece, dict):
            delta = cast(Json, piece).get("delta")
            return delta if isinstance(delta, str) else None
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
    lines: Sequence[str], *, session_id: str, delta: Sequence[str]
) -> list[FrameworkMessage]:
    """The turn's assistant messages and tool results, for people; the last one carries `delta`.

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
    item = {
        **cast(Json, last.framework_item),
        TRANSCRIPT_KEY: {"session_id": session_id, "delta": encode_lines(delta)},
    }
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
