"""A Temporal External Storage driver that keeps payloads in a local folder.

Objects are content-addressed and grouped by session, so clean-up can remove one stopped
session's objects without reading any of them:

    <root>/<namespace>/<session>/<sha256[:2]>/<sha256>

A write goes to a temporary name in the same folder, is fsynced, and is renamed into place,
so a reader (or a worker that was SIGKILLed mid-write) never sees a partial object.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    StorageDriver,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
)

from sessionflow.home import open_private, private_dir
from sessionflow.temporal.storage._store_errors import PayloadStoreError

__all__ = ["LOCAL_DRIVER_NAME", "SHARED_SCOPE", "LocalFolderDriver", "scope_name"]

LOCAL_DRIVER_NAME = "sessionflow.local"
SHARED_SCOPE = "_shared"
"""Folder of payloads stored outside any session (none today; kept out of clean-up)."""
_TEMP_PREFIX = ".tmp-"


def scope_name(value: str) -> str:
    """A file-system-safe folder name for a namespace or session ID, stable and reversible."""
    quoted = quote(value, safe="")
    if quoted.startswith(".") or quoted == SHARED_SCOPE:
        quoted = "%2E" + quoted[1:] if quoted.startswith(".") else "%5F" + quoted[1:]
    return quoted if len(quoted) <= 200 else "sha256-" + hashlib.sha256(value.encode()).hexdigest()


def _relative_path(key: str) -> str:
    """`<namespace>/<session>/<sha256>` on disk: a two-letter fan-out keeps folders small."""
    folder, digest = key.rsplit("/", 1)
    return f"{folder}/{digest[:2]}/{digest}"


class LocalFolderDriver(StorageDriver):
    """Payloads in a folder on this machine: the embedded default, for one machine."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser()

    def name(self) -> str:
        return LOCAL_DRIVER_NAME

    def type(self) -> str:
        return LOCAL_DRIVER_NAME

    def describe(self) -> str:
        return f"local folder {self.root}"

    async def store(
        self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
    ) -> list[StorageDriverClaim]:
        target = context.target
        namespace = scope_name(target.namespace) if target is not None else "_none"
        session = scope_name(target.id) if target is not None and target.id else SHARED_SCOPE
        folder = f"{namespace}/{session}"
        blobs = [payload.SerializeToString() for payload in payloads]
        session_id = target.id if target is not None and session.startswith("sha256-") else None
        # File I/O runs in a thread: a slow disk must not stall the worker's event loop.
        return await asyncio.to_thread(self._write_all, folder, blobs, session_id)

    def _write_all(self, folder: str, blobs: list[bytes], session_id: str | None) -> list[StorageDriverClaim]:
        claims = [self._write(folder, blob) for blob in blobs]
        marker = self.root / folder / ".session-id"
        if session_id is not None and not marker.exists():
            # A hashed folder name cannot be read back: clean-up finds the session here.
            temporary = marker.with_name(f"{_TEMP_PREFIX}{uuid.uuid4().hex}")
            with os.fdopen(open_private(temporary), "w") as file:
                file.write(session_id)
            os.replace(temporary, marker)
        return claims

    def _write(self, folder: str, blob: bytes) -> StorageDriverClaim:
        digest = hashlib.sha256(blob).hexdigest()
        relative = _relative_path(f"{folder}/{digest}")
        path = self.root / relative
        # The claim is the key alone (its last part is the digest): it travels in every
        # history event that refers to the body, so it is kept short.
        claim = StorageDriverClaim(claim_data={"key": f"{folder}/{digest}"})
        if path.is_file() and path.stat().st_size == len(blob):
            return claim  # content-addressed: the same bytes are already there
        try:
            private_dir(path.parent, root=self.root)
            temporary = path.parent / f"{_TEMP_PREFIX}{uuid.uuid4().hex}"
            try:
                with os.fdopen(open_private(temporary), "wb") as handle:
                    handle.write(blob)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(temporary, path)
            finally:
                temporary.unlink(missing_ok=True)
            directory = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)
        except OSError as error:
            raise PayloadStoreError(self.describe(), f"cannot write {relative}", error) from None
        return claim

    async def retrieve(
        self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]
    ) -> list[Payload]:
        return await asyncio.to_thread(self._read_all, list(claims))

    def _read_all(self, claims: list[StorageDriverClaim]) -> list[Payload]:
        return [self._read(claim) for claim in claims]

    def _read(self, claim: StorageDriverClaim) -> Payload:
        key = claim.claim_data.get("key", "")
        expected = key.rsplit("/", 1)[-1]
        relative = _relative_path(key) if key.count("/") == 2 else ""
        path = (self.root / relative).resolve() if relative else self.root
        if not relative or not path.is_relative_to(self.root.resolve()) or len(expected) != 64:
            raise PayloadStoreError(self.describe(), f"refuses the claim {key!r}")
        try:
            blob = path.read_bytes()
        except OSError as error:
            raise PayloadStoreError(self.describe(), f"cannot read {relative}", error) from None
        if hashlib.sha256(blob).hexdigest() != expected:
            raise PayloadStoreError(self.describe(), f"object {relative} does not match its digest")
        payload = Payload()
        payload.ParseFromString(blob)
        return payload
