"""The web console's static files, shipped in this package (``console/``), and their headers.

The console is plain JavaScript with no build step and no network access beyond this
server. Its Content-Security-Policy allows scripts, styles and connections from this
origin only, and no inline script, so text a model or a tool wrote can never run even if
a bug inserted it as markup (the console inserts it only as text).
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from starlette.requests import Request
from starlette.responses import Response

__all__ = ["CONSOLE_CSP", "CONSOLE_FILES", "console_response"]

CONSOLE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

CONSOLE_FILES: dict[str, tuple[str, str]] = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/console/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/console/app.css": ("app.css", "text/css; charset=utf-8"),
}
"""URL path -> (file in ``sessionflow_server/console``, media type)."""


@cache
def _read(name: str) -> bytes:
    return files("sessionflow_server").joinpath("console", name).read_bytes()


def console_response(request: Request) -> Response:
    name, media_type = CONSOLE_FILES[request.url.path]
    return Response(
        _read(name),
        media_type=media_type,
        headers={
            "Content-Security-Policy": CONSOLE_CSP,
            "X-Content-Type-Options": "nosniff",
            "X-Frame-Options": "DENY",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-cache",
        },
    )
