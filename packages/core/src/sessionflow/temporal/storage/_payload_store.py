"""The payload store: where large payloads, message bodies, tool outputs and images live.

One setting builds one data converter for client, worker, CLI and test kit. It uses
Temporal's own External Storage: any payload at or above `threshold` bytes leaves the
history and is kept in the store, with a small reference in its place. The same store
holds the bodies the session keeps by reference (see `sessionflow.session.bodies`).

- A folder (the embedded default, ``~/.sessionflow/payloads``): our `LocalFolderDriver`.
- ``s3://bucket/prefix``: the SDK's S3 driver (``pip install "sessionflow[s3]"``), with
  path-style addressing when an `endpoint` is given (MinIO, moto, Ceph...).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias
from urllib.parse import urlparse

from temporalio.converter import (
    DataConverter,
    DefaultFailureConverterWithEncodedAttributes,
    ExternalStorage,
    PayloadCodec,
    StorageDriver,
)

from sessionflow._environment import read_env
from sessionflow.home import private_dir, sessionflow_home
from sessionflow.temporal.storage._compact_payloads import COMPACT_DATA_CONVERTER
from sessionflow.temporal.storage._local_driver import LocalFolderDriver
from sessionflow.temporal.storage._store_errors import PayloadStoreError

__all__ = [
    "DEFAULT_PAYLOAD_THRESHOLD",
    "PAYLOADS_ENV",
    "PAYLOAD_THRESHOLD_ENV",
    "CodecSetting",
    "PayloadStore",
    "PayloadStoreError",
    "build_data_converter",
    "default_payload_folder",
]

DEFAULT_PAYLOAD_THRESHOLD = 128 * 1024
"""Payloads this size or larger are stored by reference (Temporal's own default is 256 KiB;
a lower one keeps each history event small)."""
PAYLOADS_ENV = "SESSIONFLOW_PAYLOADS"
"""Environment variable with the default store location (a folder or ``s3://bucket/prefix``)."""
PAYLOAD_THRESHOLD_ENV = "SESSIONFLOW_PAYLOAD_THRESHOLD"
"""Environment variable with the default threshold in bytes (0 stores every payload by reference)."""
PAYLOADS_ENDPOINT_ENV = "SESSIONFLOW_PAYLOADS_ENDPOINT"
PAYLOADS_REGION_ENV = "SESSIONFLOW_PAYLOADS_REGION"

CodecSetting: TypeAlias = PayloadCodec | Literal["environment"] | None
"""A payload codec, None for none, or ``"environment"``: the encryption codec of the key ring
the environment names (`sessionflow.temporal.storage._encryption`), if it names one."""


def default_payload_folder() -> Path:
    """``$SESSIONFLOW_HOME/payloads``, else ``~/.sessionflow/payloads``."""
    return sessionflow_home() / "payloads"


@dataclass(frozen=True, kw_only=True)
class PayloadStore:
    """Where payloads go by reference.

    Attributes:
        location: A folder path (or ``file://`` URL), or ``s3://bucket/prefix``.
        endpoint: For S3: an S3-compatible endpoint URL, addressed path-style.
        region: For S3: the region (else the AWS configuration's).
        threshold: Payloads of this many bytes or more are stored by reference; 0 stores
            every payload so (a test setting that proves nothing depends on inline data).
    """

    location: str
    endpoint: str | None = None
    region: str | None = None
    threshold: int = DEFAULT_PAYLOAD_THRESHOLD

    def __post_init__(self) -> None:
        if self.threshold < 0:
            raise ValueError(f"payload threshold must be 0 or more bytes, got {self.threshold!r}")
        if not self.location.strip():
            raise ValueError("payload store location is empty")
        scheme = urlparse(self.location).scheme
        if scheme not in ("", "file", "s3") and not _is_windows_drive(self.location):
            raise ValueError(f"payload store {self.location!r}: use a folder or s3://bucket/prefix")
        if scheme == "s3" and not urlparse(self.location).netloc:
            raise ValueError(f"payload store {self.location!r} names no bucket")

    @staticmethod
    def from_environment(environ: Mapping[str, str] | None = None) -> PayloadStore:
        """The store named by ``$SESSIONFLOW_PAYLOADS`` (else the default folder)."""
        env = os.environ if environ is None else environ
        threshold_text = read_env(PAYLOAD_THRESHOLD_ENV, environ=env)
        try:
            threshold = int(threshold_text) if threshold_text else DEFAULT_PAYLOAD_THRESHOLD
        except ValueError:
            raise ValueError(f"{PAYLOAD_THRESHOLD_ENV}={threshold_text!r} is not a number of bytes") from None
        return PayloadStore(
            location=read_env(PAYLOADS_ENV, environ=env) or str(default_payload_folder()),
            endpoint=read_env(PAYLOADS_ENDPOINT_ENV, environ=env) or None,
            region=read_env(PAYLOADS_REGION_ENV, environ=env) or None,
            threshold=threshold,
        )

    def environment(self) -> dict[str, str]:
        """The environment variables that make `from_environment` build this store (for child processes)."""
        env = {PAYLOADS_ENV: self.location, PAYLOAD_THRESHOLD_ENV: str(self.threshold)}
        if self.endpoint:
            env[PAYLOADS_ENDPOINT_ENV] = self.endpoint
        if self.region:
            env[PAYLOADS_REGION_ENV] = self.region
        return env

    @property
    def is_s3(self) -> bool:
        return urlparse(self.location).scheme == "s3"

    @property
    def folder(self) -> Path:
        """The folder of a local store."""
        parsed = urlparse(self.location)
        return Path(parsed.path if parsed.scheme == "file" else self.location).expanduser()

    def describe(self) -> str:
        if self.is_s3:
            return f"{self.location}" + (f" at {self.endpoint}" if self.endpoint else "")
        return f"local folder {self.folder}"

    async def probe(self) -> None:
        """Check that the store can be used now (a bucket that answers, a folder that takes a
        file); raises `PayloadStoreError` naming the store and the cause."""
        if self.is_s3:
            from sessionflow.temporal.storage._s3_store import S3RequestError, probe_s3_store

            try:
                await probe_s3_store(self)
            except S3RequestError as error:
                raise PayloadStoreError(self.describe(), "does not answer", error) from None
            return
        try:
            await asyncio.to_thread(_probe_folder, self.folder)
        except OSError as error:
            raise PayloadStoreError(self.describe(), "cannot be written", error) from None

    def driver(self) -> StorageDriver:
        """The External Storage driver for this store (builds an S3 client for S3)."""
        if not self.is_s3:
            return LocalFolderDriver(self.folder)
        from sessionflow.temporal.storage._s3_store import s3_driver

        return s3_driver(self)


def _probe_folder(folder: Path) -> None:
    private_dir(folder)
    # Writable, not just present: a read-only folder would fail the first step that stores.
    with tempfile.NamedTemporaryFile(dir=folder, prefix=".tmp-probe-"):
        pass


def _is_windows_drive(location: str) -> bool:
    return len(location) > 2 and location[1] == ":" and location[0].isalpha()


def build_data_converter(
    store: PayloadStore | None, base: DataConverter | None = None, *, codec: CodecSetting = "environment"
) -> DataConverter:
    """`base` with External Storage on `store` (None: no store), under `codec`.

    `base` is by default Temporal's converter with compact dataclass JSON
    (`sessionflow.temporal.storage._compact_payloads`), which any Temporal converter reads.

    `codec` (by default the encryption codec ``$SESSIONFLOW_ENCRYPTION_KEYS`` or
    ``$SESSIONFLOW_ENCRYPTION_KEYS_FILE`` names, else none) encodes every payload, failure
    messages too, and every object put in the store, including the bodies sessionflow keeps
    there by reference. Raises `EncryptionKeyError` for a malformed key ring.
    """
    converter = base or COMPACT_DATA_CONVERTER
    if codec == "environment":
        codec = converter.payload_codec or _environment_codec()
    if codec is not None:
        # Failure messages and stack traces go into an encoded payload too: a tool's error
        # can quote what it read.
        converter = dataclasses.replace(
            converter,
            payload_codec=codec,
            failure_converter_class=DefaultFailureConverterWithEncodedAttributes,
        )
    if store is None:
        return converter
    driver = store.driver()
    if codec is not None:
        from sessionflow.temporal.storage._sealed_store import SealedStorageDriver

        driver = SealedStorageDriver(driver, codec)
    return dataclasses.replace(
        converter,
        external_storage=ExternalStorage(drivers=[driver], payload_size_threshold=store.threshold),
    )


def _environment_codec() -> PayloadCodec | None:
    from sessionflow.temporal.storage._encryption import encryption_codec_from_environment

    return encryption_codec_from_environment()
