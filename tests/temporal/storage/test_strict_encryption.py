"""Strict encryption (``SESSIONFLOW_ENCRYPTION_REQUIRED=1``): a plaintext payload is refused
wherever it is read, and nothing runs on it; without it, plaintext is read as before."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.converter import PayloadCodec

from sessionflow import AgentSessionClient, PayloadStoreError, connect
from sessionflow.temporal import (
    EncryptionCodec,
    EncryptionKeyError,
    KeyRing,
    PayloadStore,
    PlaintextPayloadError,
    build_data_converter,
    encryption_codec_from_environment,
)
from sessionflow.temporal._payloads import SEND_USER_MESSAGE, SendUserMessageRequest
from sessionflow.temporal.storage._bodies import BodyStore, StoreScope
from sessionflow.temporal.storage._encryption import ENCRYPTION_KEYS_ENV, ENCRYPTION_REQUIRED_ENV
from sessionflow.testing import wait_until
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after

K1 = "k1=" + base64.b64encode(bytes(range(32))).decode()
STRICT_MESSAGE = "not encrypted, and strict encryption is on (SESSIONFLOW_ENCRYPTION_REQUIRED=1)"


def _plain(text: str) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=f'"{text}"'.encode())


def test_strict_mode_comes_from_the_environment_and_needs_a_ring() -> None:
    codec = encryption_codec_from_environment({ENCRYPTION_KEYS_ENV: K1, ENCRYPTION_REQUIRED_ENV: "1"})
    assert codec is not None and codec.required
    codec = encryption_codec_from_environment({ENCRYPTION_KEYS_ENV: K1})
    assert codec is not None and not codec.required
    with pytest.raises(EncryptionKeyError, match="SESSIONFLOW_ENCRYPTION_REQUIRED is on, but no key ring"):
        encryption_codec_from_environment({ENCRYPTION_REQUIRED_ENV: "true"})
    with pytest.raises(EncryptionKeyError, match="give 1"):
        encryption_codec_from_environment({ENCRYPTION_KEYS_ENV: K1, ENCRYPTION_REQUIRED_ENV: "maybe"})


async def test_a_strict_converter_refuses_plaintext_and_reads_what_is_encrypted() -> None:
    strict = build_data_converter(None, codec=EncryptionCodec(KeyRing.parse(K1), required=True))
    lenient = build_data_converter(None, codec=EncryptionCodec(KeyRing.parse(K1)))
    encrypted = await strict.encode(["sealed"])
    assert await strict.decode(encrypted) == ["sealed"]
    assert await lenient.decode([_plain("old")]) == ["old"]  # the default: plaintext still reads
    with pytest.raises(PlaintextPayloadError, match=r"strict encryption is on"):
        await strict.decode([_plain("injected")])
    # A payload cannot vouch for itself: the mark of a store object this process decrypted is
    # a secret of the process.
    forged = _plain("injected")
    forged.metadata["sessionflow-decrypted"] = b"\x00" * 16
    with pytest.raises(PlaintextPayloadError):
        await strict.decode([forged])


async def test_a_plaintext_object_in_the_payload_store_is_refused_on_read(tmp_path: Path) -> None:
    store = PayloadStore(location=str(tmp_path / "payloads"), threshold=0)
    plain = build_data_converter(store, codec=None)
    strict = build_data_converter(store, codec=EncryptionCodec(KeyRing.parse(K1), required=True))
    lenient = build_data_converter(store, codec=EncryptionCodec(KeyRing.parse(K1)))
    assert plain.external_storage and strict.external_storage and lenient.external_storage
    scope = StoreScope(namespace="default", session_id="s-1")
    plain_ref = await BodyStore(plain.external_storage, plain).put({"text": "in the clear"}, scope)
    plain_offloaded = await plain.encode(["offloaded in the clear"])
    # What the strict converter writes, it reads: a body and an offloaded payload, both encrypted.
    sealed_ref = await BodyStore(strict.external_storage, strict).put({"text": "sealed"}, scope)
    sealed_offloaded = await strict.encode(["offloaded sealed"])
    fresh = BodyStore(strict.external_storage, strict)
    assert await fresh.get(sealed_ref) == {"text": "sealed"}
    assert await strict.decode(sealed_offloaded) == ["offloaded sealed"]
    # Plaintext objects are refused, by reference and offloaded alike.
    with pytest.raises(PayloadStoreError, match=STRICT_MESSAGE.replace("(", r"\(").replace(")", r"\)")):
        await fresh.get(plain_ref)
    with pytest.raises(PlaintextPayloadError, match="is not encrypted, and strict encryption is on"):
        await strict.decode(plain_offloaded)
    # Without strict mode they read as they always did.
    old = BodyStore(lenient.external_storage, lenient)
    assert await old.get(plain_ref) == {"text": "in the clear"}
    assert await lenient.decode(plain_offloaded) == ["offloaded in the clear"]


async def _session_after_one_turn(harness: Harness, sid: str) -> None:
    harness.script(sid, [[{"text": "first answer"}], [{"text": "second answer"}]], {})
    await harness.sessions.start_session(sid, "hello")
    await idle_after(harness, sid, 1)
    assert len(harness.log.entries("model", session=sid)) == 1


class _SendsPlaintext(PayloadCodec):
    """Encodes nothing (what it sends is plaintext, as from a client without the codec), but
    reads the worker's encrypted answer, so the test sees why it was refused."""

    def __init__(self) -> None:
        self.reader = EncryptionCodec(KeyRing.parse(K1))

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return list(payloads)

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return await self.reader.decode(payloads)


