"""Telemetry switches and the UI's text, without a server: env vars, the missing extra, summaries."""

from __future__ import annotations

import pytest

from sessionflow.temporal import _telemetry
from sessionflow.temporal._search_attributes import (
    dev_server_arguments,
    registration_command,
    visibility_query,
)
from sessionflow.temporal._summaries import (
    MAX_SUMMARY_CHARS,
    model_name_of,
    model_summary,
    session_details,
    tool_summary,
)
from sessionflow.temporal._telemetry import TRACING_ENV, step_span, tracing_enabled
from sessionflow.temporal.client._runtimes import METRICS_ADDRESS_ENV, client_runtime, resolve_metrics_address


def test_tracing_and_metrics_switch_on_by_parameter_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TRACING_ENV, raising=False)
    monkeypatch.delenv(METRICS_ADDRESS_ENV, raising=False)
    assert not tracing_enabled(None)
    assert resolve_metrics_address(None) is None
    monkeypatch.setenv(TRACING_ENV, "1")
    monkeypatch.setenv(METRICS_ADDRESS_ENV, "127.0.0.1:9464")
    assert tracing_enabled(None)
    assert not tracing_enabled(False)  # the parameter wins
    assert resolve_metrics_address(None) == "127.0.0.1:9464"
    assert resolve_metrics_address("") is None


def test_without_opentelemetry_spans_do_nothing_and_tracing_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_telemetry, "otel_installed", lambda: False)
    with step_span("chat gpt-4.1-mini", {"gen_ai.request.model": "gpt-4.1-mini"}) as span:
        span.set({"sessionflow.step.outcome": "completed"})  # a no-op, no error
    with pytest.raises(ImportError, match=r'pip install "sessionflow\[otel\]"'):
        _telemetry.tracing_interceptor()


def test_a_bad_metrics_address_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="cannot serve metrics on 'not an address'"):
        client_runtime("not an address")


def test_summaries_are_one_short_line() -> None:
    assert model_summary(2, "gpt-4.1-mini") == "model call 2 (gpt-4.1-mini)"
    assert model_summary(1, None) == "model call 1"
    assert model_name_of({"model": "gpt-4.1"}, "gpt-4.1-mini") == "gpt-4.1"
    assert model_name_of({}, "gpt-4.1-mini") == "gpt-4.1-mini"
    assert tool_summary("lookup", '{"q":\n 1}') == 'lookup {"q": 1}'
    huge = tool_summary("publish", '{"text": "' + "x" * 5_000_000 + '"}')
    assert huge.startswith('publish {"text": "xxx') and huge.endswith("…") and len(huge) <= MAX_SUMMARY_CHARS
    assert len(huge) < 100  # arguments get a short head only
    assert (
        session_details(stopped=False, turn_active=False, turn_count=0, waiting_for=[])
        == "idle after 0 turns"
    )
    assert session_details(stopped=False, turn_active=True, turn_count=3, waiting_for=[]) == "running turn 3"
    assert (
        session_details(stopped=False, turn_active=True, turn_count=3, waiting_for=["pay", "mail", "pay"])
        == "turn 3: waiting for approval of mail, pay"
    )
    assert (
        session_details(stopped=True, turn_active=False, turn_count=1, waiting_for=[])
        == "stopped after 1 turn"
    )


def test_search_attribute_commands_and_queries() -> None:
    assert dev_server_arguments()[:2] == ["--search-attribute", "SessionflowFlowType=Keyword"]
    assert (
        "--search-attribute" in dev_server_arguments()
        and "SessionflowLastActivity=Datetime" in dev_server_arguments()
    )
    assert registration_command("prod") == (
        "temporal operator search-attribute create --namespace prod "
        "--name SessionflowFlowType --type Keyword --name SessionflowStatus --type Keyword "
        "--name SessionflowUser --type Keyword --name SessionflowLastActivity --type Datetime"
    )
    assert visibility_query("f", state="idle", user='a"b') == (
        'SessionflowFlowType = "f" AND SessionflowStatus = "idle" AND SessionflowUser = "a\\"b"'
    )
    with pytest.raises(ValueError):
        visibility_query("f", state="asleep")
