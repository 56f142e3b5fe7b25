"""The browser tools on a real headless Chromium, against a form served on loopback."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest

from sessionflow import (
    AgentInterrupt,
    AgentSessionClient,
    AgentSnapshot,
    AgentStatus,
    connect,
    serve_agent_flows,
)
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import ToolExecutionError
from sessionflow.testing import wait_for_agent_snapshot, wait_until
from sessionflow_local_tools import close_browser_sessions
from sessionflow_local_tools._browser import IDLE_SECONDS, NO_PAGE_MESSAGE, browser_pool
from tests.local_tools._session import local_tools_flow
from tests.local_tools.conftest import Sandbox, Tools

FORM = """<!doctype html>
<html><head><title>Sign up</title></head><body>
<h1>Sign up</h1>
<form method="post" action="/submit">
  <label>Name <input name="name"></label>
  <label>Email <input name="email" type="email"></label>
  <button type="submit" name="plan" value="pro">Send</button>
</form>
<form method="post" action="/delete"><button type="submit">Delete account</button></form>
<a href="/plain">Plain page</a>
<a href="file:///etc/passwd">Local file</a>
</body></html>
"""


@dataclass
class Site:
    url: str
    posts: list[tuple[str, dict[str, list[str]]]] = field(default_factory=lambda: [])


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path == "/form":
                self._html(FORM)
            else:
                self._html("<title>Plain</title><p>plain page</p>")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            values = parse_qs(self.rfile.read(length).decode())
            site.posts.append((self.path, values))
            name = values.get("name", ["?"])[0]
            self._html(f"<title>Thanks</title><h1>Thanks, {name}</h1>")

        def _html(self, text: str) -> None:
            body = text.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@pytest.fixture
def site() -> Iterator[Site]:
    site = Site("")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(site))
    server.daemon_threads = True
    site.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield site
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
async def browser_closed() -> AsyncIterator[None]:
    """One browser for the module's tests (a launch takes seconds), closed at the end."""
    yield
    await close_browser_sessions()


async def refused(tools: Tools, tool: str, /, session_id: str = "s-test", **args: Any) -> str:
    with pytest.raises(ToolExecutionError) as caught:
        await tools.call(tool, session_id=session_id, **args)
    return caught.value.message


async def test_navigate_fill_submit_directly(sandbox: Sandbox, site: Site, browser_closed: None) -> None:
    tools = sandbox.tools
    page = await tools.call("browser_navigate", url=f"{site.url}/form")
    assert page.startswith(
        f"URL: {site.url}/form\nTitle: Sign up\nHTTP status: 200\n\nAccessibility snapshot:\n"
    )
    assert '- textbox "Name"' in page and '- button "Send"' in page
    filled = await tools.call("browser_fill", role="textbox", name="Name", value="Ada")
    assert "Filled role 'textbox' named 'Name'" in filled and '- textbox "Name": Ada' in filled
    await tools.call("browser_fill", selector="input[name=email]", value="ada@example.com")
    submitted = await tools.call("browser_submit_form", role="button", name="Send")
    assert submitted.startswith(f"URL: {site.url}/submit\nTitle: Thanks\n")
    assert "the page navigated" in submitted and '- heading "Thanks, Ada"' in submitted
    assert site.posts == [("/submit", {"name": ["Ada"], "email": ["ada@example.com"], "plan": ["pro"]})]
    assert (await tools.call("browser_snapshot")).startswith(f"URL: {site.url}/submit\nTitle: Thanks")


async def test_targets_must_match_exactly_one_element(
    sandbox: Sandbox, site: Site, browser_closed: None
) -> None:
    tools = sandbox.tools
    await tools.call("browser_navigate", url=f"{site.url}/form")
    assert "2 elements match role 'textbox'" in await refused(
        tools, "browser_fill", role="textbox", value="x"
    )
    assert "no element matches role 'button' named 'Nope'" in await refused(
        tools, "browser_click", role="button", name="Nope"
    )
    assert "either a role" in await refused(tools, "browser_click", role="link", selector="a")
    assert "either a role" in await refused(tools, "browser_click")
    assert "not a form or inside one" in await refused(
        tools, "browser_submit_form", role="heading", name="Sign up"
    )
    clicked = await tools.call("browser_click", role="link", name="Plain page")
    assert clicked.startswith(f"URL: {site.url}/plain\nTitle: Plain\n") and "the page navigated" in clicked


async def test_only_web_urls_are_opened(sandbox: Sandbox, site: Site, browser_closed: None) -> None:
    tools = sandbox.tools
    for url in ("file:///etc/passwd", "about:blank", "data:text/html,<p>x</p>", "chrome://version"):
        assert "only http and https URLs are allowed" in await refused(tools, "browser_navigate", url=url)
    await tools.call("browser_navigate", url=f"{site.url}/form")
    # A page's link to a local file does not take the page there.
    after = await tools.call("browser_click", role="link", name="Local file")
    assert after.startswith(f"URL: {site.url}/form\n")
    assert "passwd" not in after.split("Accessibility snapshot:")[0]


