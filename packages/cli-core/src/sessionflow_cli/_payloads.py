"""The payload store a command uses, checked when it starts: a store it cannot use exits 2.

A store that fails later fails a step, and the step retries until it comes back; a store
that is wrong from the start (no S3 extra, an endpoint that does not answer, a bucket that
is missing, a folder that cannot be written) would only make every turn wait, so the
command stops at once and says why.
"""

from __future__ import annotations

import asyncio
import tempfile

from sessionflow.temporal import PayloadStore
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
        store.driver()
    except ImportError as error:
        raise UsageError(f"payload store {store.describe()}: {error}") from None
    try:
        if store.is_s3:
            await asyncio.wait_for(_probe_s3(store), PROBE_TIMEOUT)
        else:
            _probe_folder(store)
    except TimeoutError:
        raise UsageError(f"payload store {store.describe()} did not answer within {PROBE_TIMEOUT:g} s") from None
    except (OSError, RuntimeError) as error:
        raise UsageError(f"payload store {store.describe()} cannot be used: {error}") from None
    return store


async def _probe_s3(store: PayloadStore) -> None:
    from sessionflow.temporal._s3_store import S3RequestError, probe_s3_store

    try:
        await probe_s3_store(store)
    except S3RequestError as error:
        raise RuntimeError(str(error)) from None


def _probe_folder(store: PayloadStore) -> None:
    store.folder.mkdir(parents=True, exist_ok=True)
    # Writable, not just present: a read-only folder would fail the first step that stores.
    with tempfile.NamedTemporaryFile(dir=store.folder, prefix=".probe-"):
        pass