async def _send_plaintext(temporal_address: str, sid: str, text: str) -> bool:
    """A `send_user_message` update whose payload is plaintext (a client without the codec)."""
    converter = build_data_converter(None, codec=_SendsPlaintext())
    plain = await Client.connect(temporal_address, namespace="default", data_converter=converter)
    handle = plain.get_workflow_handle(sid)
    return await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
        SEND_USER_MESSAGE, args=[SendUserMessageRequest(text=text)], result_type=bool
    )


async def test_a_plaintext_update_is_refused_by_a_strict_worker_and_runs_no_turn(
    harness_factory: HarnessFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, temporal_address: str
) -> None:
    monkeypatch.setenv(ENCRYPTION_KEYS_ENV, K1)
    monkeypatch.setenv(ENCRYPTION_REQUIRED_ENV, "1")
    harness: Harness = await harness_factory(payloads=PayloadStore(location=str(tmp_path / "payloads")))
    sid = "strict-1"
    await _session_after_one_turn(harness, sid)
    before = await harness.sessions.get_agent_snapshot(sid)
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await _send_plaintext(temporal_address, sid, "injected instruction")
    # Temporal says it could not decode the update's arguments; the cause says why.
    chain: list[str] = []
    cause: BaseException | None = refused.value.cause
    while cause is not None:
        chain.append(f"{type(cause).__name__}: {cause}")
        cause = cause.__cause__
    assert any(STRICT_MESSAGE in link and "PlaintextPayloadError" in link for link in chain), chain
    # No turn ran, and the session's messages did not change.
    assert len(harness.log.entries("model", session=sid)) == 1
    after = await harness.sessions.get_agent_snapshot(sid)
    assert [m.message.text for m in after.messages] == [m.message.text for m in before.messages]
    assert not any("injected instruction" in (m.message.text or "") for m in after.messages)
    # The session is not stuck: an encrypted message from a client with the keys runs turn 2.
    assert await harness.sessions.send_user_message(sid, "a real message") is True
    await idle_after(harness, sid, 2)
    assert len(harness.log.entries("model", session=sid)) == 2


async def test_without_strict_mode_a_plaintext_update_still_runs_a_turn(
    harness_factory: HarnessFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, temporal_address: str
) -> None:
    monkeypatch.setenv(ENCRYPTION_KEYS_ENV, K1)
    monkeypatch.delenv(ENCRYPTION_REQUIRED_ENV, raising=False)
    harness: Harness = await harness_factory(payloads=PayloadStore(location=str(tmp_path / "payloads")))
    sid = "lenient-1"
    await _session_after_one_turn(harness, sid)
    assert await _send_plaintext(temporal_address, sid, "an old client's message") is True
    await idle_after(harness, sid, 2)
    assert len(harness.log.entries("model", session=sid)) == 2


async def test_a_session_started_in_plaintext_runs_nothing_on_a_strict_worker(
    harness_factory: HarnessFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, temporal_address: str
) -> None:
    monkeypatch.setenv(ENCRYPTION_KEYS_ENV, K1)
    monkeypatch.setenv(ENCRYPTION_REQUIRED_ENV, "1")
    store = PayloadStore(location=str(tmp_path / "payloads"))
    harness: Harness = await harness_factory(payloads=store)
    sid = "strict-start-1"
    harness.script(sid, [[{"text": "never said"}]], {})
    plain = AgentSessionClient(
        await connect(temporal_address, "default", payloads=store, codec=_SendsPlaintext()), harness.flow
    )
    await plain.start_session(sid, "hello in the clear")
    raw = await connect(temporal_address, "default", payloads=store, codec=None)

    async def failed_task() -> HistoryEvent | None:
        history = await raw.get_workflow_handle(sid).fetch_history()
        return next(
            (e for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED), None
        )

    failed = await wait_until("a failed workflow task", failed_task, timeout=60)
    reader = build_data_converter(store, codec=EncryptionCodec(KeyRing.parse(K1)))
    error = await reader.decode_failure(failed.workflow_task_failed_event_attributes.failure)
    chain: list[str] = []
    cause: BaseException | None = error
    while cause is not None:
        chain.append(str(cause))
        cause = cause.__cause__
    assert any(STRICT_MESSAGE in link for link in chain), chain
    assert harness.log.entries("model", session=sid) == []
    history = await raw.get_workflow_handle(sid).fetch_history()
    kinds = {e.event_type for e in history.events}
    assert EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED not in kinds
    await raw.get_workflow_handle(sid).terminate("test over")
