"""Shutting the local tools down with the worker."""

from __future__ import annotations

import sys

__all__ = ["close_browser_sessions"]

_BROWSER_MODULE = "sessionflow_local_tools._browser"


async def close_browser_sessions() -> None:
    """Close this worker's headless browser and every session's page, if a browser tool ran.

    Call it on the worker's event loop when the worker stops. Nothing else needs closing:
    the file, shell and web tools hold nothing between calls.
    """
    if _BROWSER_MODULE not in sys.modules:
        return  # no browser tool ran in this process, so there is no browser
    from sessionflow_local_tools import _browser

    await _browser.close_browser_sessions()
