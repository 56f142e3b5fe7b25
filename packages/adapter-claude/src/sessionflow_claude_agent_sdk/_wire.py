"""`ModelWire`: a loopback relay between one CLI run and the model API.

A model step that resumes after tool steps writes the tool results into the transcript
itself and resumes the CLI without a prompt. The CLI then treats the turn as interrupted:
it adds an assistant message "No response requested." and a user message "Continue from
where you left off." before it asks the model. The plain SDK sends neither (its tools ran
inside the same run), so the relay takes that one synthetic pair off the end of the
request, and the model sees what it would have seen without sessionflow. Everything else
passes through byte for byte: headers (credentials included), the body of every other
request, and the streamed response.

The relay listens on 127.0.0.1 only, for the life of one model step, under a path with a
random token, so no other local process can use it to reach the API with the step's key.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
from collections.abc import Sequence
from typing import Any, cast

import httpx

from sessionflow_claude_agent_sdk._budget import rewrite_budget_texts

__all__ = ["RESUME_PAIR_TEXTS", "ModelWire", "strip_private_image_paths", "strip_resume_pair"]

NO_RESPONSE_TEXT = "No response requested."
"""The CLI's synthetic assistant text before it continues an interrupted turn."""

RESUME_PAIR_TEXTS = ("Continue from where you left off.",)
"""The CLI's default resume prompt (``CLAUDE_CODE_RESUME_PROMPT`` replaces it)."""

_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "upgrade",
        "te",
        "trailer",
        "content-length",
        "host",
        "accept-encoding",
    }
)
_MAX_HEADER_BYTES = 256 * 1024

Json = dict[str, Any]


class ModelWire:
    """Relays one CLI run's HTTP requests to `upstream`.

    Use as ``async with ModelWire(upstream, resume_texts=...) as wire:`` and give the CLI
    ``wire.base_url`` as ``ANTHROPIC_BASE_URL``. With `resume_texts` set, the synthetic
    resume pair is taken off the end of the step's model requests (`strip_resume_pair`).
    """

    def __init__(
        self,
        upstream: str,
        *,
        resume_texts: Sequence[str] = (),
        private_root: str | None = None,
        budget: tuple[float, float] | None = None,
        environment_prefix: str | None = None,
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.environment_prefix = environment_prefix
        """A sub-agent's SubagentStart context, put at the head of its environment block."""
        self.resume_texts = tuple(resume_texts)
        self.private_root = private_root
        self.budget = budget
        self.model_requests = 0
        """How many model requests the CLI sent through the relay (a compaction's included)."""
        """What the session spent before this step, and the user's ``max_budget_usd`` (`_budget`)."""
        self._token = secrets.token_urlsafe(16)
        self._server: asyncio.Server | None = None
        self._client: httpx.AsyncClient | None = None
        self._port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/{self._token}"

    async def __aenter__(self) -> ModelWire:
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(None), follow_redirects=False)
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self._port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)
        if self._client is not None:
            await self._client.aclose()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > _MAX_HEADER_BYTES:
            return False
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers: list[tuple[str, str]] = []
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers.append((name.strip(), value.strip()))
        body = await _read_body(reader, {n.lower(): v for n, v in headers})
        prefix = f"/{self._token}"
        if not (target == prefix or target.startswith(prefix + "/") or target.startswith(prefix + "?")):
            await _reply(writer, 404, b"unknown path")
            return True
        path = target[len(prefix) :]
        if method == "POST" and path.split("?", 1)[0].endswith("/v1/messages"):
            self.model_requests += 1
            body = self._rewrite(body)
        assert self._client is not None
        request = self._client.build_request(
            method,
            self.upstream + path,
            headers=[(n, v) for n, v in headers if n.lower() not in _HOP_BY_HOP],
            content=body,
        )
        try:
            response = await self._client.send(request, stream=True)
        except httpx.HTTPError as error:
            await _reply(writer, 502, f"sessionflow could not reach the model API: {error}".encode())
            return True
        try:
            status = f"HTTP/1.1 {response.status_code} {response.reason_phrase}\r\n"
            out = [status] + [
                f"{n}: {v}\r\n" for n, v in response.headers.multi_items() if n.lower() not in _HOP_BY_HOP
            ]
            out.append("transfer-encoding: chunked\r\n\r\n")
            writer.write("".join(out).encode("latin-1"))
            async for chunk in response.aiter_raw():
                if chunk:
                    writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        finally:
            await response.aclose()
        return True

    def _rewrite(self, body: bytes) -> bytes:
        try:
            request = json.loads(body)
        except ValueError:
            return body
        if not isinstance(request, dict):
            return body
        stripped = bool(self.resume_texts) and strip_resume_pair(cast(Json, request), self.resume_texts)
        if self.private_root and strip_private_image_paths(cast(Json, request), self.private_root):
            stripped = True
        if self.budget is not None and rewrite_budget_texts(cast(Json, request), *self.budget):
            stripped = True
        if self.environment_prefix and prefix_environment(cast(Json, request), self.environment_prefix):
            stripped = True
        if not stripped:
            return body
        return json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode()


