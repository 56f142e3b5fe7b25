"""The browser tools: one headless Chromium per worker process, one page per session.

The browser is Playwright's own Chromium when it is installed, else a system Chromium or
Chrome (Debian's ``chromium`` package puts it at ``/usr/bin/chromium``), else the
Chromium Playwright downloads the first time a browser tool runs. Each session gets its
own browser context (cookies and storage are not shared) with one page, kept in this
worker process and closed after `IDLE_SECONDS` without use. A worker that restarts has
no pages: the agent must call ``browser_navigate`` again.

Targets: ``browser_click``, ``browser_fill`` and ``browser_submit_form`` take either an
ARIA ``role`` with an optional accessible ``name`` (exact match, as the snapshot shows
them) or a CSS ``selector``; the target must match exactly one element.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, cast
from urllib.parse import urlsplit

from playwright.async_api import Browser, BrowserContext, Locator, Page, Playwright, Request, async_playwright
from playwright.async_api import Error as PlaywrightError

from sessionflow.kit import ToolExecutionError
from sessionflow_local_tools._settings import BROWSER_IDLE_SECONDS
from sessionflow_local_tools._text import cap_text
from sessionflow_local_tools._web import check_web_url

__all__ = [
    "BROWSER_ARGS",
    "IDLE_SECONDS",
    "NO_PAGE_MESSAGE",
    "BrowserPool",
    "BrowserTarget",
    "browser_pool",
    "close_browser_sessions",
]

BROWSER_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
SYSTEM_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
IDLE_SECONDS = BROWSER_IDLE_SECONDS
ACTION_TIMEOUT_MS = 10_000
NAVIGATION_TIMEOUT_MS = 30_000
SETTLE_SECONDS = 0.5
MAX_SNAPSHOT_CHARS = 40_000
INSTALL_TIMEOUT = 600.0
NO_PAGE_MESSAGE = "no page is open in this session on this worker; call browser_navigate first"
_PAGE_SCHEMES = frozenset({"http", "https"})

_SUBMIT_SCRIPT = """
element => {
  const form = element instanceof HTMLFormElement ? element : (element.form || element.closest('form'));
  if (!form) return false;
  const isSubmitter = (element instanceof HTMLButtonElement || element instanceof HTMLInputElement)
    && element.form === form && (element.type === 'submit' || element.type === 'image');
  if (isSubmitter) form.requestSubmit(element); else form.requestSubmit();
  return true;
}
"""


@dataclass(frozen=True)
class BrowserTarget:
    """Which element an action acts on: a role (and name) or a CSS selector."""

    role: str | None = None
    name: str | None = None
    selector: str | None = None

    def __post_init__(self) -> None:
        if (self.role is None) == (self.selector is None):
            raise ToolExecutionError("give either a role (with an optional name) or a CSS selector, not both")
        if self.selector is not None and self.name is not None:
            raise ToolExecutionError("name goes with role; a CSS selector stands alone")

    def describe(self) -> str:
        if self.selector is not None:
            return f"CSS selector {self.selector!r}"
        return f"role {self.role!r}" + (f" named {self.name!r}" if self.name is not None else "")

    def locate(self, page: Page) -> Locator:
        if self.selector is not None:
            return page.locator(f"css={self.selector}")
        role = cast(Any, self.role)  # Playwright checks the role name itself
        if self.name is None:
            return page.get_by_role(role)
        return page.get_by_role(role, name=self.name, exact=True)


@dataclass
class _SessionPage:
    context: BrowserContext
    page: Page
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_used: float = field(default_factory=time.monotonic)


class BrowserPool:
    """The browser of this worker process (on one event loop) and the pages of its sessions."""

    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self._idle_seconds = idle_seconds
        self._wake = asyncio.Event()
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._pages: dict[str, _SessionPage] = {}
        self._start_lock = asyncio.Lock()
        self._reaper: asyncio.Task[None] | None = None

    @property
    def idle_seconds(self) -> float:
        """Seconds a page may go unused before it is closed."""
        return self._idle_seconds

    @idle_seconds.setter
    def idle_seconds(self, value: float) -> None:
        self._idle_seconds = value
        self._wake.set()  # the reaper applies the new value at once

    def has_page(self, session_id: str) -> bool:
        return session_id in self._pages

    async def page_to_navigate(self, session_id: str) -> _SessionPage:
        """The session's page, opened when it has none."""
        existing = self._pages.get(session_id)
        if existing is not None and not existing.page.is_closed():
            return existing
        async with self._start_lock:
            browser = await self._ensure_browser()
            context = await browser.new_context(accept_downloads=False, service_workers="block")
            page = await context.new_page()
            page.set_default_timeout(ACTION_TIMEOUT_MS)
            page.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
            opened = self._pages[session_id] = _SessionPage(context, page)
            if self._reaper is None or self._reaper.done():
                self._reaper = asyncio.create_task(self._reap())
            return opened

    def open_page(self, session_id: str) -> _SessionPage:
        """The session's page, or `ToolExecutionError` saying to navigate first."""
        existing = self._pages.get(session_id)
        if existing is None or existing.page.is_closed():
            self._pages.pop(session_id, None)
            raise ToolExecutionError(NO_PAGE_MESSAGE)
        return existing

    async def close_page(self, session_id: str) -> None:
        session = self._pages.pop(session_id, None)
        if session is not None:
            with contextlib.suppress(PlaywrightError):
                await session.context.close()

    async def close(self) -> None:
        """Close every page, the browser and Playwright."""
        if self._reaper is not None and self._reaper is not asyncio.current_task():
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        self._reaper = None
        for session_id in list(self._pages):
            await self.close_page(session_id)
        await self._shut_browser()

    async def _shut_browser(self) -> None:
        browser, self._browser = self._browser, None
        playwright, self._playwright = self._playwright, None
        if browser is not None:
            with contextlib.suppress(PlaywrightError):
                await browser.close()
        if playwright is not None:
            with contextlib.suppress(PlaywrightError):
                await playwright.stop()

    async def _ensure_browser(self) -> Browser:
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        if self._browser is not None:  # it crashed: its pages are gone with it
            self._pages.clear()
            await self.close()
        playwright = await async_playwright().start()
        try:
            executable = await _browser_executable(playwright)
            browser = await playwright.chromium.launch(
                headless=True, args=list(BROWSER_ARGS), executable_path=executable
            )
        except BaseException:
            await playwright.stop()
            raise
        self._playwright, self._browser = playwright, browser
        return browser

    async def _reap(self) -> None:
        """Close idle pages; with none left, close the browser too (a new page relaunches it)."""
        while True:
            while self._pages:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), min(self.idle_seconds / 2, 60.0))
                now = time.monotonic()
                for session_id, session in list(self._pages.items()):
                    if now - session.last_used > self.idle_seconds and not session.lock.locked():
                        await self.close_page(session_id)
            async with self._start_lock:  # not while a page is being opened
                if not self._pages:
                    await self._shut_browser()
                    self._reaper = None
                    return


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, BrowserPool] = weakref.WeakKeyDictionary()


