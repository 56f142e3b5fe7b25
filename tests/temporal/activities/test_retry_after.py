"""`Retry-After` parsing and where the model step finds the header: pure, no engine."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionflow.builtin import ModelHTTPError
from sessionflow.temporal.activities._retry_after import (
    MAX_RETRY_AFTER_SECONDS,
    parse_retry_after,
    parse_retry_after_ms,
    provider_retry_delay,
    retry_after_from_headers,
)

NOW = datetime(2026, 12, 3, 6, 0, 0, tzinfo=UTC)


def http_date(moment: datetime) -> str:
    return format_datetime(moment, usegmt=True)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("3", 3.0),
        (" 3 ", 3.0),
        ("1.5", 1.5),
        ("120", 120.0),
        ("300", MAX_RETRY_AFTER_SECONDS),
        ("301", MAX_RETRY_AFTER_SECONDS),
        ("99999999999999999999", MAX_RETRY_AFTER_SECONDS),
        (http_date(NOW + timedelta(seconds=30)), 30.0),
        (http_date(NOW + timedelta(days=365)), MAX_RETRY_AFTER_SECONDS),
    ],
)
def test_usable_values(value: str, expected: float) -> None:
    assert parse_retry_after(value, now=NOW) == expected


@pytest.mark.parametrize(
    "value",
    [
        "",
        "   ",
        "0",
        "0.0",
        "-1",
        "-0.5",
        "+3",
        "NaN",
        "nan",
        "inf",
        "-inf",
        "Infinity",
        "1e400",
        "1e3",
        "1_000",
        "0x10",
        "3 seconds",
        "soon",
        "3;q=1",
        "\u0663",  # an Arabic-Indic three: a digit to str.isdigit, not to HTTP
        "9" * 100,  # longer than any header value we read
        http_date(NOW),  # now is not in the future
        http_date(NOW - timedelta(seconds=5)),
        "Thu, 01 Jan 1970 00:00:00 GMT",
        "Mon, 32 Foo 2026 99:99:99 GMT",
        "Thu, 03 Dec 2026",
    ],
)
def test_hostile_values_give_no_delay(value: str) -> None:
    assert parse_retry_after(value, now=NOW) is None


def test_milliseconds() -> None:
    assert parse_retry_after_ms("1500") == 1.5
    assert parse_retry_after_ms("0.5") == 0.0005
    assert parse_retry_after_ms("999999999999") == MAX_RETRY_AFTER_SECONDS
    for hostile in ("", "-1", "0", "NaN", "inf", "1e9", "later"):
        assert parse_retry_after_ms(hostile) is None


@given(st.text(max_size=80))
def test_any_text_gives_none_or_a_bounded_positive_delay(value: str) -> None:
    for delay in (parse_retry_after(value, now=NOW), parse_retry_after_ms(value)):
        assert delay is None or 0 < delay <= MAX_RETRY_AFTER_SECONDS


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_any_number_written_out_gives_none_or_a_bounded_positive_delay(number: float) -> None:
    delay = parse_retry_after(repr(number), now=NOW)
    assert delay is None or 0 < delay <= MAX_RETRY_AFTER_SECONDS
    if delay is not None:
        assert delay == min(number, MAX_RETRY_AFTER_SECONDS)


def test_headers_prefer_milliseconds_and_ignore_case() -> None:
    assert retry_after_from_headers(httpx.Headers({"Retry-After": "7", "Retry-After-Ms": "2500"})) == 2.5
    assert retry_after_from_headers({"Retry-After": "7"}) == 7.0
    assert retry_after_from_headers({"retry-after-ms": "garbage", "retry-after": "4"}) == 4.0
    assert retry_after_from_headers({}) is None
    assert retry_after_from_headers(None) is None
    assert retry_after_from_headers({"retry-after": 7}) is None  # not text: not a header


class Response:
    def __init__(self, status_code: int, headers: dict[str, str]) -> None:
        self.status_code = status_code
        self.headers = httpx.Headers(headers)


class SdkStatusError(Exception):
    """Shaped like openai's and anthropic's APIStatusError."""

    def __init__(self, status_code: int, headers: dict[str, str]) -> None:
        super().__init__(f"Error code: {status_code}")
        self.response = Response(status_code, headers)
        self.status_code = status_code


class PydanticAiShaped(Exception):
    """Shaped like pydantic-ai's ModelHTTPError: a status and lower-cased headers or None."""

    def __init__(self, status_code: int, headers: dict[str, str] | None) -> None:
        super().__init__(f"status_code: {status_code}")
        self.status_code = status_code
        self.headers = headers


class Hostile(Exception):
    """Attributes that raise when read."""

    @property
    def response(self) -> Any:
        raise RuntimeError("no")

    @property
    def status_code(self) -> Any:
        raise RuntimeError("no")


def test_errors_of_each_shape() -> None:
    assert provider_retry_delay(SdkStatusError(429, {"retry-after": "3"})) == 3.0
    assert provider_retry_delay(SdkStatusError(503, {"retry-after-ms": "1200"})) == 1.2
    assert provider_retry_delay(SdkStatusError(529, {"retry-after": "2"})) == 2.0
    assert provider_retry_delay(PydanticAiShaped(429, {"retry-after": "5"})) == 5.0
    assert provider_retry_delay(PydanticAiShaped(429, None)) is None
    assert provider_retry_delay(ModelHTTPError(503, "busy", {"Retry-After": "6"})) == 6.0
    # Not a rate limit or an overload: a Retry-After on a 500 or a 400 is not honoured.
    assert provider_retry_delay(SdkStatusError(500, {"retry-after": "3"})) is None
    assert provider_retry_delay(SdkStatusError(400, {"retry-after": "3"})) is None
    assert provider_retry_delay(SdkStatusError(429, {})) is None
    assert provider_retry_delay(Hostile()) is None
    assert provider_retry_delay(ValueError("plain")) is None


def test_the_builtin_error_keeps_only_retry_headers_and_pickles() -> None:
    import pickle

    error = ModelHTTPError(429, "slow down", {"Retry-After": "3", "Set-Cookie": "secret"})
    assert error.headers == {"retry-after": "3"}
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.status, copy.headers) == (429, {"retry-after": "3"})


def test_the_cause_chain_is_searched_and_a_cycle_ends() -> None:
    try:
        try:
            raise SdkStatusError(429, {"retry-after": "9"})
        except SdkStatusError as inner:
            raise RuntimeError("framework wrapper") from inner
    except RuntimeError as outer:
        assert provider_retry_delay(outer) == 9.0
    try:
        try:
            raise PydanticAiShaped(503, {"retry-after": "4"})
        except PydanticAiShaped:
            raise KeyError("raised while handling it")  # noqa: B904
    except KeyError as implicit:
        assert provider_retry_delay(implicit) == 4.0
    first, second = ValueError("a"), ValueError("b")
    first.__cause__, second.__cause__ = second, first
    assert provider_retry_delay(first) is None
