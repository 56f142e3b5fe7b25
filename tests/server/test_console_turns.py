"""The transcript drawn from the session's turn records, in a real browser: a tab opened
after a turn's first step (a step another process's worker ran) sees its text, a reload
keeps it, and a cancelled turn keeps what it did, with the session's note drawn as the
session's voice, not the user's."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, expect

from tests.server.browser import browser, needs_chromium, open_console
from tests.server.conftest import Api, ApiFactory, with_deadline
from tests.server.helpers import idle_after, pending

REFUND: dict[str, object] = {"id": "c1", "name": "refund", "arguments": {"order": 7}}
LOOK = "Let me look around your workspace."

pytestmark = needs_chromium
__all__ = ["browser"]  # the fixture, imported so the tests here can ask for it


async def test_a_tab_opened_after_the_first_step_sees_its_text_and_a_reload_keeps_it(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    api: Api = await api_factory(timings=with_deadline(3600))
    api.script(
        "ui-late",
        [[{"tool_calls": [REFUND], "deltas": [LOOK]}, {"text": "Order 7 is refunded."}]],
        {"refund": {"effect": "non_idempotent_write", "output": "refund ok"}},
    )
    assert (
        await api.post("/api/v1/sessions", {"session_id": "ui-late", "message": "Refund order 7"})
    ).status_code == 201
    # The worker (another process) ran the first step before any tab was open.
    await pending(api, "ui-late")
    console = await open_console(browser, api, tmp_path)
    page = console.page
    await console.log_in()
    await page.goto(f"{api.url}/#/s/ui-late")
    turn = page.locator("#transcript section.turn[data-turn='turn-1']")
    await expect(turn.locator(".msg.step .md")).to_have_text(LOOK)
    await expect(turn).to_have_attribute("data-outcome", "running")
    call = turn.locator(".tool[data-tool='refund']")
    await expect(call.locator(".tool-status")).to_have_text("awaiting approval")
    await expect(call.locator(".effect")).to_have_text("non idempotent write")

    await page.reload()
    await expect(turn.locator(".msg.step .md")).to_have_text(LOOK)
    await expect(call.locator(".tool-status")).to_have_text("awaiting approval")
    assert (await page.locator("main").inner_text()).count(LOOK) == 1

    # The keys: `?` shows the help, `a` approves the first pending approval.
    await page.keyboard.press("?")
    await expect(page.locator("#help")).to_be_visible()
    await console.screenshot("shortcuts")
    await page.keyboard.press("Escape")
    await expect(page.locator("#help")).to_be_hidden()
    await page.keyboard.press("a")
    await expect(turn).to_have_attribute("data-outcome", "completed")
    await expect(turn).to_contain_text("Order 7 is refunded.")
    await expect(call.locator(".tool-status")).to_have_text("succeeded")
    await expect(call.locator(".approval-line")).to_contain_text("approved by alice")
    await call.locator("summary").click()
    await expect(call.locator(".tool-output")).to_have_text("refund ok")
    await expect(page.locator("#live .msg")).to_have_count(0)
    assert (await page.locator("main").inner_text()).count(LOOK) == 1
    await console.screenshot("transcript")
    assert api.log.count("tool", "refund") == 1
    assert console.dialogs == [] and console.errors == []


async def test_a_cancelled_turn_keeps_its_steps_marked_cancelled_and_its_note_is_the_sessions(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    api: Api = await api_factory(timings=with_deadline(3600))
    api.script(
        "ui-cancel",
        [[{"tool_calls": [REFUND], "deltas": ["Starting the refund."]}], [{"text": "Fresh start."}]],
        {"refund": {"effect": "non_idempotent_write", "output": "refund ok"}},
    )
    assert (
        await api.post("/api/v1/sessions", {"session_id": "ui-cancel", "message": "Refund order 7"})
    ).status_code == 201
    await pending(api, "ui-cancel")
    console = await open_console(browser, api, tmp_path)
    page = console.page
    await console.log_in()
    await page.goto(f"{api.url}/#/s/ui-cancel")
    await expect(page.locator("#pending .approve")).to_be_visible()
    await page.click("#cancel")
    turn = page.locator("#transcript section.turn[data-turn='turn-1']")
    await expect(turn).to_have_attribute("data-outcome", "cancelled")
    await expect(turn.locator(".turn-head .outcome")).to_have_text("cancelled")
    await expect(turn.locator(".msg.step .md")).to_have_text("Starting the refund.")
    await expect(turn.locator(".tool[data-tool='refund'] .approval-line")).to_contain_text(
        "closed by the session"
    )
    await expect(turn.locator(".turn-error")).to_have_text("Turn cancelled.")
    await expect(page.locator("#session-state")).to_have_text("idle")
    await expect(page.locator("#pending .interrupt")).to_have_count(0)

    await page.fill("#message", "Start over")
    await page.click("#send-button")
    await expect(page.locator("#transcript")).to_contain_text("Fresh start.")
    # The note the cancelled turn left for the model is the session's, never a user bubble.
    await expect(page.locator("#transcript .msg.note")).to_have_count(1)
    for bubble in await page.locator("#transcript .msg.user").all_inner_texts():
        assert bubble in ("Refund order 7", "Start over")
    assert "rejected by the user" not in await page.locator("main").inner_text()
    await expect(turn.locator(".msg.step .md")).to_have_text("Starting the refund.")
    await console.screenshot("cancelled-turn")
    await idle_after(api, "ui-cancel", 2)
    assert api.log.count("tool", "refund") == 0
    assert console.dialogs == [] and console.errors == []


async def test_a_long_tool_output_is_folded_cut_and_opens_whole(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    api: Api = await api_factory()
    page_text = "".join(f"row {n:05d} of the fetched page\n" for n in range(700))
    fetch: dict[str, object] = {"id": "f1", "name": "fetch_page", "arguments": {"url": "https://example.com"}}
    api.script(
        "ui-output",
        [[{"tool_calls": [fetch]}, {"text": "I read the page."}]],
        {"fetch_page": {"effect": "read", "output": page_text}},
    )
    assert (
        await api.post("/api/v1/sessions", {"session_id": "ui-output", "message": "read it"})
    ).status_code == 201
    await idle_after(api, "ui-output", 1)
    console = await open_console(browser, api, tmp_path)
    page = console.page
    await console.log_in()
    await page.goto(f"{api.url}/#/s/ui-output")
    call = page.locator("#transcript .tool[data-tool='fetch_page']")
    await expect(call.locator(".tool-status")).to_have_text("succeeded")
    await expect(call.locator(".effect")).to_have_text("read")
    await expect(call.locator(".tool-output")).to_be_hidden()  # folded
    await call.locator("summary").click()
    await expect(call.locator(".tool-output")).to_contain_text("row 00000")
    assert "row 00699" not in await call.locator(".tool-output").inner_text()
    await call.locator(".show-all").click()
    await expect(call.locator(".tool-output")).to_contain_text("row 00699 of the fetched page")
    assert await call.locator(".tool-output").evaluate("node => node.textContent") == page_text
    await expect(call.locator(".tool-output")).to_be_visible()  # still unfolded after the redraw
    assert api.log.count("tool", "fetch_page") == 1
    assert console.dialogs == [] and console.errors == []