def browser_pool() -> BrowserPool:
    """The pool of the running event loop (Playwright objects belong to one loop)."""
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = BrowserPool()
    return pool


async def close_browser_sessions() -> None:
    """Close this worker's browser and every session's page (call it when the worker stops)."""
    pool = _pools.pop(asyncio.get_running_loop(), None)
    if pool is not None:
        await pool.close()


async def _browser_executable(playwright: Playwright) -> str | None:
    """None for Playwright's own Chromium, else the path of a system browser.

    With neither, downloads Playwright's Chromium first (once) and returns None.
    """
    if await asyncio.to_thread(os.path.exists, playwright.chromium.executable_path):
        return None
    for name in SYSTEM_BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "playwright",
        "install",
        "chromium",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), INSTALL_TIMEOUT)
    except TimeoutError:
        process.kill()
        raise ToolExecutionError(
            "downloading Chromium for the browser tools took too long; gave up"
        ) from None
    if process.returncode != 0:
        tail = output.decode(errors="replace")[-1000:]
        raise ToolExecutionError(
            "no browser is installed and downloading Playwright's Chromium failed; install Chromium "
            f"(for example `apt-get install chromium`) or run `playwright install chromium`:\n{tail}"
        )
    return None


# --------------------------------------------------------------------------- tools


async def navigate(session_id: str, url: str) -> str:
    url = check_web_url(url)
    pool = browser_pool()
    try:
        session = await pool.page_to_navigate(session_id)
    except PlaywrightError as error:
        raise ToolExecutionError(f"the browser could not start: {_first_line(error)}") from None
    async with session.lock:
        session.last_used = time.monotonic()
        try:
            response = await session.page.goto(url, wait_until="load")
        except PlaywrightError as error:
            raise ToolExecutionError(f"navigating to {url} failed: {_first_line(error)}") from None
        note = f"HTTP status: {response.status}" if response is not None else None
        return await _report(pool, session_id, session, note)


