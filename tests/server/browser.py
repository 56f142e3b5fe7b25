"""Headless Debian Chromium under Playwright, for the tests that drive the web console.

Import `browser` into a test module to use it as a fixture, and mark the module with
`needs_chromium`. `open_console` opens one tab on an `Api`; its `screenshot` saves the view
in light and dark mode, to the test's folder and, with SESSIONFLOW_UPDATE_SCREENSHOTS=1, to
docs/server/screenshots/.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Literal

import pytest
from playwright.async_api import Browser, Dialog, Page, async_playwright, expect

from tests.server.conftest import Api

__all__ = ["CHROMIUM", "DOCS_SCREENSHOTS", "Console", "browser", "needs_chromium", "open_console"]

CHROMIUM = "/usr/bin/chromium"
DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "server" / "screenshots"

needs_chromium = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's Chromium")


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield launched
        finally:
            await launched.close()


class Console:
    """One browser tab on the console, recording dialogs and page errors as they happen."""

    def __init__(self, page: Page, api: Api, shots: Path) -> None:
        self.page = page
        self.api = api
        self.shots = shots
        self.dialogs: list[str] = []
        self._dismissing: set[asyncio.Future[None]] = set()
        self.errors: list[str] = []
        page.on("dialog", self._dialog)
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        dismissing = asyncio.ensure_future(dialog.dismiss())
        self._dismissing.add(dismissing)
        dismissing.add_done_callback(self._dismissing.discard)

    async def log_in(self, user: str = "alice") -> None:
        await self.page.goto(f"{self.api.url}/#code={self.api.server.codes.issue(user)}")
        await expect(self.page.locator("#who")).to_have_text(user)

    async def screenshot(self, name: str) -> None:
        """The view as it is, in light and in dark mode (`<name>.png`, `<name>-dark.png`)."""
        update = os.environ.get("SESSIONFLOW_UPDATE_SCREENSHOTS") == "1"
        schemes: tuple[tuple[Literal["light", "dark"], str], ...] = (("light", ""), ("dark", "-dark"))
        for scheme, suffix in schemes:
            await self.page.emulate_media(color_scheme=scheme)
            folders = [self.shots, DOCS_SCREENSHOTS] if update else [self.shots]
            for folder in folders:
                folder.mkdir(parents=True, exist_ok=True)
                await self.page.screenshot(path=folder / f"{name}{suffix}.png", full_page=True)
        await self.page.emulate_media(color_scheme="light")

    async def scroll_width(self) -> int:
        return int(await self.page.evaluate("document.documentElement.scrollWidth"))


async def open_console(
    browser: Browser, api: Api, tmp_path: Path, *, width: int = 1100, height: int = 800
) -> Console:
    shots = tmp_path / "screenshots"
    shots.mkdir(exist_ok=True)
    page = await browser.new_page(viewport={"width": width, "height": height})
    return Console(page, api, shots)
