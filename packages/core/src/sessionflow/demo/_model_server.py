"""A scripted, loopback model server speaking OpenAI Chat Completions, OpenAI Responses,
Anthropic Messages and Gemini's generateContent.

Tests script the replies per conversation key and read back what clients sent::

    with ScriptedModelServer() as server:
        server.script("k1", [ModelReply.say("hi", chunks=["h", "i"])])
        client = openai.OpenAI(base_url=server.base_url("k1"), api_key="x")
        ...
        assert server.requests("k1")[0].saw("hello")

The server is plain stdlib (no framework) so it adds no latency of its own: keep-alive,
TCP_NODELAY and every answer written with a single ``sendall``. Any process can program
and read it through its HTTP control API (:class:`ModelServerControl`), and
``python -m sessionflow.demo._model_server --port-file PATH`` runs it as a child
process until SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import socketserver
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType, TracebackType
from typing import Any, cast
from urllib.parse import parse_qs, quote, unquote, urlsplit

import httpx

from sessionflow.demo._model_script import (
    FaultKind,
    ModelFault,
    ModelReply,
    RecordedRequest,
    ScriptedToolCall,
    ScriptedUsage,
    WireApi,
)
from sessionflow.demo._model_wire import (
    WireResponse,
    render_count_tokens,
    render_error,
    render_gemini,
    render_model,
    render_models,
    render_reply,
)
from sessionflow.demo._model_wire_gemini import GEMINI_ROUTE
from sessionflow.kit._frameworks import ModelApi

__all__ = [
    "FaultKind",
    "ModelFault",
    "ModelReply",
    "ModelServerControl",
    "RecordedRequest",
    "Responder",
    "ScriptedModelServer",
    "ScriptedToolCall",
    "ScriptedUsage",
    "WireApi",
]

DEFAULT_KEY = "default"

# ``/k/<key>`` selects the conversation; ``/v1`` is optional so a base URL configured
# either way works.
_ROUTE = re.compile(r"^(?:/k/(?P<key>[^/]+))?(?:/v1)?(?P<rest>/.*)$")
_MODEL_APIS: dict[str, ModelApi] = {
    "/chat/completions": "chat_completions",
    "/responses": "responses",
    "/messages": "anthropic_messages",
}

# Stainless-generated SDKs (openai, anthropic) ignore ``retry-after: 0`` and back off
# for ~0.5 s; ``retry-after-ms`` makes their built-in retry immediate.
_RETRY_NOW = (("retry-after", "0"), ("retry-after-ms", "1"))


Responder = Callable[[RecordedRequest], ModelReply]
"""Computes the reply to one request of a key whose script is empty."""


class _ScriptBook:
    """Per-key reply queues and request records, shared by all handler threads."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._queues: dict[str, deque[ModelReply]] = {}
        self._records: dict[str, list[RecordedRequest]] = {}
        self._responders: dict[str, Responder] = {}
        self._in_flight: dict[str, int] = {}
        self._peak_in_flight: dict[str, int] = {}
        self._seq = 0

    def set_responder(self, key: str, responder: Responder | None) -> None:
        with self._changed:
            if responder is None:
                self._responders.pop(key, None)
            else:
                self._responders[key] = responder

    def append(self, key: str, replies: Sequence[ModelReply]) -> int:
        with self._changed:
            queue = self._queues.setdefault(key, deque())
            queue.extend(replies)
            return len(queue)

    def take(
        self, key: str, api: WireApi, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[RecordedRequest, ModelReply | None, int]:
        """Record a request and pop its reply (``None`` when the script is exhausted)."""
        with self._changed:
            records = self._records.setdefault(key, [])
            record = RecordedRequest(
                api=api, path=path, headers=headers, body=body, index=len(records), key=key
            )
            records.append(record)
            queue = self._queues.get(key)
            responder = self._responders.get(key)
            reply = queue.popleft() if queue else responder(record) if responder is not None else None
            # Counted once nothing here can raise: the caller's `answered` undoes it.
            self._in_flight[key] = in_flight = self._in_flight.get(key, 0) + 1
            self._peak_in_flight[key] = max(self._peak_in_flight.get(key, 0), in_flight)
            self._seq += 1
            self._changed.notify_all()
            return record, reply, self._seq

    def answered(self, key: str) -> None:
        """A request `take` counted is answered (just before its bytes go out)."""
        with self._changed:
            self._in_flight[key] -= 1

    def peak_in_flight(self, key: str) -> int:
        with self._changed:
            return self._peak_in_flight.get(key, 0)

    def requests(self, key: str) -> list[RecordedRequest]:
        with self._changed:
            return list(self._records.get(key, ()))

    def wait_for_requests(self, key: str, count: int, timeout: float) -> list[RecordedRequest]:
        with self._changed:
            self._changed.wait_for(lambda: len(self._records.get(key, ())) >= count, timeout)
            return list(self._records.get(key, ()))

    def remaining(self, key: str) -> int:
        with self._changed:
            return len(self._queues.get(key, ()))

    def reset(self, key: str | None) -> None:
        with self._changed:
            if key is None:
                self._queues.clear()
                self._records.clear()
                self._responders.clear()
                self._peak_in_flight.clear()
            else:
                self._queues.pop(key, None)
                self._records.pop(key, None)
                self._responders.pop(key, None)
                self._peak_in_flight.pop(key, None)
            self._changed.notify_all()


class _HTTPServer(ThreadingHTTPServer):
    request_queue_size = 1024
    daemon_threads = True

    def __init__(self, address: tuple[str, int], book: _ScriptBook) -> None:
        self.book = book
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host's FQDN, which can stall on DNS.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = self.socket.accept()
        # Small SSE/JSON writes must not wait for a delayed ACK (Nagle).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._connections_lock:
            self._connections.add(sock)
        return sock, address

    def shutdown_request(self, request: socket.socket | tuple[bytes, socket.socket]) -> None:
        with self._connections_lock:
            if isinstance(request, socket.socket):
                self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Unblock handler threads idling on keep-alive connections."""
        with self._connections_lock:
            connections = list(self._connections)
        for sock in connections:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "sessionflow-scripted-model"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    @property
    def _book(self) -> _ScriptBook:
        return cast(_HTTPServer, self.server).book

    def _handle(self) -> None:
        try:
            raw = self._read_body()
            split = urlsplit(self.path)
            response = self._route(split.path, parse_qs(split.query), raw)
        except Exception as exc:
            traceback.print_exc(file=sys.stderr)
            self.close_connection = True
            response = render_error(None, 500, f"scripted model server error: {exc!r}")
        self._send(response)

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send(self, response: WireResponse) -> None:
        if response.drop:
            self.close_connection = True
            return
        body = b"" if self.command == "HEAD" else response.body
        lines = [
            f"HTTP/1.1 {response.status} {HTTPStatus(response.status).phrase}",
            f"Content-Type: {response.content_type}",
            f"Content-Length: {len(response.body)}",
            "Connection: close" if self.close_connection else "Connection: keep-alive",
            "Cache-Control: no-cache",
            *(f"{name}: {value}" for name, value in response.headers),
        ]
        # Headers and body in one write: split writes would hit Nagle + delayed ACK.
        self.connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)

    def _route(self, path: str, query: dict[str, list[str]], raw: bytes) -> WireResponse:
        if path.startswith("/_control/"):
            return self._control(path.removeprefix("/_control"), query, raw)
        match = _ROUTE.match(path)
        if match is None:
            return render_error(None, 404, f"no route for {self.command} {path}")
        key = unquote(match["key"]) if match["key"] else DEFAULT_KEY
        rest = match["rest"].rstrip("/")
        method = self.command
        if method == "GET" and rest == "/models":
            return render_models()
        if method == "GET" and rest.startswith("/models/"):
            return render_model(unquote(rest.removeprefix("/models/")))
        if method == "POST" and rest == "/messages/count_tokens":
            body = _parse_object(raw)
            return render_count_tokens(body) if body is not None else _bad_json("anthropic_messages")
        gemini = GEMINI_ROUTE.match(rest)
        api: WireApi | None = "gemini" if gemini is not None else _MODEL_APIS.get(rest)
        if method != "POST" or api is None:
            return render_error(None, 404, f"no route for {method} {path}")
        body = _parse_object(raw)
        if body is None:
            return _bad_json(api)
        headers = {name.lower(): value for name, value in self.headers.items()}
        record, reply, seq = self._book.take(key, api, path, headers, body)
        try:
            if reply is None:
                return render_error(
                    api,
                    500,
                    f"scripted model: the script for key {key!r} is exhausted "
                    f"(request #{record.index} to {path} has no scripted reply)",
                    headers=(("x-should-retry", "false"),),
                )
            if reply.delay_seconds > 0:
                time.sleep(reply.delay_seconds)
            if reply.fault is not None:
                return _render_fault(api, key, reply.fault)
            if gemini is not None:
                stream = gemini["method"] == "streamGenerateContent"
                return render_gemini(reply, unquote(gemini["model"]), seq, stream=stream)
            return render_reply(cast(ModelApi, api), reply, body, seq)
        finally:
            # Before the answer is sent: once a client has it, its next request may come at once.
            self._book.answered(key)

    def _control(self, path: str, query: dict[str, list[str]], raw: bytes) -> WireResponse:
        method = self.command
        if method == "POST" and path.startswith("/script/"):
            key = unquote(path.removeprefix("/script/"))
            body = _parse_object(raw)
            replies: Any = None if body is None else body.get("replies")
            if not isinstance(replies, list):
                return render_error("chat_completions", 400, 'control body must be {"replies": [...]}')
            try:
                parsed = [ModelReply.from_json(r) for r in cast(list[dict[str, Any]], replies)]
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                return render_error("chat_completions", 400, f"invalid reply: {exc!r}")
            return _ok({"queued": self._book.append(key, parsed)})
        if method == "GET" and path.startswith("/requests/"):
            key = unquote(path.removeprefix("/requests/"))
            wait_for = int(query.get("wait_for", ["0"])[0])
            timeout = float(query.get("timeout", ["0"])[0])
            records = (
                self._book.wait_for_requests(key, wait_for, timeout) if wait_for else self._book.requests(key)
            )
            return _ok({"requests": [r.to_json() for r in records]})
        if method == "GET" and path.startswith("/remaining/"):
            return _ok({"remaining": self._book.remaining(unquote(path.removeprefix("/remaining/")))})
        if method == "POST" and path == "/reset":
            body = _parse_object(raw) if raw.strip() else {}
            key: Any = None if body is None else body.get("key")
            self._book.reset(None if key is None else str(key))
            return _ok({"ok": True})
        if method == "GET" and path == "/health":
            return _ok({"ok": True})
        return render_error(None, 404, f"no control route for {method} /_control{path}")


def _ok(body: dict[str, Any]) -> WireResponse:
    return WireResponse(status=200, body=json.dumps(body, separators=(",", ":")).encode())


def _parse_object(raw: bytes) -> dict[str, Any] | None:
    if not raw.strip():
        return {}
    try:
        value: Any = json.loads(raw)
    except ValueError:
        return None
    return cast(dict[str, Any], value) if isinstance(value, dict) else None


def _bad_json(api: WireApi) -> WireResponse:
    return render_error(api, 400, "request body must be a JSON object")


def _render_fault(api: WireApi, key: str, fault: ModelFault) -> WireResponse:
    if fault.kind == "drop":
        return WireResponse(status=0, drop=True)
    headers = _RETRY_NOW if fault.headers is None else tuple(fault.headers.items())
    if fault.kind == "http_429":
        message = fault.message or f"scripted rate limit for key {key!r}"
        return render_error(api, 429, message, headers=headers)
    if fault.kind == "http_503":
        message = fault.message or f"scripted overload for key {key!r}"
        return render_error(api, 503, message, headers=headers)
    message = fault.message or f"scripted server error for key {key!r}"
    return render_error(api, 500, message, headers=headers)


class ScriptedModelServer:
    """The scripted model server, run in a background thread of this process.

    Use as a (sync or async) context manager, or call :meth:`start`/:meth:`stop`.
    Scripts and records survive a stop/start.
    """

    def __init__(self, *, port: int = 0) -> None:
        self._requested_port = port
        self._book = _ScriptBook()
        self._server: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -------------------------------------------------------------------

    def start(self) -> ScriptedModelServer:
        if self._server is not None:
            raise RuntimeError("ScriptedModelServer is already running")
        server = _HTTPServer(("127.0.0.1", self._requested_port), self._book)
        # A short poll interval only bounds how long stop() waits; requests are served
        # as soon as they arrive regardless.
        thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"scripted-model-server:{server.server_port}",
            daemon=True,
        )
        thread.start()
        self._server, self._thread = server, thread
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None:
            return
        self._server = self._thread = None
        server.shutdown()
        server.close_connections()
        server.server_close()
        if thread is not None:
            thread.join()

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> ScriptedModelServer:
        return self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)

    # addresses -------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("ScriptedModelServer is not running")
        return self._server.server_port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def base_url(self, key: str = DEFAULT_KEY, api: str = "openai") -> str:
        """The base URL a client SDK should use for conversation ``key``.

        ``api="openai"`` (Chat Completions and Responses) ends in ``/v1``;
        ``api="anthropic"`` does not, since the Anthropic SDK appends ``/v1/messages``, nor
        does ``api="gemini"``: google-genai appends ``/v1beta/models/...`` to its
        ``http_options.base_url`` (or ``GOOGLE_GEMINI_BASE_URL``).
        """
        prefix = f"{self.url}/k/{quote(key, safe='')}"
        if api in ("openai", "chat_completions", "responses"):
            return f"{prefix}/v1"
        if api in ("anthropic", "anthropic_messages", "gemini"):
            return prefix
        raise ValueError(f"unknown api {api!r}; expected 'openai', 'anthropic' or 'gemini'")

    # script and records ------------------------------------------------------------

    def script(self, key: str, replies: Sequence[ModelReply]) -> None:
        """Append ``replies`` to ``key``'s queue; each request consumes the next one."""
        self._book.append(key, list(replies))

    def respond(self, key: str, responder: Responder | None) -> None:
        """Answer ``key``'s requests with ``responder(request)`` whenever its script is empty.

        For load that a fixed queue cannot serve: many sessions on one key, each needing
        replies that depend on its own conversation. The responder runs under the server's
        lock, so keep it quick. ``None`` removes it. In-process only.
        """
        self._book.set_responder(key, responder)

    def requests(self, key: str = DEFAULT_KEY) -> list[RecordedRequest]:
        """Model requests received for ``key`` so far, oldest first."""
        return self._book.requests(key)

    def wait_for_requests(self, key: str, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Block until ``key`` has at least ``count`` recorded requests (or ``timeout``)."""
        records = self._book.wait_for_requests(key, count, timeout)
        if len(records) < count:
            raise TimeoutError(f"{len(records)} of {count} requests to key {key!r} after {timeout}s")
        return records

    def remaining(self, key: str = DEFAULT_KEY) -> int:
        """Scripted replies not yet consumed for ``key``."""
        return self._book.remaining(key)

    def peak_in_flight(self, key: str = DEFAULT_KEY) -> int:
        """The most model requests to ``key`` the server was answering at one moment.

        A request counts from its arrival until just before its answer is sent, so a client
        that starts its next request once it has an answer is never counted twice.
        """
        return self._book.peak_in_flight(key)

    def reset(self, key: str | None = None) -> None:
        """Forget the script and records of ``key``, or of every key."""
        self._book.reset(key)

    def control(self) -> ModelServerControl:
        """A control client for this server (the same API another process would use)."""
        return ModelServerControl(self.url)


class ModelServerControl:
    """Programs and reads a scripted model server over HTTP, from any process."""

    def __init__(self, url: str, *, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        # trust_env=False: a proxy from the environment must never see loopback traffic.
        self._client = httpx.Client(base_url=self.url, timeout=timeout, trust_env=False)

    def script(self, key: str, replies: Sequence[ModelReply]) -> int:
        """Append ``replies`` to ``key``'s queue; returns how many are now queued."""
        response = self._client.post(
            f"/_control/script/{quote(key, safe='')}", json={"replies": [r.to_json() for r in replies]}
        )
        response.raise_for_status()
        return int(response.json()["queued"])

    def requests(self, key: str = DEFAULT_KEY) -> list[RecordedRequest]:
        response = self._client.get(f"/_control/requests/{quote(key, safe='')}")
        response.raise_for_status()
        return [RecordedRequest.from_json(r) for r in response.json()["requests"]]

    def wait_for_requests(self, key: str, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Long-poll until ``key`` has at least ``count`` recorded requests (or ``timeout``)."""
        response = self._client.get(
            f"/_control/requests/{quote(key, safe='')}",
            params={"wait_for": count, "timeout": timeout},
            timeout=timeout + 5.0,
        )
        response.raise_for_status()
        records = [RecordedRequest.from_json(r) for r in response.json()["requests"]]
        if len(records) < count:
            raise TimeoutError(f"{len(records)} of {count} requests to key {key!r} after {timeout}s")
        return records

    def remaining(self, key: str = DEFAULT_KEY) -> int:
        response = self._client.get(f"/_control/remaining/{quote(key, safe='')}")
        response.raise_for_status()
        return int(response.json()["remaining"])

    def reset(self, key: str | None = None) -> None:
        response = self._client.post("/_control/reset", json={} if key is None else {"key": key})
        response.raise_for_status()

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> ModelServerControl:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class _Terminate(Exception):
    pass


def _raise_terminate(signum: int, frame: FrameType | None) -> None:
    # Launchers (uv run, timeout, a process group) may deliver the signal more than
    # once; a second delivery must not interrupt the shutdown the first one started.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise _Terminate


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until SIGTERM/SIGINT, writing its port to ``--port-file``."""
    parser = argparse.ArgumentParser(prog="python -m sessionflow.demo._model_server")
    parser.add_argument("--port-file", help="write the listening port here once ready")
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: ephemeral)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _raise_terminate)
    signal.signal(signal.SIGINT, _raise_terminate)
    server = ScriptedModelServer(port=args.port).start()
    try:
        if args.port_file:
            # Write-then-rename so a reader polling the file never sees a partial port.
            tmp = f"{args.port_file}.tmp{os.getpid()}"
            with open(tmp, "w") as f:
                f.write(f"{server.port}\n")
            os.replace(tmp, args.port_file)
        print(server.url, flush=True)
        while True:
            # Sleep is interrupted by the signal handler's exception.
            time.sleep(3600)
    except _Terminate:
        return 0
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