async def snapshot(session_id: str) -> str:
    pool = browser_pool()
    session = pool.open_page(session_id)
    async with session.lock:
        session.last_used = time.monotonic()
        return await _report(pool, session_id, session, None)


ActionName = Literal["click", "fill", "submit"]


async def act(session_id: str, action: ActionName, target: BrowserTarget, value: str | None = None) -> str:
    """Click, fill or submit the one element ``target`` matches, then report the page."""
    pool = browser_pool()
    session = pool.open_page(session_id)
    async with session.lock:
        session.last_used = time.monotonic()
        page = session.page
        try:
            element = target.locate(page)
            count = await element.count()
        except PlaywrightError as error:
            raise ToolExecutionError(
                f"{target.describe()} is not a valid target: {_first_line(error)}"
            ) from None
        if count == 0:
            raise ToolExecutionError(
                f"no element matches {target.describe()}; take a browser_snapshot to see the page"
            )
        if count > 1:
            raise ToolExecutionError(
                f"{count} elements match {target.describe()}; give a more specific name or a CSS selector"
            )
        note = await _run_action(page, action, element, value, target)
        return await _report(pool, session_id, session, note)


async def _run_action(
    page: Page, action: ActionName, element: Locator, value: str | None, target: BrowserTarget
) -> str:
    async def perform() -> None:
        if action == "click":
            await element.click()
        elif action == "fill":
            await element.fill(value or "")
        elif not await element.evaluate(_SUBMIT_SCRIPT):
            raise ToolExecutionError(
                f"{target.describe()} is not a form or inside one; nothing was submitted"
            )

    try:
        if action == "fill":  # filling a field does not navigate; a click or a submit may
            await perform()
            navigated = False
        else:
            navigated = await _settle(page, perform)
    except PlaywrightError as error:
        raise ToolExecutionError(f"{action} on {target.describe()} failed: {_first_line(error)}") from None
    done = {"click": "Clicked", "fill": "Filled", "submit": "Submitted the form of"}[action]
    return f"{done} {target.describe()}" + ("; the page navigated" if navigated else "")


async def _settle(page: Page, perform: Callable[[], Awaitable[None]]) -> bool:
    """Run ``perform``; if it starts a navigation of the page, wait until that page loads."""
    started = asyncio.Event()
    committed = asyncio.Event()

    def on_request(request: Request) -> None:
        with contextlib.suppress(PlaywrightError):
            if request.is_navigation_request() and request.frame.parent_frame is None:
                started.set()

    def on_navigated(frame: Any) -> None:
        if frame == page.main_frame:
            committed.set()

    def on_failed(request: Request) -> None:
        with contextlib.suppress(PlaywrightError):
            if request.is_navigation_request() and request.frame.parent_frame is None:
                committed.set()

    page.on("request", on_request)
    page.on("framenavigated", on_navigated)
    page.on("requestfailed", on_failed)
    try:
        await perform()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(started.wait(), SETTLE_SECONDS)
        if not started.is_set() and not committed.is_set():
            return False
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(committed.wait(), NAVIGATION_TIMEOUT_MS / 1000)
        with contextlib.suppress(PlaywrightError):
            await page.wait_for_load_state("load")
        return True
    finally:
        page.remove_listener("request", on_request)
        page.remove_listener("framenavigated", on_navigated)
        page.remove_listener("requestfailed", on_failed)


async def _report(pool: BrowserPool, session_id: str, session: _SessionPage, note: str | None) -> str:
    page = session.page
    url = page.url
    scheme = urlsplit(url).scheme.lower()
    if scheme not in _PAGE_SCHEMES and url != "about:blank":
        await pool.close_page(session_id)
        raise ToolExecutionError(
            f"the page went to {url!r}, which is not an http or https URL; the page was closed. "
            "Call browser_navigate to open a web page."
        )
    try:
        title = await page.title()
        aria = await page.locator("body").aria_snapshot(timeout=ACTION_TIMEOUT_MS)
    except PlaywrightError as error:
        raise ToolExecutionError(f"reading the page failed: {_first_line(error)}") from None
    lines = [f"URL: {url}", f"Title: {title}"]
    if note:
        lines.append(note)
    lines += ["", "Accessibility snapshot:", cap_text(aria, MAX_SNAPSHOT_CHARS, "snapshot")]
    return "\n".join(lines)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
