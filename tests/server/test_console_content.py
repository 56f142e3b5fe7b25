"""What the console shows, in a real browser: a long message opened whole, an approval a
person can judge (and reject), markdown rendered safely, the sessions list's search, state
filter and titles, the inbox's context, and the phone layout (390x844)."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, expect

from sessionflow.temporal import PayloadStore
from tests.server.browser import browser, needs_chromium, open_console
from tests.server.conftest import Api, ApiFactory, with_deadline
from tests.server.helpers import idle_after, pending

pytestmark = needs_chromium
__all__ = ["browser"]  # the fixture, imported so the tests here can ask for it

# About 38 KB, with characters of 2, 3 and 4 UTF-8 bytes: "whole" means every line.
_LINE = "line {n:04d}: déjà vu — 漢字 🙂 and more words to read\n"
LONG = "".join(_LINE.format(n=n) for n in range(640))
WRITE: dict[str, object] = {
    "id": "w1",
    "name": "write_file",
    "arguments": {"path": "notes/todo.md", "content": "# Todo\n- buy milk\n- call Bob\n"},
}
DIFF = """--- a/notes/todo.md
+++ b/notes/todo.md
@@ -1,3 +1,3 @@
 # Todo
-- buy bread
+- buy milk
 - call Bob
"""
WRITE_TOOL: dict[str, object] = {
    "effect": "non_idempotent_write",
    "output": "written",
    "preview": {"kind": "diff", "summary": "overwrites 3 lines", "text": DIFF},
}
REFUND: dict[str, object] = {"id": "c1", "name": "refund", "arguments": {"order": 7}}
MARKDOWN = """## Plan

Here is **the plan** with `code` and *emphasis*:

- read [the docs](https://example.com/docs)
- avoid [this](javascript:alert(1))
1. first
2. second

```python
print("<b>hi</b>")
```
"""


async def test_a_38_kb_message_shows_a_preview_and_opens_whole(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    assert 37_000 < len(LONG.encode()) < 40_000
    api: Api = await api_factory(payloads=PayloadStore(location=str(tmp_path / "payloads")))
    api.script("ui-long", [[{"text": LONG}]])
    assert (
        await api.post("/api/v1/sessions", {"session_id": "ui-long", "message": "write"})
    ).status_code == 201
    await idle_after(api, "ui-long", 1)
    console = await open_console(browser, api, tmp_path)
    page = console.page
    await console.log_in()
    await page.goto(f"{api.url}/#/s/ui-long")
    reply = page.locator("#transcript .msg.assistant").last
    await expect(reply).to_contain_text("line 0000")
    assert "line 0639" not in await reply.inner_text()
    show_all = reply.locator(".show-all")
    await expect(show_all).to_contain_text("more characters")
    await console.screenshot("long-message-cut")
    await show_all.click()
    await expect(reply).to_contain_text("line 0639: déjà vu — 漢字 🙂")
    await expect(reply.locator(".show-all")).to_have_count(0)
    text = await reply.evaluate("node => node.textContent")
    assert all(f"line {n:04d}:" in text for n in range(640))
    assert console.dialogs == [] and console.errors == []


async def test_a_write_waiting_for_approval_is_judged_from_its_content_and_rejected(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    api: Api = await api_factory(timings=with_deadline(3600))
    api.script(
        "ui-write",
        [
            [
                {"tool_calls": [WRITE], "deltas": ["I will write your todo list."]},
                {"text": "Not writing it, then."},
            ]
        ],
        {"write_file": WRITE_TOOL},
    )
    assert (
        await api.post("/api/v1/sessions", {"session_id": "ui-write", "message": "Write my todo list"})
    ).status_code == 201
    await pending(api, "ui-write")
    console = await open_console(browser, api, tmp_path)
    page = console.page
    await console.log_in()
    await page.goto(f"{api.url}/#/s/ui-write")
    box = page.locator("#pending .interrupt")
    await expect(box).to_contain_text("write_file")
    await expect(page.locator("#session-state")).to_have_text("waiting for you")
    # The change as a diff, with what it overwrites, and why it asks.
    shown = box.locator(".arguments.diff")
    await expect(shown.locator(".add")).to_have_text("+- buy milk\n")
    await expect(shown.locator(".del")).to_have_text("-- buy bread\n")
    await expect(shown.locator(".hunk")).to_have_text("@@ -1,3 +1,3 @@\n")
    await expect(box.locator(".preview-summary")).to_have_text("overwrites 3 lines")
    reason = (await pending(api, "ui-write"))["reason"]
    assert reason
    # Its `code` spans are drawn as code.
    await expect(box.locator(".why .reason-text")).to_have_text(reason.replace("`", ""))
    await expect(page.locator("#session-title")).to_have_text("Write my todo list")
    await console.screenshot("transcript-diff-approval")

    await box.locator(".reason").fill("not that file")
    await box.locator(".reject").click()
    await expect(page.locator("#transcript")).to_contain_text("Not writing it, then.")
    await expect(page.locator("#pending .interrupt")).to_have_count(0)
    assert api.log.count("tool", "write_file") == 0
    assert api.seen("ui-write", 2)[-1].endswith("not that file")
    assert console.dialogs == [] and console.errors == []


async def test_markdown_renders_as_elements_with_safe_links_only(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    api: Api = await api_factory()
    api.script("ui-md", [[{"text": MARKDOWN}]])
    assert (
        await api.post("/api/v1/sessions", {"session_id": "ui-md", "message": "plan?"})
    ).status_code == 201
    await idle_after(api, "ui-md", 1)
    console = await open_console(browser, api, tmp_path)
    page = console.page
    await console.log_in()
    await page.goto(f"{api.url}/#/s/ui-md")
    reply = page.locator("#transcript .msg.assistant .md").last
    await expect(reply.locator("h4")).to_have_text("Plan")
    await expect(reply.locator("strong")).to_have_text("the plan")
    await expect(reply.locator("em")).to_have_text("emphasis")
    await expect(reply.locator("ul li")).to_have_count(2)
    await expect(reply.locator("ol li")).to_have_count(2)
    await expect(reply.locator("pre.code")).to_have_text('print("<b>hi</b>")')
    await expect(reply.locator("b")).to_have_count(0)
    link = reply.locator("a")
    await expect(link).to_have_count(1)
    await expect(link).to_have_attribute("href", "https://example.com/docs")
    await expect(link).to_have_attribute("rel", "noopener noreferrer")
    await expect(reply).to_contain_text("[this](javascript:alert(1))")
    await console.screenshot("markdown")
    assert console.dialogs == [] and console.errors == []


async def test_sessions_list_titles_search_filter_and_the_inbox_context(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    api: Api = await api_factory(timings=with_deadline(3600))
    api.script("ui-a", [[{"text": "done"}]])
    api.script(
        "ui-b",
        [[{"tool_calls": [REFUND]}, {"text": "refunded"}]],
        {"refund": {"effect": "non_idempotent_write"}},
    )
    assert (
        await api.post("/api/v1/sessions", {"session_id": "ui-a", "message": "Summarise the report"})
    ).status_code == 201
    assert (
        await api.post("/api/v1/sessions", {"session_id": "ui-b", "message": "Refund order 7"})
    ).status_code == 201
    await idle_after(api, "ui-a", 1)
    await pending(api, "ui-b")
    console = await open_console(browser, api, tmp_path)
    page = console.page
    await console.log_in()
    rows = page.locator("#sessions li.session")
    await expect(rows).to_have_count(2, timeout=15_000)
    waiting = page.locator("#sessions li[data-session='ui-b']")
    await expect(waiting.locator(".state")).to_have_text("waiting for you", timeout=15_000)
    await expect(waiting).to_contain_text("1 pending")
    await expect(page.locator("#sessions li[data-session='ui-a'] .state")).to_have_text("idle")
    assert "running" not in await page.locator("#sessions").inner_text()
    await console.screenshot("sessions")

    await page.select_option("#state-filter", "waiting_for_you")
    await expect(page.locator("#sessions li[data-session='ui-a']")).to_have_count(0)
    await expect(rows).to_have_count(1)
    await expect(page.locator("#sessions li[data-session='ui-b']")).to_be_visible()
    await page.select_option("#state-filter", "")
    await page.fill("#search", "ui-a")
    await expect(page.locator("#sessions li[data-session='ui-b']")).to_have_count(0)
    await expect(rows).to_have_count(1)
    await expect(page.locator("#sessions li[data-session='ui-a']")).to_be_visible()
    await page.fill("#search", "no such session")
    await expect(page.locator("#no-sessions")).to_have_text("No session matches.")
    await page.fill("#search", "")
    await expect(rows).to_have_count(2)

    await page.click("#nav-inbox")
    item = page.locator("#inbox .inbox-item")
    await expect(item).to_have_count(1)
    await expect(item).to_contain_text("turn 1")
    await expect(item.locator(".waited")).to_contain_text("waiting")
    await expect(item.locator(".interrupt .arguments")).to_contain_text('"order": 7')
    await console.screenshot("approvals-inbox")
    assert console.dialogs == [] and console.errors == []


async def test_the_phone_layout_fits_390_pixels(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    api: Api = await api_factory(timings=with_deadline(3600))
    api.script(
        "ui-phone-session-with-a-long-id",
        [[{"tool_calls": [WRITE], "deltas": ["Writing the list."]}, {"text": "Written."}]],
        {"write_file": {"effect": "non_idempotent_write", "output": "written"}},
    )
    session = "ui-phone-session-with-a-long-id"
    assert (
        await api.post(
            "/api/v1/sessions",
            {"session_id": session, "message": "Write my todo list, please, with every item on its own line"},
        )
    ).status_code == 201
    await pending(api, session)
    console = await open_console(browser, api, tmp_path, width=390, height=844)
    page = console.page
    await console.log_in()
    await expect(page.locator(f"#sessions li[data-session='{session}']")).to_be_visible(timeout=15_000)
    assert await console.scroll_width() <= 390
    box = await page.locator("#new-message").bounding_box()
    assert box is not None and box["width"] >= 330
    await console.screenshot("phone-sessions")

    await page.goto(f"{api.url}/#/s/{session}")
    await expect(page.locator("#pending .approve")).to_be_visible()
    # Without a preview the content is still readable: real line breaks, no \n escapes.
    shown = page.locator("#pending .arguments")
    await expect(shown).to_contain_text("notes/todo.md")
    await expect(shown).to_contain_text("- buy milk")
    assert "\\n" not in await shown.inner_text()
    assert await console.scroll_width() <= 390
    box = await page.locator("#message").bounding_box()
    assert box is not None and box["width"] >= 330
    await console.screenshot("phone")
    await page.click("#nav-inbox")
    await expect(page.locator("#inbox .inbox-item")).to_have_count(1)
    assert await console.scroll_width() <= 390
    await console.screenshot("phone-inbox")
    await page.click(f"#inbox a[href='#/s/{session}']")
    await page.locator("#pending .approve").click()
    await expect(page.locator("#transcript")).to_contain_text("Written.")
    assert api.log.count("tool", "write_file") == 1
    assert console.dialogs == [] and console.errors == []
