"""One session, two processes: `sessionflow chat` in a terminal asks for an approval, the
browser (through `sessionflow serve`) gives it, and the terminal goes on with the turn."""

from __future__ import annotations

import asyncio

import pexpect
from playwright.async_api import Browser, expect

from sessionflow.demo import ModelReply, ScriptedToolCall
from tests.cli.background import ServeCommand
from tests.cli.conftest import Cli, expect_group, finish
from tests.server.browser import browser, needs_chromium

pytestmark = needs_chromium
__all__ = ["browser"]  # the fixture, imported so the test here can ask for it


async def _expect(child: pexpect.spawn[str], text: str, timeout: float = 60) -> None:
    # In a thread: the browser's driver talks to this event loop meanwhile.
    await asyncio.to_thread(child.expect_exact, text, timeout=timeout)


async def test_an_approval_given_in_the_browser_lets_the_waiting_terminal_go_on(
    cli: Cli, browser: Browser
) -> None:
    cli.write_config()
    cli.script(
        [
            ModelReply.call(
                ScriptedToolCall("c1", "publish_note", {"text": "from the terminal"}), text="Publishing it. "
            ),
            ModelReply.say("Published the note."),
            ModelReply.say("Still here."),
        ]
    )
    child = cli.spawn("chat", "-f", "scripted")
    session_id = expect_group(child, r"New session (\S+); it starts with your first message")
    child.expect("you> ")
    child.sendline("publish a note")
    await _expect(child, "[approval] publish_note")
    await _expect(child, '"text": "from the terminal"')
    await _expect(child, "approve? [y / n <reason>]")

    serve = ServeCommand(cli, cli.home / "serve.log", "-f", "scripted")
    try:
        base, code = await serve.login_url()
        page = await browser.new_page(viewport={"width": 1100, "height": 800})
        await page.goto(f"{base}/#code={code}")
        await expect(page.locator("main h1")).to_have_text("Sessions")
        row = page.locator(f"#sessions li[data-session='{session_id}']")
        await expect(row).to_contain_text("1 pending")
        await page.click("#nav-inbox")
        item = page.locator("main .interrupt")
        await expect(item).to_contain_text("publish_note")
        await expect(item).to_contain_text("from the terminal")
        assert not (cli.workspace / "published.txt").exists()
        await item.locator(".approve").click()

        # The terminal stops asking, says who decided, and shows the rest of the turn.
        await _expect(child, "(answered elsewhere: approved)")
        await _expect(child, '[tool] publish_note {"text": "from the terminal"}')
        await _expect(child, "[tool] publish_note succeeded")
        await _expect(child, "Published the note.")
        await _expect(child, "you> ")
        child.sendline("are you there?")
        await _expect(child, "Still here.")
        await _expect(child, "you> ")
        child.sendline("/exit")
        assert await asyncio.to_thread(finish, child) == 0

        # The write ran once, and the browser shows the turns the terminal had.
        assert (cli.workspace / "published.txt").read_text() == "from the terminal\n"
        await page.goto(f"{base}/#/s/{session_id}")
        transcript = page.locator("#transcript")
        await expect(transcript).to_contain_text("Published the note.")
        await expect(transcript).to_contain_text("Still here.")
        await expect(page.locator("#pending .interrupt")).to_have_count(0)
        # The model saw the tool's real output after the approval given in the browser.
        assert cli.requests()[1].sent_texts()[-1] == "published 'from the terminal'"
        assert await serve.stop() == 0, serve.output()
    finally:
        serve.kill()
        if child.isalive():
            child.terminate(force=True)
