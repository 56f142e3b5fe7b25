"""`fetch_web_page`: one ``http``/``https`` URL as readable text.

Redirects are followed by hand, at most `MAX_REDIRECTS`, and every target is checked
like the first URL, so a redirect can never reach ``file:`` or another scheme. The body
is read up to `MAX_BODY_BYTES` and the whole fetch is bounded by `FETCH_TIMEOUT`. HTML
becomes text through trafilatura (the ``web`` extra; without it an HTML page is refused
with the install line, `WEB_EXTRA_MISSING`); text types are returned as they are; other types are
described, not shown.

The fetch runs from the worker's machine, so it reaches whatever that machine reaches,
loopback and private addresses included.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from types import ModuleType
from urllib.parse import urljoin, urlsplit

import httpx

from sessionflow.kit import ToolExecutionError
from sessionflow_local_tools._text import cap_text, clean_text

__all__ = [
    "FETCH_TIMEOUT",
    "MAX_BODY_BYTES",
    "MAX_REDIRECTS",
    "MAX_TEXT_CHARS",
    "WEB_EXTRA_MISSING",
    "check_web_url",
    "fetch_web_page",
]

MAX_REDIRECTS = 5
MAX_URL_CHARS = 8192
_NOT_IN_URLS = re.compile(r"[\x00-\x20\x7f-\x9f\ud800-\udfff]")
MAX_BODY_BYTES = 2 * 1024 * 1024
MAX_TEXT_CHARS = 100_000
FETCH_TIMEOUT = 30.0
WEB_SCHEMES = frozenset({"http", "https"})
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/x-yaml",
        "application/yaml",
    }
)
_USER_AGENT = "sessionflow-fetch/0.1 (+https://github.com/sessionflow)"
WEB_EXTRA_MISSING = (
    "web_fetch needs trafilatura to read HTML pages, and it is not installed: "
    "pip install 'sessionflow-local-tools[web]'"
)


def check_web_url(url: str, what: str = "the URL") -> str:
    """``url`` if it is an absolute ``http``/``https`` URL with a host; else refuse.

    Control characters and spaces are refused anywhere in it (httpx would raise on a
    leading one, and a browser would drop them silently, fetching another URL).
    """
    url = url.strip(" ")
    if len(url) > MAX_URL_CHARS:
        raise ToolExecutionError(f"{what} is too long ({len(url)} characters; at most {MAX_URL_CHARS})")
    bad = _NOT_IN_URLS.search(url)
    if bad is not None:
        raise ToolExecutionError(
            f"{what} {clean_text(ascii(url))} holds a control character or space ({bad.group()!a}) at "
            f"{bad.start()}; encode it (%20 for a space) or leave it out"
        )
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises on a port out of range
    except ValueError as error:
        raise ToolExecutionError(f"{what} {url!r} is not a valid URL: {error}") from None
    if parts.scheme.lower() not in WEB_SCHEMES:
        shown = f"{parts.scheme}:" if parts.scheme else "no scheme"
        raise ToolExecutionError(
            f"{what} {url!r} is refused: only http and https URLs are allowed, not {shown}"
        )
    if not parts.hostname:
        raise ToolExecutionError(f"{what} {url!r} has no host")
    return url


@dataclass(frozen=True)
class _Page:
    url: str
    status: int
    media_type: str
    charset: str | None
    body: bytes
    truncated: bool


async def fetch_web_page(url: str) -> str:
    """Fetch ``url`` and return a short header and the page's readable text."""
    url = check_web_url(url)
    try:
        async with asyncio.timeout(FETCH_TIMEOUT):
            page = await _fetch(url)
    except TimeoutError:
        raise ToolExecutionError(f"fetching {url} took longer than {FETCH_TIMEOUT:g} s; gave up") from None
    except (httpx.HTTPError, httpx.InvalidURL, httpx.CookieConflict, UnicodeError, ValueError) as error:
        # InvalidURL is not an HTTPError; an odd host may fail IDNA encoding (UnicodeError).
        raise ToolExecutionError(f"fetching {url} failed: {type(error).__name__}: {error}") from None
    return await asyncio.to_thread(_render, page)  # extraction is CPU work; keep the loop free


async def _fetch(url: str) -> _Page:
    headers = {
        "User-Agent": _USER_AGENT,
        "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
    }
    async with httpx.AsyncClient(follow_redirects=False, timeout=FETCH_TIMEOUT, headers=headers) as client:
        current = url
        for _ in range(MAX_REDIRECTS + 1):
            async with client.stream("GET", current) as response:
                if response.is_redirect:
                    location = response.headers.get("location", "")
                    if not location:
                        raise ToolExecutionError(
                            f"{current} answered {response.status_code} without a Location"
                        )
                    current = check_web_url(urljoin(current, location), "a redirect to")
                    continue
                body, truncated = await _read_capped(response)
                media_type, charset = _content_type(response.headers.get("content-type", ""))
                return _Page(str(response.url), response.status_code, media_type, charset, body, truncated)
    raise ToolExecutionError(f"{url} redirected more than {MAX_REDIRECTS} times; gave up")


async def _read_capped(response: httpx.Response) -> tuple[bytes, bool]:
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            return bytes(body[:MAX_BODY_BYTES]), True
    return bytes(body), False


def _content_type(header: str) -> tuple[str, str | None]:
    media_type, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"')
    return media_type.strip().lower(), charset


def _render(page: _Page) -> str:
    header = [f"URL: {page.url}", f"Status: {page.status}", f"Content-Type: {page.media_type or 'unknown'}"]
    if page.truncated:
        header.append(f"[body truncated: only the first {MAX_BODY_BYTES} bytes were read]")
    if page.media_type in _HTML_TYPES or (not page.media_type and page.body.lstrip()[:1] == b"<"):
        text = _html_text(page)
    elif (
        page.media_type.startswith("text/")
        or page.media_type in _TEXT_TYPES
        or page.media_type.endswith("+json")
    ):
        text = _decode(page.body, page.charset)
    else:
        kind = page.media_type or "an unknown type"
        return "\n".join([*header, "", f"[{len(page.body)} bytes of {kind}; not text, so not shown]"])
    return "\n".join([*header, "", cap_text(text.strip(), MAX_TEXT_CHARS, "page text")])


def _trafilatura() -> ModuleType:
    """trafilatura, imported on first use (it is slow to import), or the install line."""
    try:
        import trafilatura
    except ImportError:
        # An optional extra: the core and the adapters do not carry its ~15 dependencies.
        raise ToolExecutionError(WEB_EXTRA_MISSING) from None
    return trafilatura


def _html_text(page: _Page) -> str:
    trafilatura = _trafilatura()
    html = _decode(page.body, page.charset)
    extracted = trafilatura.extract(
        html, url=page.url, output_format="markdown", include_links=True, with_metadata=False
    )
    title = _title(html)
    if not extracted:
        extracted = trafilatura.html2txt(html)
    return f"# {title}\n\n{extracted}" if title and not extracted.lstrip().startswith("#") else extracted


def _title(html: str) -> str | None:
    trafilatura = _trafilatura()
    try:
        # Typed as always returning a Document, but a page without metadata gives None.
        title: object = getattr(trafilatura.extract_metadata(html), "title", None)
    except Exception:  # metadata is a nicety; a page without it still has text
        return None
    return title if isinstance(title, str) and title else None


def _decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", "replace")
    except LookupError:
        return body.decode("utf-8", "replace")
