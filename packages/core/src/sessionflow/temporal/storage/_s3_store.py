"""The S3 payload store: the SDK's `S3StorageDriver` over an aioboto3 client of our own.

Our client adds the store's key prefix and opens its aioboto3 connection lazily, once per
event loop, so one `PayloadStore` setting serves a client, a worker and the CLI alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from temporalio.contrib.aws.s3driver import S3StorageDriver, S3StorageDriverClient

if TYPE_CHECKING:
    from sessionflow.temporal.storage._payload_store import PayloadStore

__all__ = ["S3_DRIVER_NAME", "PrefixedS3Client", "S3RequestError", "probe_s3_store", "s3_client", "s3_driver"]

S3_DRIVER_NAME = "sessionflow.s3"


def _missing_extra() -> ImportError:
    return ImportError('the S3 payload store needs aioboto3: pip install "sessionflow[s3]"')


class S3RequestError(Exception):
    """One S3 request that failed, told in one line: operation, store and cause.

    botocore's errors chain through aiohttp's, and their tracebacks run to several KB. The
    Temporal server replaces a retryable activity failure over 4 KB (its default
    ``limit.mutableState.activityFailureSize.error``) with "Failure exceeds size limit.", so
    the step's failure would lose the store's name and the cause; one short error keeps both.
    """


class PrefixedS3Client(S3StorageDriverClient):
    """aioboto3 S3 operations under a key prefix, path-style when an endpoint is given."""

    def __init__(self, *, bucket: str, prefix: str, endpoint: str | None, region: str | None) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.endpoint = endpoint
        self.region = region
        self._clients: dict[asyncio.AbstractEventLoop, tuple[AsyncExitStack, Any]] = {}

    async def client(self) -> Any:
        """The aioboto3 client of the running loop (opened on first use)."""
        loop = asyncio.get_running_loop()
        entry = self._clients.get(loop)
        if entry is None:
            try:
                import aioboto3
                from botocore.config import Config
            except ImportError:
                raise _missing_extra() from None
            # Short connect timeouts and few retries: a store that is down fails the step,
            # and the step's own retry policy waits, instead of one call hanging for minutes.
            config = Config(
                connect_timeout=5,
                read_timeout=60,
                retries={"max_attempts": 2, "mode": "standard"},
                s3={"addressing_style": "path" if self.endpoint else "auto"},
            )
            stack = AsyncExitStack()
            session: Any = aioboto3.Session()
            client = await stack.enter_async_context(
                session.client("s3", endpoint_url=self.endpoint, region_name=self.region, config=config)
            )
            entry = (stack, client)
            self._clients[loop] = entry
        return entry[1]

    def _key(self, key: str) -> str:
        return f"{self.prefix}{key}"

    def _failed(self, operation: str, bucket: str, error: Exception) -> S3RequestError:
        # Not the key or the endpoint: the driver's own error and botocore's name them already.
        return S3RequestError(f"{operation} s3://{bucket}/{self.prefix}: {type(error).__name__}: {error}")

    async def put_object(self, *, bucket: str, key: str, data: bytes) -> None:
        client = await self.client()
        try:
            await client.put_object(Bucket=bucket, Key=self._key(key), Body=data)
        except Exception as error:
            raise self._failed("PutObject", bucket, error) from None

    async def object_exists(self, *, bucket: str, key: str) -> bool:
        client = await self.client()
        try:
            await client.head_object(Bucket=bucket, Key=self._key(key))
        except Exception as error:
            status = getattr(error, "response", {}).get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status == 404:
                return False
            raise self._failed("HeadObject", bucket, error) from None
        return True

    async def get_object(self, *, bucket: str, key: str) -> bytes:
        client = await self.client()
        try:
            response = await client.get_object(Bucket=bucket, Key=self._key(key))
            async with response["Body"] as body:
                return await body.read()
        except Exception as error:
            raise self._failed("GetObject", bucket, error) from None

    async def probe(self) -> None:
        """Check the bucket answers (HeadBucket); raises `S3RequestError` with the cause."""
        client = await self.client()
        try:
            await client.head_bucket(Bucket=self.bucket)
        except Exception as error:
            raise self._failed("HeadBucket", self.bucket, error) from None

    def describe(self) -> Mapping[str, str]:
        described = {"store": f"s3://{self.bucket}/{self.prefix}"}
        if self.endpoint:
            described["endpoint"] = self.endpoint
        return described

    async def aclose(self) -> None:
        for stack, _ in list(self._clients.values()):
            await stack.aclose()
        self._clients.clear()


def s3_client(store: PayloadStore) -> PrefixedS3Client:
    parsed = urlparse(store.location)
    return PrefixedS3Client(
        bucket=parsed.netloc, prefix=parsed.path, endpoint=store.endpoint, region=store.region
    )


async def probe_s3_store(store: PayloadStore) -> None:
    """Raise `S3RequestError` unless the store's bucket answers (for a command's start)."""
    client = s3_client(store)
    try:
        await client.probe()
    finally:
        await client.aclose()


def s3_driver(store: PayloadStore) -> S3StorageDriver:
    # Import aioboto3 when the converter is built (worker or client start), not on the first
    # store: the import takes seconds on a busy machine and would block the event loop, and
    # so the heartbeats, of whichever step stores first. A missing extra then fails at start.
    try:
        import aioboto3  # noqa: F401  # pyright: ignore[reportUnusedImport]
        import botocore.config  # noqa: F401  # pyright: ignore[reportUnusedImport]
    except ImportError:
        raise _missing_extra() from None
    parsed = urlparse(store.location)
    return S3StorageDriver(
        client=s3_client(store), bucket=parsed.netloc, driver_name=S3_DRIVER_NAME, max_payload_size=1 << 30
    )
