"""Headless Debian Chromium under Playwright, for the tests that drive the web console.

Import `browser` into a test module to use it as a fixture, and mark the module with
`needs_chromium`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

__all__ = ["CHROMIUM", "browser", "needs_chromium"]

CHROMIUM = "/usr/bin/chromium"

needs_chromium = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's Chromium")


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield launched
        finally:
            await launched.close()
