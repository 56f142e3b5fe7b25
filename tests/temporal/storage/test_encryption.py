"""Encrypted payloads: the key ring, the codec, the store under it, and sessions on real workers.

The integration tests run real worker processes against the dev server and read what an
operator of the server or the store could read: the raw history events (a client without
the codec) and the raw files of the payload folder.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent

from sessionflow import AgentSessionClient, PayloadStoreError, ToolEffect, ToolPolicy, connect
from sessionflow.temporal import (
    EncryptionCodec,
    EncryptionKeyError,
    KeyRing,
    PayloadDecryptionError,
    PayloadStore,
    build_data_converter,
    encryption_codec_from_environment,
)
from sessionflow.temporal.storage._bodies import BodyStore, StoreScope
from sessionflow.temporal.storage._encryption import (
    ENCRYPTION_KEYS_ENV,
    ENCRYPTION_KEYS_FILE_ENV,
    KEY_ID_METADATA,
    generate_key_entry,
)
from sessionflow.testing import wait_for_agent_snapshot, wait_until
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after
from tests.temporal.storage.s3_server import (
    _s3_client,  # pyright: ignore[reportPrivateUsage]
    aws_test_environment,
    create_bucket,
    list_objects,
    running_moto,
)

# Fixed keys: the parametrized cases' IDs must be the same in every xdist process.
K1 = "k1=" + base64.b64encode(bytes(range(32))).decode()
K2 = "k2=" + base64.b64encode(bytes(range(32, 64))).decode()
K1_OTHER = "k1=" + base64.b64encode(b"\x07" * 32).decode()
"""A key named k1 that is not the k1 that wrote the payloads."""

USER_MARKER = "USERMSG-7b1f-secret"
ARG_MARKER = "TOOLARG-9c2e-secret"
OUT_MARKER = "TOOLOUT-4d1a-secret"
ERR_MARKER = "TOOLERR-3f9b-secret"
ANSWER_MARKER = "ANSWER-77e0-secret"
MARKERS = [USER_MARKER, ARG_MARKER, OUT_MARKER, ERR_MARKER, ANSWER_MARKER]
BIG_OUTPUT = (OUT_MARKER + " ") * 20_000  # ~400 KB: kept by reference in the store


def _payload(text: str) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=f'"{text}"'.encode())


# -- the key ring ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "names no key"),
        (" , ,", "names no key"),
        ("k1", "is not <key id>=<base64 key>"),
        ("=abc", "is not <key id>=<base64 key>"),
        ("k1=not*base64!", "key 'k1' is not valid base64"),
        ("k1=" + base64.b64encode(b"x" * 16).decode(), "key 'k1' is 16 bytes; AES-256 takes 32"),
        (f"{K1},{K1}", "key ID 'k1' is given twice"),
        ("k 1=" + base64.b64encode(b"x" * 32).decode(), "is not 1-64 letters"),
    ],
)
def test_a_malformed_key_ring_is_refused_with_a_precise_error(text: str, message: str) -> None:
    with pytest.raises(EncryptionKeyError, match=message.replace("(", r"\(").replace("*", r"\*")) as raised:
        KeyRing.parse(text)
    # The error never quotes a key.
    assert base64.b64encode(b"x" * 32).decode() not in str(raised.value)


def test_a_key_file_names_its_line_and_the_environment_gives_one_ring(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.write_text(f"# rotated 2026-12\n{K2}\n{K1}  # old, decode only\nk3=c2hvcnQ=\n")
    with pytest.raises(EncryptionKeyError, match=rf"{keys} line 4: key 'k3' is 5 bytes"):
        KeyRing.from_file(keys)
    keys.write_text(f"# rotated 2026-12\n{K2}\n{K1}  # old, decode only\n")
    ring = KeyRing.from_file(keys)
    assert list(ring.keys) == ["k2", "k1"] and ring.encoding_key_id == "k2"
    assert "k2=" not in repr(ring) and K2.split("=", 1)[1] not in repr(ring)
    assert encryption_codec_from_environment({}) is None
    codec = encryption_codec_from_environment({ENCRYPTION_KEYS_FILE_ENV: str(keys)})
    assert codec is not None and codec.encoding_key_id == "k2"
    with pytest.raises(EncryptionKeyError, match="both"):
        encryption_codec_from_environment({ENCRYPTION_KEYS_ENV: K1, ENCRYPTION_KEYS_FILE_ENV: str(keys)})
    with pytest.raises(EncryptionKeyError, match="cannot read the encryption key file"):
        encryption_codec_from_environment({ENCRYPTION_KEYS_FILE_ENV: str(tmp_path / "missing")})
    with pytest.raises(EncryptionKeyError, match="encoding key 'k9' is not in the key ring"):
        KeyRing(ring.keys, "k9")


# -- the codec ---------------------------------------------------------------------------


async def test_payloads_are_encrypted_with_a_fresh_nonce_and_the_key_id_and_plain_ones_pass() -> None:
    generated = generate_key_entry("fresh")
    assert generated.startswith("fresh=") and len(base64.b64decode(generated.split("=", 1)[1])) == 32
    codec = EncryptionCodec(KeyRing.parse(K1))
    first, second = await codec.encode([_payload(USER_MARKER), _payload(USER_MARKER)])
    assert first.metadata["encoding"] == b"binary/encrypted"
    assert first.metadata[KEY_ID_METADATA] == b"k1"
    assert USER_MARKER.encode() not in first.SerializeToString()
    assert first.data[:12] != second.data[:12] and first.data != second.data
    assert await codec.decode([first, second]) == [_payload(USER_MARKER)] * 2
    # Written before encryption was switched on: read as it is.
    assert await codec.decode([_payload("old")]) == [_payload("old")]


async def test_rotation_a_ring_with_the_old_key_reads_both_and_writes_with_the_new_one() -> None:
    old = EncryptionCodec(KeyRing.parse(K1))
    rotated = EncryptionCodec(KeyRing.parse(f"{K2},{K1}"))
    written_before = (await old.encode([_payload("before")]))[0]
    written_after = (await rotated.encode([_payload("after")]))[0]
    assert written_after.metadata[KEY_ID_METADATA] == b"k2"
    assert await rotated.decode([written_before, written_after]) == [_payload("before"), _payload("after")]
    with pytest.raises(
        PayloadDecryptionError, match="key 'k2', which is not in this process's key ring"
    ) as e:
        await old.decode([written_after])
    assert e.value.key_id == "k2"


async def test_a_wrong_key_or_an_altered_payload_fails_authentication_naming_the_key_id() -> None:
    right = EncryptionCodec(KeyRing.parse(K1))
    wrong = EncryptionCodec(KeyRing.parse(K1_OTHER))
    encrypted = (await right.encode([_payload("x")]))[0]
    with pytest.raises(PayloadDecryptionError, match="key 'k1' fails authentication") as raised:
        await wrong.decode([encrypted])
    assert K1_OTHER.split("=", 1)[1] not in str(raised.value)
    altered = Payload()
    altered.CopyFrom(encrypted)
    altered.data = altered.data[:-1] + bytes([altered.data[-1] ^ 1])
    with pytest.raises(PayloadDecryptionError, match="fails authentication"):
        await right.decode([altered])
    # The key ID is the cipher's associated data: a payload relabelled to another key fails.
    both = EncryptionCodec(KeyRing.parse(f"{K2},{K1}"))
    relabelled = Payload()
    relabelled.CopyFrom(encrypted)
    relabelled.metadata[KEY_ID_METADATA] = b"k2"
    with pytest.raises(PayloadDecryptionError, match="key 'k2' fails authentication"):
        await both.decode([relabelled])


async def test_large_payloads_are_encrypted_off_the_event_loop_and_round_trip() -> None:
    codec = EncryptionCodec(KeyRing.parse(K1))
    big = _payload("y" * 3_000_000)
    encrypted = await codec.encode([big])
    assert await codec.decode(encrypted) == [big]


# -- the payload store under the codec --------------------------------------------------


def _store_files(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")}


async def test_every_object_put_in_the_store_is_encrypted_and_old_plain_ones_still_read(
    tmp_path: Path,
) -> None:
    store = PayloadStore(location=str(tmp_path / "payloads"), threshold=0)
    codec = EncryptionCodec(KeyRing.parse(K1))
    plain_converter = build_data_converter(store, codec=None)
    converter = build_data_converter(store, codec=codec)
    assert converter.external_storage is not None and plain_converter.external_storage is not None
    # A body written before encryption was switched on.
    old_bodies = BodyStore(plain_converter.external_storage, plain_converter)
    scope = StoreScope(namespace="default", session_id="s-1")
    old_ref = await old_bodies.put({"text": "written in the clear"}, scope)
    before = set(_store_files(store.folder))
    # A body by reference (past the converter) and a payload External Storage offloads.
    bodies = BodyStore(converter.external_storage, converter)
    ref = await bodies.put({"text": OUT_MARKER}, scope)
    offloaded = await converter.encode([ARG_MARKER])
    new_files = {p: b for p, b in _store_files(store.folder).items() if p not in before}
    assert len(new_files) == 2
    for blob in new_files.values():
        stored = Payload.FromString(blob)
        assert stored.metadata["encoding"] == b"binary/encrypted"
        assert OUT_MARKER.encode() not in blob and ARG_MARKER.encode() not in blob
        # Encrypted once, not twice: its plaintext is a payload of the converter's.
        assert (await codec.decode([stored]))[0].metadata["encoding"] != b"binary/encrypted"
    # A fresh body store (no cache) reads both bodies, and the converter its payload.
    fresh = BodyStore(converter.external_storage, converter)
    assert await fresh.get(ref) == {"text": OUT_MARKER}
    assert await fresh.get(old_ref) == {"text": "written in the clear"}
    assert await converter.decode(offloaded) == [ARG_MARKER]
    # A converter without the key cannot read what was encrypted, and says which key.
    other = build_data_converter(store, codec=EncryptionCodec(KeyRing.parse(K2)))
    assert other.external_storage is not None
    with pytest.raises(
        PayloadStoreError, match="PayloadDecryptionError: a payload is encrypted with key 'k1'"
    ):
        await BodyStore(other.external_storage, other).get(ref)


async def test_objects_on_the_s3_store_are_encrypted_too(tmp_path: Path) -> None:
    """The same driver wrapper over the SDK's S3 driver, against moto's S3 wire protocol."""
    bucket = "enc-bucket"
    with aws_test_environment(), running_moto(tmp_path / "moto.log") as moto:
        await create_bucket(moto.url, bucket)
        store = PayloadStore(location=f"s3://{bucket}/sf", endpoint=moto.url, threshold=0)
        codec = EncryptionCodec(KeyRing.parse(K1))
        converter = build_data_converter(store, codec=codec)
        assert converter.external_storage is not None
        bodies = BodyStore(converter.external_storage, converter)
        ref = await bodies.put({"text": OUT_MARKER}, StoreScope(namespace="default", session_id="s3-1"))
        offloaded = await converter.encode([ARG_MARKER])
        async with _s3_client(moto.url) as s3:
            keys = list(await list_objects(moto.url, bucket))
            blobs = {key: await (await s3.get_object(Bucket=bucket, Key=key))["Body"].read() for key in keys}
        assert len(blobs) == 2
        _assert_no_plaintext(blobs)
        assert all(Payload.FromString(b).metadata["encoding"] == b"binary/encrypted" for b in blobs.values())
        fresh = build_data_converter(store, codec=codec)
        assert fresh.external_storage is not None
        assert await BodyStore(fresh.external_storage, fresh).get(ref) == {"text": OUT_MARKER}
        assert await fresh.decode(offloaded) == [ARG_MARKER]


# -- sessions on real workers -------------------------------------------------------------


def _payloads_in(message: Message) -> list[Payload]:
    """Every `Payload` anywhere inside a protobuf message."""
    found: list[Payload] = []
    if isinstance(message, Payload):
        return [message]
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if isinstance(value, Message):
            values: list[Any] = [value]
        elif callable(getattr(value, "values", None)):  # a map field
            values = list(value.values())
        else:  # a repeated field
            values = list(value)
        for item in values:
            if isinstance(item, Message):
                found.extend(_payloads_in(item))
    return found


async def _raw_history(address: str, store: PayloadStore, session_id: str) -> list[HistoryEvent]:
    """The history as the server keeps it: fetched by a client that has no codec."""
    raw_client = await connect(address, "default", payloads=store, codec=None)
    history = await raw_client.get_workflow_handle(session_id).fetch_history()
    return list(history.events)


def _assert_no_plaintext(blobs: dict[str, bytes]) -> None:
    for where, blob in blobs.items():
        for marker in MARKERS:
            assert marker.encode() not in blob, f"{marker} in plaintext in {where}"
            assert base64.b64encode(marker.encode()) not in blob, f"{marker} in base64 in {where}"


async def test_raw_history_and_raw_store_objects_hold_no_plaintext(
    harness_factory: HarnessFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, temporal_address: str
) -> None:
    monkeypatch.setenv(ENCRYPTION_KEYS_ENV, K1)
    store = PayloadStore(location=str(tmp_path / "payloads"))
    # `lookup` runs as a local step: its result is recorded in a marker.
    harness: Harness = await harness_factory(
        payloads=store, tool_policies={"lookup": ToolPolicy(effect=ToolEffect.READ, local_timeout=30)}
    )
    sid = "enc-plain-1"
    harness.script(
        sid,
        [
            [
                {
                    "tool_calls": [
                        {"id": "c1", "name": "lookup", "arguments": {"query": ARG_MARKER}},
                        {"id": "c2", "name": "broken", "arguments": {"why": ARG_MARKER}},
                    ]
                },
                {"text": ANSWER_MARKER},
            ]
        ],
        {
            "lookup": {"effect": "read", "output": BIG_OUTPUT},
            "broken": {"effect": "read", "error": ERR_MARKER},
        },
    )
    await harness.sessions.start_session(sid, USER_MARKER)
    snapshot = await idle_after(harness, sid, 1)
    # The session ran with the markers: through the codec, everything reads as it was.
    assert snapshot.messages[-1].message.text == ANSWER_MARKER
    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    second_call = harness.log.entries("model", session=sid)[-1]["seen"]
    assert any(OUT_MARKER in text for text in second_call) and any(ERR_MARKER in t for t in second_call)
    assert len(harness.log.entries("tool", session=sid, name="lookup")) == 1

    # The step history reads through the codec: the local step's marker too.
    steps = await harness.stack.read_step_history(sid)
    assert {(s.step_execution_id, s.outcome, s.local) for s in steps} == {
        ("turn-1/model-1", "completed", False),
        ("turn-1/tool/c1", "completed", True),
        ("turn-1/tool/c2", "completed", False),
        ("turn-1/model-2", "completed", False),
    }

    events = await _raw_history(temporal_address, store, sid)
    _assert_no_plaintext(
        {f"event {e.event_id} ({EventType.Name(e.event_type)})": e.SerializeToString() for e in events}
    )
    payloads = [p for e in events for p in _payloads_in(e)]
    encrypted = [p for p in payloads if p.metadata.get("encoding") == b"binary/encrypted"]
    assert encrypted and {p.metadata[KEY_ID_METADATA] for p in encrypted} == {b"k1"}
    others = {p.metadata.get("encoding", b"") for p in payloads if p not in encrypted}
    # The rest: External Storage references (an object name and a size) and the SDK's own
    # local-step markers (step type, ID and attempt).
    assert others <= {b"json/protobuf", b"json/plain"}, others

    files = _store_files(store.folder)
    _assert_no_plaintext({str(p): blob for p, blob in files.items()})
    # The big output is in the store, encrypted: the right key finds it there.
    codec = EncryptionCodec(KeyRing.parse(K1))
    decrypted = [(await codec.decode([Payload.FromString(blob)]))[0].data for blob in files.values()]
    assert any(OUT_MARKER.encode() in data and len(data) > 300_000 for data in decrypted)


def _file_digests(folder: Path) -> dict[Path, str]:
    return {p: hashlib.sha256(b).hexdigest() for p, b in _store_files(folder).items()}


async def test_a_worker_with_the_wrong_keys_fails_its_steps_and_the_session_goes_on_with_the_right_ring(
    harness_factory: HarnessFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, temporal_address: str
) -> None:
    """Turn 1 under key k1; then a worker whose ring lacks k1 takes the session's next
    workflow task, fails it naming k1, runs no step and writes nothing; then a worker with
    the rotated ring (k2 encodes, k1 still decodes) finishes the turn."""
    monkeypatch.setenv(ENCRYPTION_KEYS_ENV, K1)
    # Threshold 0: every body is in the store, so turn 2 reads turn 1's k1 objects back.
    store = PayloadStore(location=str(tmp_path / "payloads"), threshold=0)
    harness: Harness = await harness_factory(
        payloads=store,
        tool_policies={
            "write_it": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
        },
    )
    sid = "enc-wrong-1"
    harness.script(
        sid,
        [
            [{"text": "first answer"}],
            [
                {"tool_calls": [{"id": "c1", "name": "write_it", "arguments": {"value": ARG_MARKER}}]},
                {"text": ANSWER_MARKER},
            ],
        ],
        {"write_it": {"output": "written " + OUT_MARKER}},
    )
    await harness.sessions.start_session(sid, "hello")
    await idle_after(harness, sid, 1)
    harness.stack.workers[-1].kill()

    rotated_ring = f"{K2},{K1}"
    rotated = AgentSessionClient(
        await connect(
            temporal_address, "default", payloads=store, codec=EncryptionCodec(KeyRing.parse(rotated_ring))
        ),
        harness.flow,
    )
    stored_before = _file_digests(store.folder)
    events_before = len(await _raw_history(temporal_address, store, sid))

    harness.stack.worker_env[ENCRYPTION_KEYS_ENV] = K2  # k1 is missing
    wrong = await harness.stack.start_worker()
    send = asyncio.create_task(rotated.send_user_message(sid, USER_MARKER))
    await wait_until("the wrong worker's error", lambda: "'k1'" in wrong.log(), timeout=120)
    assert "which is not in this process's key ring" in wrong.log()

    async def failed_task() -> HistoryEvent | None:
        events = await _raw_history(temporal_address, store, sid)
        return next((e for e in events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED), None)

    failed = await wait_until("a failed workflow task in the history", failed_task, timeout=60)
    failure = failed.workflow_task_failed_event_attributes.failure
    # The failure's message is encoded too (with the wrong worker's key, k2; by reference, as
    # the threshold is 0): the rotated ring reads it.
    rotated_converter = build_data_converter(store, codec=EncryptionCodec(KeyRing.parse(rotated_ring)))
    assert failure.message == "Encoded failure"
    error = await rotated_converter.decode_failure(failure)
    assert "key 'k1', which is not in this process's key ring" in str(error)
    assert not send.done()
    # No step ran: no model call past turn 1's, no tool; nothing stored changed.
    assert len(harness.log.entries("model", session=sid)) == 1
    assert harness.log.entries("tool", session=sid) == []
    stored_after = _file_digests(store.folder)
    assert {p: d for p, d in stored_after.items() if p in stored_before} == stored_before
    kinds = [e.event_type for e in (await _raw_history(temporal_address, store, sid))[events_before:]]
    assert EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED not in kinds

    wrong.kill()
    harness.stack.worker_env[ENCRYPTION_KEYS_ENV] = rotated_ring
    await harness.stack.start_worker()
    assert await asyncio.wait_for(send, timeout=120) is True
    snapshot = await wait_for_agent_snapshot(
        rotated,
        sid,
        lambda s: (
            s
            if s.state is not None
            and s.state.turn_count >= 2
            and s.messages[-1].message.text == ANSWER_MARKER
            else None
        ),
        description="turn 2 to end",
        timeout=120,
    )
    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    assert len(harness.log.entries("tool", session=sid, name="write_it")) == 1
    # Turn 1's payloads (k1) were read under the rotated ring, and turn 2 wrote with k2.
    # (Threshold 0: the history holds references only; the payloads are all in the store.)
    events = await _raw_history(temporal_address, store, sid)
    _assert_no_plaintext({f"event {e.event_id}": e.SerializeToString() for e in events})
    stored_ids = {
        Payload.FromString(b).metadata[KEY_ID_METADATA] for b in _store_files(store.folder).values()
    }
    assert stored_ids == {b"k1", b"k2"}
    _assert_no_plaintext({str(p): b for p, b in _store_files(store.folder).items()})