def prefix_environment(request: Json, prefix: str) -> bool:
    """Put `prefix` at the head of the request's environment block (its first ``system``
    message), where Claude Code puts a sub-agent's SubagentStart context; whether it did."""
    for message in cast(list[Any], request.get("messages") or []):
        if not isinstance(message, dict) or cast(Json, message).get("role") != "system":
            continue
        entry = cast(Json, message)
        content = entry.get("content")
        if isinstance(content, str):
            entry["content"] = prefix + content
            return True
        for block in cast(list[Any], content) if isinstance(content, list) else []:
            if isinstance(block, dict) and cast(Json, block).get("type") == "text":
                cast(Json, block)["text"] = prefix + str(cast(Json, block).get("text", ""))
                return True
        return False
    return False


def strip_resume_pair(request: Json, resume_texts: Sequence[str]) -> bool:
    """Take the CLI's synthetic "No response requested." / resume prompt pair off the end.

    The CLI may put its own ``system`` messages (reminders) after the pair; they stay where
    they are. The prompt cache mark the CLI put on the pair moves to the message before it,
    where the plain SDK has it. Returns whether the pair was there.
    """
    messages = request.get("messages")
    if not isinstance(messages, list):
        return False
    items = cast(list[Any], messages)
    turns = [
        i for i, m in enumerate(items) if not (isinstance(m, dict) and cast(Json, m).get("role") == "system")
    ]
    if turns and _strip_trailing_resume_text(items[turns[-1]], resume_texts):
        # With an attachment after the tool results (a hook's context), the CLI adds no
        # assistant text, only its resume prompt, which the request merges into the user
        # message of the results.
        return True
    if len(turns) < 3:
        return False
    assistant_at, user_at, before_at = turns[-2], turns[-1], turns[-3]
    if not (
        _only_texts(items[assistant_at], "assistant", (NO_RESPONSE_TEXT,))
        and _only_texts(items[user_at], "user", resume_texts)
    ):
        return False
    mark = _cache_mark(cast(Json, items[user_at]))
    del items[user_at]
    del items[assistant_at]
    last = items[before_at]
    if mark is not None and isinstance(last, dict):
        content = cast(Json, last).get("content")
        if isinstance(content, list) and content and isinstance(content[-1], dict):
            cast(Json, content[-1])["cache_control"] = mark
    return True


def _strip_trailing_resume_text(message: object, resume_texts: Sequence[str]) -> bool:
    """Take the resume prompt off the end of a user message of tool results."""
    if not isinstance(message, dict) or cast(Json, message).get("role") != "user":
        return False
    content = cast(Json, message).get("content")
    if not isinstance(content, list):
        return False
    blocks = cast(list[Any], content)
    if len(blocks) < 2 or not all(isinstance(b, dict) for b in blocks):
        return False
    last = cast(Json, blocks[-1])
    if last.get("type") != "text" or last.get("text") not in resume_texts:
        return False
    if not any(cast(Json, b).get("type") == "tool_result" for b in blocks[:-1]):
        return False
    del blocks[-1]
    if "cache_control" in last:
        cast(Json, blocks[-1])["cache_control"] = last["cache_control"]
    return True


_IMAGE_SOURCE = re.compile(r"\[Image: source: (?P<path>[^\]\n]+)\]")


def strip_private_image_paths(request: Json, private_root: str) -> bool:
    """Take off the text blocks that name where the CLI saved a prompt's image, when that is
    inside sessionflow's private step folders.

    The CLI saves each image of a message in its temp folder and adds ``[Image: source:
    <path>]`` after it. Under sessionflow that folder belongs to one step and is gone when
    the step ends, so the path would point the model at nothing; the image block itself stays.
    """
    changed = False
    for message in cast(list[Any], request.get("messages") or []):
        if not isinstance(message, dict):
            continue
        content = cast(Json, message).get("content")
        if not isinstance(content, list):
            continue
        kept = [block for block in cast(list[Any], content) if not _private_image_path(block, private_root)]
        if len(kept) != len(cast(list[Any], content)) and kept:
            cast(Json, message)["content"] = kept
            changed = True
    return changed


def _private_image_path(block: object, private_root: str) -> bool:
    if not isinstance(block, dict) or cast(Json, block).get("type") != "text":
        return False
    text = cast(Json, block).get("text")
    match = _IMAGE_SOURCE.fullmatch(text.strip()) if isinstance(text, str) else None
    return match is not None and match.group("path").startswith(private_root)


def _only_texts(message: object, role: str, texts: Sequence[str]) -> bool:
    if not isinstance(message, dict) or cast(Json, message).get("role") != role:
        return False
    content = cast(Json, message).get("content")
    if isinstance(content, str):
        return content in texts
    if not isinstance(content, list) or not content:
        return False
    blocks = cast(list[Any], content)
    return all(
        isinstance(b, dict) and cast(Json, b).get("type") == "text" and cast(Json, b).get("text") in texts
        for b in blocks
    )


def _cache_mark(message: Json) -> Any:
    content = message.get("content")
    if isinstance(content, list):
        for block in reversed(cast(list[Any], content)):
            if isinstance(block, dict) and "cache_control" in block:
                return cast(Json, block)["cache_control"]
    return None


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        parts: list[bytes] = []
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return b"".join(parts)
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
    length = int(headers.get("content-length", "0") or "0")
    return await reader.readexactly(length) if length else b""


async def _reply(writer: asyncio.StreamWriter, status: int, text: bytes) -> None:
    writer.write(
        f"HTTP/1.1 {status} Relay\r\ncontent-type: text/plain\r\ncontent-length: {len(text)}\r\n\r\n".encode()
        + text
    )
    await writer.drain()
