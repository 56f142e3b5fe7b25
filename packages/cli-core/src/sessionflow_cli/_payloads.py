"""The payload store a command uses, checked when it starts: a store it cannot use exits 2.

A store that fails later fails a step, and the step retries until it comes back; a store
that is wrong from the start (no S3 extra, an endpoint that does not answer, a bucket that
is missing, a folder that cannot be written) would only make every turn wait, so the
command stops at once and says why.
"""

from __future__ import annotations

import asyncio

from sessionflow import PayloadStoreError
from sessionflow.temporal import EncryptionKeyError, PayloadStore, encryption_codec_from_environment
from sessionflow_cli._errors import UsageError

__all__ = ["PROBE_TIMEOUT", "open_payload_store"]

PROBE_TIMEOUT = 15.0
"""Seconds the start-up check of an S3 store may take (connect timeouts and retries included)."""


async def open_payload_store(configured: PayloadStore | None) -> PayloadStore:
    """`configured` (else the store of the environment), checked to be usable.

    Raises:
        UsageError: The store cannot be used; the message names it and the cause.
    """
    try:
        store = configured or PayloadStore.from_environment()
    except ValueError as error:
        raise UsageError(f"payload store: {error}") from None
    try:
        # A malformed key ring stops the command here, not at its first payload.
        encryption_codec_from_environment()
    except (EncryptionKeyError, ImportError) as error:
        raise UsageError(f"encryption keys: {error}") from None
    try:
        store.driver()
    except ImportError as error:
        raise UsageError(f"payload store {store.describe()}: {error}") from None
    try:
        await asyncio.wait_for(store.probe(), PROBE_TIMEOUT)
    except TimeoutError:
        raise UsageError(
            f"payload store {store.describe()} did not answer within {PROBE_TIMEOUT:g} s"
        ) from None
    except PayloadStoreError as error:
        raise UsageError(str(error)) from None
    return store