async def test_a_worker_without_the_page_says_to_navigate(
    sandbox: Sandbox, site: Site, browser_closed: None
) -> None:
    tools = sandbox.tools
    assert await refused(tools, "browser_snapshot", session_id="never-navigated") == NO_PAGE_MESSAGE
    await tools.call("browser_navigate", session_id="restarted", url=f"{site.url}/form")
    # A restarted worker process starts with no browser and no pages, like this:
    await close_browser_sessions()
    assert await refused(tools, "browser_snapshot", session_id="restarted") == NO_PAGE_MESSAGE
    message = await refused(
        tools, "browser_fill", session_id="restarted", role="textbox", name="Name", value="x"
    )
    assert message == NO_PAGE_MESSAGE
    assert (await tools.call("browser_navigate", session_id="restarted", url=f"{site.url}/form")).startswith(
        "URL:"
    )


async def test_an_idle_page_is_closed(sandbox: Sandbox, site: Site, browser_closed: None) -> None:
    pool = browser_pool()
    await sandbox.tools.call("browser_navigate", session_id="idle", url=f"{site.url}/form")
    pool.idle_seconds = 0.2
    try:
        await wait_until("the idle page to close", lambda: not pool.has_page("idle"), timeout=10)
    finally:
        pool.idle_seconds = IDLE_SECONDS
    assert await refused(sandbox.tools, "browser_snapshot", session_id="idle") == NO_PAGE_MESSAGE


async def test_a_switched_off_browser_opens_nothing(sandbox: Sandbox, site: Site) -> None:
    message = await refused(
        sandbox.tools,
        "browser_navigate",
        url=f"{site.url}/form",
        settings={"local_tools": {"groups": ["files"]}},
    )
    assert message == "tool browser_navigate is switched off for this session"


# --------------------------------------------------------------------------- in a real session


def call(call_id: str, tool: str, /, **arguments: object) -> ModelReply:
    return ModelReply.call(ScriptedToolCall(call_id, tool, dict(arguments)))


async def next_interrupt(sessions: AgentSessionClient, key: str, seen: set[str]) -> AgentInterrupt:
    def find(s: AgentSnapshot) -> AgentInterrupt | None:
        return next((i for i in s.pending_interrupts if i.interrupt_id not in seen), None)

    interrupt = await wait_for_agent_snapshot(sessions, key, find, description="an approval request")
    seen.add(interrupt.interrupt_id)
    return interrupt


async def test_a_form_through_a_session_with_approvals(
    temporal_address: str, site: Site, tmp_path: Path, browser_closed: None
) -> None:
    key = f"lt-browser-{uuid.uuid4().hex[:8]}"
    async with ScriptedModelServer() as model:
        model.script(
            key,
            [
                call("c0", "browser_snapshot"),
                call("c1", "browser_navigate", url=f"{site.url}/form"),
                call("c2", "browser_fill", role="textbox", name="Name", value="Grace"),
                call("c3", "browser_fill", selector="input[name=email]", value="grace@example.com"),
                call("c4", "browser_submit_form", role="button", name="Delete account"),
                call("c5", "browser_submit_form", role="button", name="Send"),
                ModelReply.say("Signed up."),
            ],
        )
        flow = local_tools_flow(f"flow-{key}", tmp_path, model.base_url(key))
        client = await connect(temporal_address)
        sessions = AgentSessionClient(client, flow)
        stop = asyncio.Event()
        worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
        try:
            await sessions.start_session(key, "sign me up")
            seen: set[str] = set()
            asked: list[str] = []
            for approve in (True, True, False, True):
                interrupt = await next_interrupt(sessions, key, seen)
                asked.append(f"{interrupt.tool_call_id}:{interrupt.tool_name}")
                await sessions.resolve_interrupt(
                    key,
                    interrupt.interrupt_id,
                    approved=approve,
                    rejection_message=None if approve else "no!",
                )

            def ended(s: AgentSnapshot) -> AgentSnapshot | None:
                state = s.state
                return (
                    s
                    if state
                    and state.turn_count == 1
                    and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
                    else None
                )

            snapshot = await wait_for_agent_snapshot(sessions, key, ended, description="the turn to end")
        finally:
            stop.set()
            await worker
        results = model.requests(key)[-1].tool_results()
    # Reads ran without approval; every write asked first, and the rejected one never ran.
    assert asked == ["c2:browser_fill", "c3:browser_fill", "c4:browser_submit_form", "c5:browser_submit_form"]
    assert snapshot.messages[-1].message.text == "Signed up."
    assert results["c0"] == f"Tool call failed: {NO_PAGE_MESSAGE}"
    assert results["c1"].startswith(f"URL: {site.url}/form\nTitle: Sign up")
    assert '- textbox "Name": Grace' in results["c2"]
    assert results["c4"] == "Tool call rejected by the user: no!"
    assert '- heading "Thanks, Grace"' in results["c5"]
    assert site.posts == [("/submit", {"name": ["Grace"], "email": ["grace@example.com"], "plan": ["pro"]})]
