"""`sessionflow codec-server`: encode and decode payloads for the Temporal UI.

The UI (or ``temporal workflow show``) posts encrypted payloads to ``/decode`` and shows
what comes back. The server speaks Temporal's codec-server protocol:
``{"payloads": [{"metadata": {key: base64}, "data": base64}]}`` in and out.

It holds the keys, so it is guarded: it binds to loopback unless told otherwise, answers
cross-origin requests only from the UI's origin, and wants a bearer token on every
``/encode`` and ``/decode``: in an ``Authorization: Bearer <token>`` header, or, for a UI
that cannot send one, as the first part of the path (``--ui-codec-endpoint
http://127.0.0.1:8081/<token>``). A CORS preflight carries no credentials, by the
browsers' rules, so it is answered for the allowed origin alone and does nothing else.

A thread per request (`ThreadingHTTPServer`): encryption is quick, and no request waits
for another.
"""

from __future__ import annotations

import hmac
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

from sessionflow.kit import read_env
from sessionflow.temporal import (
    CodecRequestError,
    EncryptionCodec,
    EncryptionKeyError,
    KeyRing,
    PayloadDecryptionError,
    apply_codec,
    encryption_codec_from_environment,
)
from sessionflow_cli._errors import UsageError

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_UI_ORIGIN",
    "REDACTED",
    "TOKEN_ENV",
    "TOKEN_FILE_ENV",
    "CodecServer",
    "CodecServerSettings",
    "read_token",
    "redact_path",
    "run_codec_server",
]

DEFAULT_UI_ORIGIN = "http://localhost:8233"
"""The origin of the dev server's UI (``temporal server start-dev``)."""
DEFAULT_PORT = 8081
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
TOKEN_ENV = "SESSIONFLOW_CODEC_TOKEN"
TOKEN_FILE_ENV = "SESSIONFLOW_CODEC_TOKEN_FILE"
_MIN_TOKEN_CHARS = 16
_ALLOWED_HEADERS = "Authorization, Content-Type, X-Namespace"


REDACTED = "<redacted>"


def redact_path(path: str) -> str:
    """`path` with its first part replaced by ``<redacted>`` when more parts follow it.

    ``/<token>/decode`` becomes ``/<redacted>/decode``; ``/decode`` stays. Any first part is
    hidden, a wrong token too: it may be a near miss of the right one, or another secret.
    """
    route, mark, query = path.partition("?")
    parts = route.split("/")
    # ["", "<token>", "decode"] for "/<token>/decode"; the first part is after the leading "/".
    first = 1 if route.startswith("/") else 0
    if len([p for p in parts[first:] if p]) >= 2:
        parts[first] = REDACTED
    return "/".join(parts) + mark + query


