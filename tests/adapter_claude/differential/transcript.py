"""The stored transcript against the framework's own history, in one view for both runs.

Plain: the conversation Claude Code keeps (`claude_agent_sdk.get_session_messages` over the
run's config folder): user prompts, the model's responses (one transcript entry per content
block, joined by message ID) and the tool results, without Claude Code's meta entries. The
session: the messages it stored (`AgentSessionClient.stored_messages`), which the API, the
console and ``export_messages`` return. Each becomes a list of ``(role, content)``:

* ``("user", text)``: a prompt as the user sent it (its text blocks, joined);
* ``("assistant", blocks)``: a response's text, thinking and tool-use blocks as the model sent them;
* ``("tool", [(call ID, text, is_error)])``: the results of one user entry of results.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from claude_agent_sdk import get_session_messages

from sessionflow import AgentMessage, MessageRole
from tests.adapter_claude.differential.normalise import normalise_value

__all__ = ["plain_transcript", "results_in_call_order", "session_transcript"]

Json = dict[str, Any]
Item = tuple[str, Any]


@contextmanager
def _config_dir(path: Path) -> Generator[None]:
    before = os.environ.get("CLAUDE_CONFIG_DIR")
    os.environ["CLAUDE_CONFIG_DIR"] = str(path)
    try:
        yield
    finally:
        if before is None:
            del os.environ["CLAUDE_CONFIG_DIR"]
        else:
            os.environ["CLAUDE_CONFIG_DIR"] = before


def plain_transcript(session_id: str, config: Path, workspace: Path, folders: dict[str, str]) -> list[Item]:
    """Claude Code's own history of a plain run (its CLI's config folder is `config`)."""
    with _config_dir(config):
        messages = get_session_messages(session_id, directory=str(workspace))
    items: list[Item] = []
    last_id: str | None = None
    for message in messages:
        body = cast(Json, message.message or {})
        content = body.get("content")
        if message.type == "assistant":
            blocks = [_block(b) for b in _blocks(content)]
            own = str(body.get("id") or message.uuid)
            if items and items[-1][0] == "assistant" and own == last_id:
                items[-1] = ("assistant", [*items[-1][1], *blocks])
            else:
                items.append(("assistant", blocks))
            last_id = own
            continue
        last_id = None
        results = [b for b in _blocks(content) if b.get("type") == "tool_result"]
        if results:
            items.append(("tool", [_result(b) for b in results]))
        else:
            items.append(
                ("user", "".join(str(b.get("text", "")) for b in _blocks(content) if b.get("type") == "text"))
            )
    return cast(list[Item], normalise_value(items, folders))


def session_transcript(messages: Sequence[AgentMessage], folders: dict[str, str]) -> list[Item]:
    """The messages a session stored, in the same view."""
    items: list[Item] = []
    for stored in messages:
        message = stored.message
        raw: object = message.framework_item
        item = cast(Json, raw) if isinstance(raw, dict) else {}
        if message.role is MessageRole.USER:
            items.append(("user", message.text or ""))
        elif message.role is MessageRole.ASSISTANT:
            items.append(("assistant", [_block(b) for b in _blocks(item.get("content"))]))
        elif message.role is MessageRole.TOOL:
            results = cast(list[Json], item.get("results") or [])
            items.append(
                (
                    "tool",
                    [
                        (str(r.get("tool_use_id")), str(r.get("content")), r.get("is_error") is True)
                        for r in results
                    ],
                )
            )
    return cast(list[Item], normalise_value(items, folders))


def _blocks(content: object) -> list[Json]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [cast(Json, b) for b in cast(list[object], content) if isinstance(b, dict)]
    return []


def _block(block: Json) -> Json:
    kind = block.get("type")
    if kind == "tool_use":
        return {
            "type": "tool_use",
            "id": block.get("id"),
            "name": block.get("name"),
            "input": block.get("input"),
        }
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.get("thinking")}
    if kind == "text":
        return {"type": "text", "text": block.get("text")}
    return {"type": kind}


def _result(block: Json) -> tuple[str, str, bool]:
    content = block.get("content")
    text = content if isinstance(content, str) else "".join(str(b.get("text", "")) for b in _blocks(content))
    return (str(block.get("tool_use_id")), text, block.get("is_error") is True)


def results_in_call_order(items: Sequence[Any], *, concurrent: bool) -> list[Any]:
    """`items` with the result entries after one response in the order it asked for the calls.

    Claude Code writes the result of each call it ran at once as its own entry, in the order
    the calls ended, which is not the framework's to promise (`tests/differential_compare.py`);
    the session stores them in the order the response asked. Only when ``concurrent``; else
    the order is compared as it is.
    """
    if not concurrent:
        return list(items)
    out: list[Any] = []
    order: dict[str, int] = {}
    start = 0
    for item in items:
        out.append(item)
        if item[0] == "assistant":
            blocks = cast(list[Any], item[1])
            ids = [str(cast(Json, b)["id"]) for b in blocks if isinstance(b, dict) and "id" in b]
            order = {call_id: n for n, call_id in enumerate(ids)}
            start = len(out)
        elif item[0] == "tool":
            out[start:] = sorted(out[start:], key=lambda entry: _first_call_position(entry, order))
        else:
            start = len(out)
    return out


def _first_call_position(item: Any, order: dict[str, int]) -> int:
    results = cast(list[Any], item[1])
    return min((order.get(str(r[0]), len(order)) for r in results), default=len(order))
