"""The console's status and feedback in a real browser: the connection indicator across a
server stop and restart, the page a lost login leads to, the queued-message indicator, and
errors shown beside the control that caused them."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, expect

from sessionflow.testing import FileGate
from sessionflow_server import ApiServer, ServerConfig, TokenStore, running_server
from tests.server.browser import browser, needs_chromium, open_console
from tests.server.conftest import Api, ApiFactory, with_deadline
from tests.server.helpers import idle_after, pending

REFUND: dict[str, object] = {"id": "c1", "name": "refund", "arguments": {"order": 7}}

pytestmark = needs_chromium
__all__ = ["browser"]  # the fixture, imported so the tests here can ask for it


async def test_a_stopped_server_greys_actions_out_and_a_restart_brings_them_back(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    api: Api = await api_factory(timings=with_deadline(3600))
    api.script(
        "ui-conn",
        [[{"tool_calls": [REFUND]}, {"text": "Refunded after the restart."}]],
        {"refund": {"effect": "non_idempotent_write", "output": "refund ok"}},
    )
    assert (await api.post("/api/v1/sessions", {"session_id": "ui-conn", "message": "go"})).status_code == 201
    await pending(api, "ui-conn")
    console = await open_console(browser, api, tmp_path)
    page = console.page
    await console.log_in()
    await page.goto(f"{api.url}/#/s/ui-conn")
    approve = page.locator("#pending .approve")
    await expect(approve).to_be_enabled()
    await expect(page.locator("#connection")).to_have_text("connected")

    # The server goes away (as Ctrl-C on `sessionflow serve` does): its streams close.
    api.server.shutdown.set()
    api.running.server.should_exit = True
    await api.running.task
    await expect(page.locator("#connection")).to_contain_text("unreachable", timeout=15_000)
    await expect(approve).to_be_disabled()
    await expect(page.locator("#send-button")).to_be_disabled()
    await console.screenshot("offline")
    assert "Failed to fetch" not in await page.locator("body").inner_text()

    # It comes back on the same port with the same tokens: the tab recovers by itself.
    again = ApiServer([api.sessions], api.server.tokens, config=api.server.config)
    async with running_server(again, port=api.running.port):
        await expect(page.locator("#connection")).to_have_text("connected", timeout=15_000)
        await expect(approve).to_be_enabled()
        assert api.log.count("tool", "refund") == 0
        await approve.click()
        await expect(page.locator("#transcript")).to_contain_text("Refunded after the restart.")
        await expect(page.locator("#session-state")).to_have_text("idle")
        assert api.log.count("tool", "refund") == 1

    # A restart that forgot the tab's token: a clear page, not a raw API message.
    forgetful = ApiServer([api.sessions], TokenStore(tmp_path / "new-tokens.json"), config=api.server.config)
    async with running_server(forgetful, port=api.running.port):
        await expect(page.locator("#logged-out h1")).to_have_text("Your login ended", timeout=15_000)
        await expect(page.locator("#logged-out")).to_contain_text("sessionflow serve")
        await expect(page.locator("#status")).to_have_text("")
        assert await page.evaluate("sessionStorage.getItem('sessionflow.token')") is None
        await console.screenshot("login-ended")
    assert console.dialogs == [] and console.errors == []


async def test_a_queued_message_shows_as_queued_and_a_rejected_one_says_why_beside_send(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    api: Api = await api_factory()
    api.script(
        "ui-queue",
        [[{"text": "first"}], [{"gate": "ui-queue", "text": "second"}], [{"text": "third, from the queue"}]],
    )
    assert (
        await api.post("/api/v1/sessions", {"session_id": "ui-queue", "message": "q1"})
    ).status_code == 201
    await idle_after(api, "ui-queue", 1)
    console = await open_console(browser, api, tmp_path)
    page = console.page
    await console.log_in()
    await page.goto(f"{api.url}/#/s/ui-queue")
    await expect(page.locator("#transcript")).to_contain_text("first")
    await expect(page.locator("#session-state")).to_have_text("idle")

    await page.fill("#message", "q2")
    await page.keyboard.press("Control+Enter")  # sends from the text box
    gate = FileGate(api.state_dir, "ui-queue")
    await gate.wait_until_reached()
    await expect(page.locator("#session-state")).to_contain_text("working")

    # "reject" for this one message: the error says so, beside the send button.
    await page.fill("#message", "not now")
    await page.select_option("#policy", "reject")
    await page.click("#send-button")
    error = page.locator("#send .error")
    await expect(error).to_contain_text("this message was set to be rejected")
    await expect(page.locator("#status")).to_have_text("")

    # The next action clears it; an enqueued message shows as queued until its turn.
    await page.select_option("#policy", "enqueue")
    await page.fill("#message", "q3")
    await page.click("#send-button")
    await expect(error).to_have_text("")
    await expect(page.locator("#queued")).to_contain_text("1 message queued")
    await console.screenshot("queued")
    gate.release()
    await expect(page.locator("#transcript")).to_contain_text("third, from the queue", timeout=30_000)
    await expect(page.locator("#queued")).to_be_hidden()
    assert "not now" not in await page.locator("#transcript").inner_text()
    assert "q3" in api.seen("ui-queue", 3)
    assert console.dialogs == [] and console.errors == []


async def test_stop_asks_inside_the_page_then_stops_the_session(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    api: Api = await api_factory(config=ServerConfig(temporal_ui_url="http://localhost:8233"))
    api.script("ui-stop", [[{"text": "hello"}]])
    assert (await api.post("/api/v1/sessions", {"session_id": "ui-stop", "message": "hi"})).status_code == 201
    await idle_after(api, "ui-stop", 1)
    console = await open_console(browser, api, tmp_path)
    page = console.page
    await console.log_in()
    await page.goto(f"{api.url}/#/s/ui-stop")
    await expect(page.locator("#transcript")).to_contain_text("hello")
    namespace = (await api.get("/api/v1/me")).json()["namespace"]
    link = page.locator("#temporal-link")
    await expect(link).to_have_attribute(
        "href", f"http://localhost:8233/namespaces/{namespace}/workflows/ui-stop"
    )
    await expect(link).to_have_attribute("rel", "noopener noreferrer")
    await page.click("#stop")
    await expect(page.locator("#stop-confirm")).to_be_visible()
    await page.click("#stop-no")
    await expect(page.locator("#stop-confirm")).to_be_hidden()
    assert (await api.get("/api/v1/sessions/ui-stop")).json()["stopped"] is False
    await page.click("#stop")
    await page.click("#stop-yes")
    await expect(page.locator("#session-state")).to_have_text("stopped", timeout=15_000)
    assert (await api.get("/api/v1/sessions/ui-stop")).json()["stopped"] is True
    assert console.dialogs == [] and console.errors == []
