"""The payload store under a payload codec: no object in the store is plaintext.

Temporal's data converter applies the codec before External Storage, so the payloads the
SDK offloads arrive here encrypted already. The bodies sessionflow keeps by reference
(messages, tool outputs, run states, images: `sessionflow.temporal.storage._bodies`) go to the
driver directly, past the converter; this driver encodes those on their way in.

On the way out it decodes once. A body comes back as it was put. An offloaded payload,
encrypted once by the converter (this driver does not encrypt it again), comes back
decrypted, and the converter's codec then reads it as the plaintext payload it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    PayloadCodec,
    StorageDriver,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
)

from sessionflow.temporal.storage._encryption import EncryptionCodec, is_encrypted

__all__ = ["SealedStorageDriver"]


class SealedStorageDriver(StorageDriver):
    """`inner` with every object encoded by `codec`; keeps `inner`'s name, so claims stay valid."""

    def __init__(self, inner: StorageDriver, codec: PayloadCodec) -> None:
        self.inner = inner
        self.codec = codec

    def name(self) -> str:
        return self.inner.name()

    def type(self) -> str:
        return self.inner.type()

    def describe(self) -> str:
        describe = getattr(self.inner, "describe", None)
        return str(describe()) if callable(describe) else self.inner.name()

    async def store(
        self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
    ) -> list[StorageDriverClaim]:
        sealed = list(payloads)
        if isinstance(self.codec, EncryptionCodec):
            # An offloaded payload is encrypted already: once is enough.
            plain = [i for i, p in enumerate(sealed) if not is_encrypted(p)]
            for i, encoded in zip(plain, await self.codec.encode([sealed[i] for i in plain]), strict=True):
                sealed[i] = encoded
        else:
            # Another codec cannot tell its own output: encode all, decode all on the way out.
            sealed = await self.codec.encode(sealed)
        return await self.inner.store(context, sealed)

    async def retrieve(
        self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]
    ) -> list[Payload]:
        objects = await self.inner.retrieve(context, claims)
        if isinstance(self.codec, EncryptionCodec):
            # Strict mode refuses an object that is not encrypted here, where it is read.
            return self.codec.decode_stored(objects, where=self.describe())
        return await self.codec.decode(objects)
