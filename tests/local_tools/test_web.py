"""`fetch_web_page` against a stdlib HTTP server on loopback."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from sessionflow.kit import ToolExecutionError
from sessionflow_local_tools import _web
from tests.local_tools.conftest import Sandbox, Tools

ARTICLE = """<!doctype html>
<html><head><title>Durable sessions</title></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article>
<h1>Durable sessions</h1>
<p>A session survives a crash of the worker that runs it, because every step is recorded.</p>
<p>Tools that are not safe to repeat run at most once; their outcome may be unknown.</p>
</article>
<footer>Copyright nobody</footer>
</body></html>
"""


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path
        if path == "/article":
            self._send(200, "text/html; charset=utf-8", ARTICLE.encode())
        elif path == "/plain":
            self._send(200, "text/plain; charset=utf-8", b"just text\nline two\n")
        elif path.startswith("/hop/"):
            left = int(path.rsplit("/", 1)[1])
            self._redirect("/plain" if left == 0 else f"/hop/{left - 1}")
        elif path == "/relative":
            self._redirect("plain")
        elif path == "/loop":
            self._redirect("/loop")
        elif path == "/to-file":
            self._redirect("file:///etc/passwd")
        elif path == "/big":
            self._send(200, "text/plain", b"y" * (3 * 1024 * 1024))
        elif path == "/image":
            self._send(200, "image/png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 100)
        elif path == "/slow":
            time.sleep(3)
            self._send(200, "text/plain", b"late")
        else:
            self._send(404, "text/plain", b"not found")

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading at its cap


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


async def fetch(tools: Tools, url: str) -> str:
    return await tools.call("fetch_web_page", url=url)


async def refused(tools: Tools, url: str) -> str:
    with pytest.raises(ToolExecutionError) as caught:
        await fetch(tools, url)
    return caught.value.message


async def test_html_becomes_readable_text(sandbox: Sandbox, site: str) -> None:
    text = await fetch(sandbox.tools, f"{site}/article")
    assert text.startswith(f"URL: {site}/article\nStatus: 200\nContent-Type: text/html\n\n")
    assert "survives a crash of the worker" in text and "run at most once" in text
    assert "<p>" not in text and "Durable sessions" in text


async def test_plain_text_is_returned_as_is(sandbox: Sandbox, site: str) -> None:
    assert (await fetch(sandbox.tools, f"{site}/plain")).endswith("\n\njust text\nline two")


async def test_redirects_are_followed_up_to_the_limit(sandbox: Sandbox, site: str) -> None:
    text = await fetch(sandbox.tools, f"{site}/hop/{_web.MAX_REDIRECTS - 1}")  # exactly MAX_REDIRECTS hops
    assert text.startswith(f"URL: {site}/plain\n") and text.endswith("just text\nline two")
    assert (await fetch(sandbox.tools, f"{site}/relative")).startswith(f"URL: {site}/plain\n")
    assert "redirected more than 5 times" in await refused(sandbox.tools, f"{site}/hop/{_web.MAX_REDIRECTS}")
    assert "redirected more than 5 times" in await refused(sandbox.tools, f"{site}/loop")


async def test_file_urls_are_refused_directly_and_after_a_redirect(sandbox: Sandbox, site: str) -> None:
    for url in ("file:///etc/passwd", "FILE:///etc/passwd", "ftp://example.com/x", "javascript:alert(1)"):
        assert "only http and https URLs are allowed" in await refused(sandbox.tools, url)
    assert "has no host" in await refused(sandbox.tools, "http:///etc/passwd")
    message = await refused(sandbox.tools, f"{site}/to-file")
    assert message == (
        "a redirect to 'file:///etc/passwd' is refused: only http and https URLs are allowed, not file:"
    )


async def test_an_oversized_body_is_cut_at_the_cap(sandbox: Sandbox, site: str) -> None:
    text = await fetch(sandbox.tools, f"{site}/big")
    assert f"[body truncated: only the first {_web.MAX_BODY_BYTES} bytes were read]" in text
    assert "[... page text truncated:" in text
    assert len(text) < _web.MAX_TEXT_CHARS + 1000


async def test_binary_types_are_described_not_shown(sandbox: Sandbox, site: str) -> None:
    text = await fetch(sandbox.tools, f"{site}/image")
    assert text.endswith("Content-Type: image/png\n\n[108 bytes of image/png; not text, so not shown]")


async def test_error_statuses_and_slow_servers(
    sandbox: Sandbox, site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "Status: 404" in await fetch(sandbox.tools, f"{site}/missing")
    monkeypatch.setattr(_web, "FETCH_TIMEOUT", 0.5)
    assert "took longer than 0.5 s" in await refused(sandbox.tools, f"{site}/slow")
    assert "failed: ConnectError" in await refused(sandbox.tools, "http://127.0.0.1:9/")


async def test_a_switched_off_group_fetches_nothing(sandbox: Sandbox, site: str) -> None:
    with pytest.raises(ToolExecutionError, match="tool fetch_web_page is switched off for this session"):
        await sandbox.tools.call(
            "fetch_web_page", url=f"{site}/plain", settings={"local_tools": {"groups": []}}
        )