def read_token(token_file: str | None, environ: dict[str, str] | None = None) -> str:
    """The bearer token: from `token_file`, else ``$SESSIONFLOW_CODEC_TOKEN_FILE``, else
    ``$SESSIONFLOW_CODEC_TOKEN``. Raises `UsageError` when there is none or it is too short."""
    env = dict(os.environ) if environ is None else environ
    path = token_file or read_env(TOKEN_FILE_ENV, environ=env)
    if path:
        try:
            token = Path(path).expanduser().read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"cannot read the codec server's token file {path}: {error}") from None
        source = str(path)
    else:
        token = read_env(TOKEN_ENV, "", environ=env).strip()
        source = TOKEN_ENV
    if not token:
        raise UsageError(
            f"the codec server needs a bearer token: set {TOKEN_ENV} or {TOKEN_FILE_ENV} (or --token-file); "
            "make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )
    if len(token) < _MIN_TOKEN_CHARS or any(c.isspace() or c == "/" for c in token):
        raise UsageError(
            f"the codec server's token ({source}) must be {_MIN_TOKEN_CHARS} or more characters, "
            "without spaces or '/'"
        )
    return token


@dataclass(frozen=True, kw_only=True)
class CodecServerSettings:
    codec: EncryptionCodec
    token: str
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    ui_origins: Sequence[str] = field(default_factory=lambda: [DEFAULT_UI_ORIGIN])
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES


class _Handler(BaseHTTPRequestHandler):
    server: CodecServer  # pyright: ignore[reportIncompatibleVariableOverride]
    protocol_version = "HTTP/1.1"
    timeout = 30  # seconds a connection may sit idle or trickle its body: no thread is held forever

    def log_message(self, format: str, *args: Any) -> None:
        # One line per request, no bodies, no headers (they hold the token), and no token in
        # the path: the UI's endpoint carries it as the first path part (``/<token>/decode``),
        # which the request line would otherwise print (``"POST /<token>/decode HTTP/1.1" 200``).
        if self.server.verbose:
            super().log_message("%s", self._redacted(format % args))

    def _redacted(self, message: str) -> str:
        path = getattr(self, "path", "")
        if path:
            message = message.replace(path, redact_path(path))
        token = self.server.settings.token
        return message.replace(token, REDACTED) if token else message

    # -- CORS ----------------------------------------------------------------------------

    def _allowed_origin(self) -> str | None:
        origin = self.headers.get("Origin")
        return origin if origin is not None and origin in self.server.settings.ui_origins else None

    def _send(self, status: int, body: bytes = b"", *, content_type: str = "application/json") -> None:
        self.send_response(status)
        origin = self._allowed_origin()
        if origin is not None:
            self.send_header("Access-Control-Allow-Origin", origin)
            self.send_header("Vary", "Origin")
        if status == 401:
            self.send_header("WWW-Authenticate", 'Bearer realm="sessionflow codec server"')
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str) -> None:
        self._send(status, json.dumps({"error": message}).encode())

    def do_OPTIONS(self) -> None:
        origin = self._allowed_origin()
        if origin is None:
            self.close_connection = True
            self._error(403, "this origin may not use the codec server")
            return
        self.send_response(204)
        self.send_header("Access-Control-Allow-Origin", origin)
        self.send_header("Access-Control-Allow-Methods", "POST, OPTIONS")
        self.send_header("Access-Control-Allow-Headers", _ALLOWED_HEADERS)
        self.send_header("Access-Control-Max-Age", "600")
        self.send_header("Vary", "Origin")
        self.send_header("Content-Length", "0")
        self.end_headers()

    # -- encode and decode ---------------------------------------------------------------

    def _operation(self) -> Literal["encode", "decode"] | None:
        """Encode or decode: the operation, when the request is authorized for one; None after answering."""
        path = self.path.split("?", 1)[0].strip("/")
        parts = path.split("/") if path else []
        token = self.server.settings.token.encode()
        given: bytes | None = None
        header = self.headers.get("Authorization", "")
        scheme, _, credentials = header.partition(" ")
        if scheme.lower() == "bearer" and credentials.strip():
            given = credentials.strip().encode()
        elif len(parts) == 2:
            # The endpoint's first path part: for a UI that cannot send a header.
            given = parts[0].encode()
        if len(parts) == 2:
            parts = parts[1:]
        if given is None or not hmac.compare_digest(given, token):
            self._error(401, "a valid bearer token is required")
            return None
        if parts == ["encode"]:
            return "encode"
        if parts == ["decode"]:
            return "decode"
        self._error(404, "the codec server answers POST /encode and POST /decode")
        return None

    def do_POST(self) -> None:
        # The body is not read before the request is authorized and its size known; a request
        # refused early closes the connection, so an unread body cannot be taken for a request.
        self.close_connection = True
        operation = self._operation()
        if operation is None:
            return
        length_text = self.headers.get("Content-Length")
        if length_text is None or not length_text.strip().isdigit():
            self._error(411, "a Content-Length is required")
            return
        length = int(length_text)
        limit = self.server.settings.max_body_bytes
        if length > limit:
            self._error(413, f"the body is {length} bytes; the limit is {limit}")
            return
        body = self.rfile.read(length)
        self.close_connection = False
        try:
            response = apply_codec(self.server.settings.codec, operation, body)
        except CodecRequestError as error:
            self._error(400, str(error))
            return
        except PayloadDecryptionError as error:
            self._error(422, str(error))
            return
        except Exception as error:  # a payload whose plaintext is not a payload
            self._error(422, f"cannot {operation} the payloads: {type(error).__name__}: {error}")
            return
        self._send(200, response)

    def _refuse(self) -> None:
        self.close_connection = True
        self._error(405, "the codec server answers POST /encode and POST /decode")

    do_GET = do_PUT = do_DELETE = do_PATCH = _refuse


class CodecServer(ThreadingHTTPServer):
    """The codec server; `serve_forever` in a thread of its own, `shutdown` to stop."""

    daemon_threads = True
    request_queue_size = 64

    def __init__(self, settings: CodecServerSettings, *, verbose: bool = False) -> None:
        self.settings = settings
        self.verbose = verbose
        super().__init__((settings.host, settings.port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = f"[{host}]" if ":" in str(host) else str(host)
        return f"http://{shown}:{port}"


def run_codec_server(
    *,
    host: str,
    port: int,
    ui_origins: Sequence[str],
    token_file: str | None,
    max_body_bytes: int,
    keys_file: str | None = None,
    print_line: Any = print,
) -> int:
    """Serve until interrupted; returns the exit code. Raises `UsageError` for bad settings."""
    try:
        codec = (
            EncryptionCodec(KeyRing.from_file(keys_file))
            if keys_file
            else encryption_codec_from_environment()
        )
    except EncryptionKeyError as error:
        raise UsageError(f"encryption keys: {error}") from None
    except ImportError as error:
        raise UsageError(str(error)) from None
    if codec is not None and codec.required:
        # Strict mode is for workers and clients; the UI is shown plaintext payloads as they are.
        codec = EncryptionCodec(codec.ring)
    if codec is None:
        raise UsageError(
            "the codec server needs the encryption keys: set SESSIONFLOW_ENCRYPTION_KEYS or "
            "SESSIONFLOW_ENCRYPTION_KEYS_FILE as for the workers"
        )
    for origin in ui_origins:
        if origin == "*" or not origin.startswith(("http://", "https://")) or origin.endswith("/"):
            raise UsageError(f"--ui-origin {origin!r}: give one origin such as {DEFAULT_UI_ORIGIN}")
    if max_body_bytes <= 0:
        raise UsageError("--max-body-bytes must be positive")
    settings = CodecServerSettings(
        codec=codec,
        token=read_token(token_file),
        host=host,
        port=port,
        ui_origins=list(ui_origins),
        max_body_bytes=max_body_bytes,
    )
    try:
        server = CodecServer(settings, verbose=True)
    except OSError as error:
        raise UsageError(f"the codec server cannot listen on {host}:{port}: {error}") from None
    print_line(
        f"codec server on {server.url} for {', '.join(settings.ui_origins)} "
        f"(key IDs {', '.join(codec.ring.keys)}; encoding with {codec.encoding_key_id})"
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
