"""A model step's failure that carries the provider's `Retry-After` sets its next retry delay."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from datetime import timedelta

from temporalio.exceptions import ApplicationError

from sessionflow.session.errors import SessionError
from sessionflow.temporal.activities._retry_after import provider_retry_delay

__all__ = ["retry_when_provider_says"]


@contextmanager
def retry_when_provider_says() -> Generator[None]:
    """Report a failed model call whose cause is a 429/503 with `Retry-After` as an
    `ApplicationError` with that ``next_retry_delay``: the server waits as long as the
    provider asked instead of the step's fixed backoff.

    The failure keeps the error's class name as its type and its text as its message, as
    the SDK would have reported the error itself, and gets the delay. An error that is
    not retryable (its class says so, or it already is an `ApplicationError`) goes unchanged.
    """
    try:
        yield
    except ApplicationError:
        raise
    except Exception as error:
        if isinstance(error, SessionError) and not error.retryable:
            raise
        delay = provider_retry_delay(error)
        if delay is None:
            raise
        failure = ApplicationError(
            str(error), type=type(error).__name__, next_retry_delay=timedelta(seconds=delay)
        )
        # Without the framework's trace and cause chain: deep ones (pydantic-ai's, the Agents
        # SDK's) pass the server's size limit for an attempt's failure, and the history would
        # keep a truncated failure without its delay. The type and message say what happened.
        raise failure from None
