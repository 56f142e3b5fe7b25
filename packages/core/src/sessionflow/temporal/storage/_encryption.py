"""Encrypted payloads: an AES-256-GCM payload codec with a key ring (``sessionflow[encryption]``).

Every payload the client or a worker sends to Temporal (inputs, results, memos, activity
summaries, failure details) and every object it puts in the payload store is encrypted
with the ring's encoding key. Each encrypted payload names its key in its metadata, so a
ring that holds older keys too still reads what they wrote: that is key rotation.

Keys come from the environment, never from a config file of sessionflow's:

- ``SESSIONFLOW_ENCRYPTION_KEYS``: entries ``<key id>=<base64 of 32 random bytes>``,
  separated by commas or new lines;
- or ``SESSIONFLOW_ENCRYPTION_KEYS_FILE``: the path of a file with the same entries, one a
  line (``#`` starts a comment).

The first entry is the encoding key; every entry decodes. Payloads that are not encrypted
(written before encryption was switched on) are read as they are, so sessions that began
without encryption go on; unless strict mode is on (``SESSIONFLOW_ENCRYPTION_REQUIRED=1``,
or ``EncryptionCodec(ring, required=True)``): then a payload that is not encrypted is refused
wherever it is read (a workflow's input, an update, an activity's input, an object in the
payload store), with `PlaintextPayloadError`, and nothing runs on it.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from temporalio.api.common.v1 import Payload
from temporalio.converter import EncodingPayloadConverter, PayloadCodec

from sessionflow._environment import read_env
from sessionflow.session.errors import SessionRunError, UserError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = [
    "ENCRYPTED_ENCODING",
    "ENCRYPTION_KEYS_ENV",
    "ENCRYPTION_KEYS_FILE_ENV",
    "ENCRYPTION_REQUIRED_ENV",
    "KEY_ID_METADATA",
    "EncryptionCodec",
    "EncryptionKeyError",
    "KeyRing",
    "PayloadDecryptionError",
    "PlaintextPayloadError",
    "RefusedPlaintextConverter",
    "encryption_codec_from_environment",
    "generate_key_entry",
    "is_encrypted",
]

ENCRYPTION_KEYS_ENV = "SESSIONFLOW_ENCRYPTION_KEYS"
"""Environment variable with the key ring itself (``id=base64key`` entries, the first encodes)."""
ENCRYPTION_KEYS_FILE_ENV = "SESSIONFLOW_ENCRYPTION_KEYS_FILE"
"""Environment variable with the path of a key ring file (one ``id=base64key`` a line)."""
ENCRYPTION_REQUIRED_ENV = "SESSIONFLOW_ENCRYPTION_REQUIRED"
"""Environment variable: ``1`` (or ``true``, ``yes``) turns strict mode on: plaintext payloads are refused."""
REFUSED_ENCODING = b"binary/sessionflow-refused-plaintext"
"""What a strict codec turns a plaintext payload into: no payload converter reads it but
`RefusedPlaintextConverter`, which raises `PlaintextPayloadError`. The payload is not refused
in the codec itself: a codec error fails the whole workflow task, over and over, whereas a
payload that cannot be converted rejects just the update that carries it."""
_VOUCHED_LIMIT = 4096
"""Store objects a strict codec remembers having decrypted, until the converter reads them."""
ENCRYPTED_ENCODING = b"binary/encrypted"
"""The ``encoding`` metadata of an encrypted payload."""
KEY_ID_METADATA = "encryption-key-id"
"""The metadata entry that names the key an encrypted payload was written with."""
CIPHER_METADATA = "encryption-cipher"
_CIPHER = b"AES256-GCM"
_KEY_BYTES = 32
_NONCE_BYTES = 12
_TAG_BYTES = 16
_KEY_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
_THREAD_BYTES = 1 << 20
"""Payloads this large are encrypted in a thread, so the event loop (heartbeats, other
sessions' steps) never waits for one."""


class EncryptionKeyError(UserError, ValueError):
    """The key ring is malformed (raised when it is read, at start-up)."""


class PayloadDecryptionError(SessionRunError, RuntimeError):
    """An encrypted payload cannot be read: its key is not in the ring, or it fails authentication.

    The message names the key ID (never a key). It is deliberately not a non-retryable
    `ApplicationError`: a workflow task that hits it fails and is retried, so a worker with
    the wrong keys leaves the session as it was, and a worker with the right ones goes on.
    """

    def __init__(self, message: str, *, key_id: str) -> None:
        super().__init__(message)
        self.key_id = key_id

    def __reduce__(self) -> tuple[Any, ...]:
        return (_decryption_error, (self.message, self.key_id))


def _decryption_error(message: str, key_id: str) -> PayloadDecryptionError:
    return PayloadDecryptionError(message, key_id=key_id)


PLAINTEXT_REFUSED = (
    f"a payload is not encrypted, and strict encryption is on ({ENCRYPTION_REQUIRED_ENV}=1): "
    "it is refused. Only a client or worker with the session's encryption keys can send it"
)


class PlaintextPayloadError(SessionRunError, ValueError):
    """Strict encryption is on and a payload (or a payload store object) is not encrypted.

    A `ValueError`, not a `RuntimeError`: Temporal's payload converter passes it on as it
    is, so an update that carries such a payload is rejected with this message.
    """


class RefusedPlaintextConverter(EncodingPayloadConverter):
    """Reads what a strict `EncryptionCodec` made of a plaintext payload: raises `PlaintextPayloadError`."""

    @property
    def encoding(self) -> str:
        return REFUSED_ENCODING.decode()

    def to_payload(self, value: Any) -> Payload | None:
        return None

    def from_payload(self, payload: Payload, type_hint: type | None = None) -> Any:
        raise PlaintextPayloadError(PLAINTEXT_REFUSED)


def encryption_required(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``$SESSIONFLOW_ENCRYPTION_REQUIRED`` turns strict mode on."""
    env = os.environ if environ is None else environ
    value = read_env(ENCRYPTION_REQUIRED_ENV, "", environ=env).strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise EncryptionKeyError(f"{ENCRYPTION_REQUIRED_ENV}={value!r}: give 1 (strict) or 0")


@dataclass(frozen=True)
class KeyRing:
    """Keys by ID: `encoding_key_id` encrypts, every key decrypts.

    Attributes:
        keys: 32-byte AES keys by key ID.
        encoding_key_id: The key new payloads are encrypted with (one of `keys`).
    """

    keys: Mapping[str, bytes]
    encoding_key_id: str

    def __post_init__(self) -> None:
        if not self.keys:
            raise EncryptionKeyError("the encryption key ring holds no key, so none can encode")
        for key_id, key in self.keys.items():
            if not _KEY_ID.fullmatch(key_id):
                raise EncryptionKeyError(
                    f"encryption key ID {key_id!r} is not 1-64 letters, digits, '.', '_' or '-'"
                )
            if len(key) != _KEY_BYTES:
                raise EncryptionKeyError(
                    f"encryption key {key_id!r} is {len(key)} bytes; AES-256 takes {_KEY_BYTES}"
                )
        if self.encoding_key_id not in self.keys:
            raise EncryptionKeyError(
                f"the encoding key {self.encoding_key_id!r} is not in the key ring ({', '.join(self.keys)})"
            )

    def __repr__(self) -> str:
        # Never the keys themselves: a ring may end up in a log line or a traceback.
        return f"KeyRing(key_ids={list(self.keys)!r}, encoding_key_id={self.encoding_key_id!r})"

    @staticmethod
    def parse(text: str, *, source: str = ENCRYPTION_KEYS_ENV) -> KeyRing:
        """A ring from ``id=base64key`` entries (commas or new lines between them; the first encodes).

        `source` names where the text came from, for the error messages.
        """
        entries: list[tuple[int, str]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            line = line.split("#", 1)[0]
            entries.extend((number, part.strip()) for part in line.split(",") if part.strip())
        keys: dict[str, bytes] = {}
        for number, entry in entries:
            where = f"{source} line {number}" if "\n" in text.strip() else source
            key_id, separator, encoded = entry.partition("=")
            key_id = key_id.strip()
            if not separator or not key_id:
                raise EncryptionKeyError(f"{where}: an entry is not <key id>=<base64 key>")
            if key_id in keys:
                raise EncryptionKeyError(f"{where}: key ID {key_id!r} is given twice")
            keys[key_id] = _decode_key(encoded.strip(), key_id, where)
        if not keys:
            raise EncryptionKeyError(f"{source} names no key: give <key id>=<base64 key>, the first encodes")
        return KeyRing(keys, next(iter(keys)))

    @staticmethod
    def from_file(path: str | os.PathLike[str]) -> KeyRing:
        file = Path(path).expanduser()
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise EncryptionKeyError(f"cannot read the encryption key file {file}: {error}") from None
        return KeyRing.parse(text, source=str(file))

    @staticmethod
    def from_environment(environ: Mapping[str, str] | None = None) -> KeyRing | None:
        """The ring ``$SESSIONFLOW_ENCRYPTION_KEYS`` or ``$SESSIONFLOW_ENCRYPTION_KEYS_FILE`` names;
        None when neither is set (no encryption)."""
        env = os.environ if environ is None else environ
        inline = read_env(ENCRYPTION_KEYS_ENV, "", environ=env)
        file = read_env(ENCRYPTION_KEYS_FILE_ENV, "", environ=env)
        if inline.strip() and file.strip():
            raise EncryptionKeyError(
                f"both {ENCRYPTION_KEYS_ENV} and {ENCRYPTION_KEYS_FILE_ENV} are set: give one key ring"
            )
        if file.strip():
            return KeyRing.from_file(file.strip())
        if inline.strip():
            return KeyRing.parse(inline)
        return None


def _decode_key(encoded: str, key_id: str, where: str) -> bytes:
    try:
        # Standard or URL-safe alphabet, padding optional: what `openssl rand -base64 32` and
        # Python's `secrets.token_urlsafe(32)` print.
        normalized = encoded.replace("-", "+").replace("_", "/")
        key = base64.b64decode(normalized + "=" * (-len(normalized) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise EncryptionKeyError(f"{where}: key {key_id!r} is not valid base64") from None
    if len(key) != _KEY_BYTES:
        raise EncryptionKeyError(
            f"{where}: key {key_id!r} is {len(key)} bytes; AES-256 takes {_KEY_BYTES} "
            "(generate one with: python -c 'import base64,os; print(base64.b64encode(os.urandom(32)).decode())')"
        )
    return key


def generate_key_entry(key_id: str) -> str:
    """A new ring entry ``<key_id>=<base64 of 32 random bytes>``."""
    entry = f"{key_id}={base64.b64encode(os.urandom(_KEY_BYTES)).decode()}"
    KeyRing.parse(entry)  # checks the ID
    return entry


def is_encrypted(payload: Payload) -> bool:
    return payload.metadata.get("encoding") == ENCRYPTED_ENCODING


def _aesgcm(key: bytes) -> AESGCM:
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        raise ImportError(
            'encrypted payloads need cryptography: pip install "sessionflow[encryption]"'
        ) from None
    return AESGCM(key)


class EncryptionCodec(PayloadCodec):
    """AES-256-GCM over whole payloads, a random 96-bit nonce each, the key ID in the metadata.

    The key ID is also the cipher's associated data, so a payload whose metadata was edited
    to name another key fails authentication instead of decrypting under the wrong name.
    """

    def __init__(self, ring: KeyRing, *, required: bool = False) -> None:
        """`required`: strict mode, a payload that is not encrypted is refused (see `REFUSED_ENCODING`)."""
        self.ring = ring
        self.required = required
        self._ciphers = {key_id: _aesgcm(key) for key_id, key in ring.keys.items()}
        # Digests of the store objects this codec decrypted (`decode_stored`): the converter
        # then decodes an offloaded one again, now plaintext, and strict mode takes it.
        self._vouched: OrderedDict[bytes, None] = OrderedDict()
        self._vouched_lock = threading.Lock()

    def __repr__(self) -> str:
        strict = ", required=True" if self.required else ""
        return f"EncryptionCodec({self.ring!r}{strict})"

    @property
    def encoding_key_id(self) -> str:
        return self.ring.encoding_key_id

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        if sum(p.ByteSize() for p in payloads) >= _THREAD_BYTES:
            return await asyncio.to_thread(self.encode_now, payloads)
        return self.encode_now(payloads)

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        if sum(len(p.data) for p in payloads) >= _THREAD_BYTES:
            return await asyncio.to_thread(self.decode_now, payloads)
        return self.decode_now(payloads)

    def encode_now(self, payloads: Sequence[Payload]) -> list[Payload]:
        """`encode` on this thread (for a caller that is not on an event loop)."""
        key_id = self.ring.encoding_key_id
        cipher = self._ciphers[key_id]
        encrypted: list[Payload] = []
        for payload in payloads:
            nonce = os.urandom(_NONCE_BYTES)
            sealed = cipher.encrypt(nonce, payload.SerializeToString(), key_id.encode())
            encrypted.append(
                Payload(
                    metadata={
                        "encoding": ENCRYPTED_ENCODING,
                        KEY_ID_METADATA: key_id.encode(),
                        CIPHER_METADATA: _CIPHER,
                    },
                    data=nonce + sealed,
                )
            )
        return encrypted

    def decode_now(self, payloads: Sequence[Payload]) -> list[Payload]:
        """`decode` on this thread. Payloads that are not encrypted come back as they are, or,
        in strict mode, as a payload that `RefusedPlaintextConverter` refuses to read."""
        return [self._decrypt(p) if is_encrypted(p) else self._plaintext(p) for p in payloads]

    def _plaintext(self, payload: Payload) -> Payload:
        if not self.required:
            return payload
        digest = hashlib.sha256(payload.SerializeToString(deterministic=True)).digest()
        with self._vouched_lock:
            if digest in self._vouched:
                # Decrypted by `decode_stored` here: an offloaded payload, encrypted in the store.
                del self._vouched[digest]
                return payload
        return Payload(metadata={"encoding": REFUSED_ENCODING}, data=b"")

    def decode_stored(self, objects: Sequence[Payload], *, where: str = "the payload store") -> list[Payload]:
        """Payload store objects, decrypted. In strict mode an object that is not encrypted
        raises `PlaintextPayloadError`; what comes back is marked as decrypted here, so this
        codec, reading it again as an offloaded payload, takes it as encrypted (by its digest,
        remembered in this process only: a payload cannot claim it)."""
        if self.required:
            for payload in objects:
                if not is_encrypted(payload):
                    raise PlaintextPayloadError(
                        f"an object in {where} is not encrypted, and strict encryption is on "
                        f"({ENCRYPTION_REQUIRED_ENV}=1): it is refused"
                    )
        decoded = [self._decrypt(p) if is_encrypted(p) else p for p in objects]
        if self.required:
            digests = [hashlib.sha256(p.SerializeToString(deterministic=True)).digest() for p in decoded]
            with self._vouched_lock:
                for digest in digests:
                    self._vouched[digest] = None
                    self._vouched.move_to_end(digest)
                while len(self._vouched) > _VOUCHED_LIMIT:
                    self._vouched.popitem(last=False)
        return decoded

    def _decrypt(self, payload: Payload) -> Payload:
        from cryptography.exceptions import InvalidTag

        key_id = payload.metadata.get(KEY_ID_METADATA, b"").decode("utf-8", "replace")
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            raise PayloadDecryptionError(
                f"a payload is encrypted with key {key_id!r}, which is not in this process's key ring "
                f"(key IDs: {', '.join(self.ring.keys)}); add that key to {ENCRYPTION_KEYS_ENV} "
                f"or {ENCRYPTION_KEYS_FILE_ENV}",
                key_id=key_id,
            )
        data = payload.data
        if len(data) < _NONCE_BYTES + _TAG_BYTES:
            raise PayloadDecryptionError(
                f"a payload encrypted with key {key_id!r} is too short to be one", key_id=key_id
            )
        try:
            plain = cipher.decrypt(data[:_NONCE_BYTES], data[_NONCE_BYTES:], key_id.encode())
        except InvalidTag:
            raise PayloadDecryptionError(
                f"a payload encrypted with key {key_id!r} fails authentication: the key of that ID "
                "in this key ring is not the one that wrote it, or the payload was altered",
                key_id=key_id,
            ) from None
        decrypted = Payload()
        decrypted.ParseFromString(plain)
        return decrypted


def encryption_codec_from_environment(environ: Mapping[str, str] | None = None) -> EncryptionCodec | None:
    """The codec for the key ring the environment names; None when it names none.

    In strict mode (``$SESSIONFLOW_ENCRYPTION_REQUIRED``) the codec refuses plaintext payloads.

    Raises:
        EncryptionKeyError: Strict mode is on without a ring, or the ring is malformed (bad base64, a wrong key length, a key ID
            given twice, no key, an unreadable file).
    """
    ring = KeyRing.from_environment(environ)
    required = encryption_required(environ)
    if ring is None:
        if required:
            raise EncryptionKeyError(
                f"{ENCRYPTION_REQUIRED_ENV} is on, but no key ring is set: set {ENCRYPTION_KEYS_ENV} "
                f"or {ENCRYPTION_KEYS_FILE_ENV}"
            )
        return None
    return EncryptionCodec(ring, required=required)
