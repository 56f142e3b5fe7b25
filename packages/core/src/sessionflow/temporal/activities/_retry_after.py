"""How long a provider asked us to wait: `Retry-After` on a 429 or 503, read from an error.

Pure: no I/O and no framework import. The model step reads the delay from whatever the
framework raised, duck-typed along the exception's ``__cause__``/``__context__`` chain:

- openai and anthropic errors (also what langchain-openai and the OpenAI Agents SDK let
  through) carry ``.response``, an ``httpx.Response`` with ``.status_code`` and ``.headers``;
- pydantic-ai's ``ModelHTTPError`` has ``.status_code`` and ``.headers`` (a dict, or None);
- the built-in runner's ``ModelHTTPError`` has ``.status`` and ``.headers``.

A header value is untrusted input: negative, non-finite, unparsable or past values give
no delay (the step falls back to its normal backoff), and a huge one is capped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, cast

__all__ = [
    "MAX_RETRY_AFTER_SECONDS",
    "RETRY_AFTER_STATUSES",
    "parse_retry_after",
    "parse_retry_after_ms",
    "provider_retry_delay",
    "retry_after_from_headers",
]

MAX_RETRY_AFTER_SECONDS = 300.0
"""The longest wait a provider's header can ask for; a longer one is cut to this.

Five minutes: longer than the rate-limit windows OpenAI and Anthropic announce, shorter
than a model step's default start-to-close (15 min) and schedule-to-close (30 min), so a
wrong or hostile header cannot park a session for hours."""

RETRY_AFTER_STATUSES = frozenset({429, 503, 529})
"""Statuses whose `Retry-After` is honoured: rate limited, unavailable, and Anthropic's
"overloaded" (529), which it sends instead of a 503."""

_MAX_CHAIN = 16
"""Exceptions read along one chain: enough for any framework's wrapping, bounded on a cycle."""

_NUMBER = re.compile(r"[0-9]{1,20}(?:\.[0-9]{1,9})?")
"""Delay-seconds as RFC 9110 has them (digits), with the fraction ``retry-after-ms`` may carry."""

_MAX_HEADER_CHARS = 64
"""A longer header value is garbage (an HTTP-date has 29 characters)."""


def parse_retry_after(value: str, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` value: delay-seconds or an HTTP-date.

    Returns None for a value that gives no usable delay: empty, garbage, zero, negative,
    NaN or infinite, or a date not in the future (the step keeps its normal backoff: a
    zero would have every worker hammer an overloaded provider at once). A delay over `MAX_RETRY_AFTER_SECONDS`
    is capped to it. ``now`` (aware) is when the header was read; the clock by default.
    """
    text = value.strip()
    if not text or len(text) > _MAX_HEADER_CHARS:
        return None
    if _NUMBER.fullmatch(text) is None:
        return _seconds_until(text, now)
    return _bounded(float(text))


def parse_retry_after_ms(value: str) -> float | None:
    """Seconds to wait from OpenAI's ``retry-after-ms`` (milliseconds, may be fractional)."""
    text = value.strip()
    if not text or len(text) > _MAX_HEADER_CHARS:
        return None
    if _NUMBER.fullmatch(text) is None:
        return None
    return _bounded(float(text) / 1000.0)


def retry_after_from_headers(headers: Any, *, now: datetime | None = None) -> float | None:
    """The delay response headers ask for: ``retry-after-ms`` first, then ``retry-after``.

    ``headers`` is anything with ``.get`` (``httpx.Headers`` is case-insensitive) or a mapping
    whose names may have any case; anything else gives None.
    """
    millis = _header(headers, "retry-after-ms")
    if millis is not None:
        delay = parse_retry_after_ms(millis)
        if delay is not None:
            return delay
    seconds = _header(headers, "retry-after")
    return parse_retry_after(seconds, now=now) if seconds is not None else None


def provider_retry_delay(error: BaseException, *, now: datetime | None = None) -> float | None:
    """The delay a 429/503 (or 529) provider answer asked for, found on ``error`` or its causes.

    The first exception of the chain that has both a status in `RETRY_AFTER_STATUSES` and a
    usable header decides. None when no such answer is found (the step keeps its backoff).
    """
    seen: set[int] = set()
    queue: list[BaseException] = [error]
    while queue and len(seen) < _MAX_CHAIN:
        current = queue.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        delay = _own_delay(current, now)
        if delay is not None:
            return delay
        queue += [e for e in (current.__cause__, current.__context__) if e is not None]
    return None


def _own_delay(error: BaseException, now: datetime | None) -> float | None:
    response = _attribute(error, "response")
    status = _status(error)
    if status is None and response is not None:
        status = _status(response)
    if status not in RETRY_AFTER_STATUSES:
        return None
    for headers in (_attribute(error, "headers"), _attribute(response, "headers") if response else None):
        if headers is not None:
            delay = retry_after_from_headers(headers, now=now)
            if delay is not None:
                return delay
    return None


def _attribute(value: Any, name: str) -> Any:
    """``value.name``, or None where reading it fails (some error classes raise on access)."""
    try:
        return getattr(value, name, None)
    except Exception:
        return None


def _status(value: Any) -> int | None:
    for name in ("status_code", "status"):
        status = _attribute(value, name)
        if isinstance(status, int) and not isinstance(status, bool):
            return status
    return None


def _header(headers: Any, name: str) -> str | None:
    getter = _attribute(headers, "get")
    if not callable(getter):
        return None
    try:
        found = getter(name)
        if found is None and isinstance(headers, Mapping):
            # A plain dict keeps the provider's casing: look the name up ignoring case.
            items = cast(Mapping[Any, Any], headers).items()
            found = next((v for k, v in items if isinstance(k, str) and k.lower() == name), None)
    except Exception:
        return None
    return found if isinstance(found, str) else None


def _bounded(seconds: float) -> float | None:
    if not math.isfinite(seconds) or seconds <= 0:
        return None
    return min(seconds, MAX_RETRY_AFTER_SECONDS)


def _seconds_until(text: str, now: datetime | None) -> float | None:
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)  # RFC 9110: an HTTP-date is in GMT
    seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return _bounded(seconds) if seconds > 0 else None
