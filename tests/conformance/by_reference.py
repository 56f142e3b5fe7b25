"""What a case played with every payload by reference leaves in its history and its store.

`check_by_reference` runs after every case of `test_conformance.py` (threshold 0): it reads
the session's history once (every run of its continue-as-new chain) and its store folder,
and asserts that what the case put in the session went to the store, not the history:

History: every payload the data converter wrote is an External Storage reference (the
``json/protobuf`` encoding of ``temporal.api.sdk.v1.ExternalStorageReference``, with one
``external_payloads`` entry giving the stored payload's size), and every payload is small.
The only inline payloads are the few the SDK writes itself, past the converter: search
attributes, and the metadata of its local-activity and patch markers.

Store: every reference names an object of the session's folder, of the size the reference
gives; every message of the session is a body (`FrameworkMessage.body`), an object of that
folder; every tool call that succeeded keeps its output there as a text object of its own,
whole, as the case's tool returned it; and no message text or tool output of the case
appears anywhere in the history's bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import json_format
from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload
from temporalio.api.history.v1 import HistoryEvent
from temporalio.api.sdk.v1 import ExternalStorageReference
from temporalio.client import Client
from temporalio.converter import StorageDriverClaim, StorageDriverRetrieveContext

from sessionflow.session.bodies import BodyRef, utf8_size
from sessionflow.session.events import AgentEventType
from sessionflow.session.messages import AgentMessage
from sessionflow.temporal.client._client import AgentSessionClient
from sessionflow.temporal.storage._local_driver import scope_name
from sessionflow.testing.conformance import PlayedCase
from sessionflow.testing.conformance._cases import ResolveStep
from tests.temporal.payload_history import run_histories

__all__ = ["MAX_HISTORY_PAYLOAD_BYTES", "ByReference", "check_by_reference", "history_payloads"]

MAX_HISTORY_PAYLOAD_BYTES = 512
"""A reference is under 300 bytes (a driver name, a 100-character key, a size); a message,
a tool output or a step's input inline is larger."""

_REFERENCE_TYPE = ExternalStorageReference.DESCRIPTOR.full_name.encode()
# Payloads Temporal's SDK core writes itself, never through the data converter: the
# metadata of a local activity's marker (its result is a payload by reference) and a patch's.
_SDK_MARKER_DETAILS = {("core_local_activity", "data"), ("core_patch", "patch-data")}
_MIN_SEARCHED_TEXT_BYTES = 8
"""Shorter texts could occur in a history by chance (in an ID): they are only looked up in the store."""


@dataclass(frozen=True)
class ByReference:
    """What one play left where: counted, so a failure says how far off it is."""

    payloads: int
    references: int
    sdk_inline: int
    stored_objects: int
    message_bodies: int
    tool_outputs: int
    text_bytes: int


def history_payloads(event: HistoryEvent) -> Iterator[tuple[str, Payload]]:
    """Every `Payload` anywhere in the event (nested, repeated, in maps), with its field path."""
    yield from _walk(event, "")


def _walk(message: Message, path: str) -> Iterator[tuple[str, Payload]]:
    if isinstance(message, Payload):
        yield path, message
        return
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        where = f"{path}.{field.name}" if path else field.name
        if field.message_type.GetOptions().map_entry:
            if field.message_type.fields_by_name["value"].message_type is not None:
                for key, item in value.items():
                    yield from _walk(item, f"{where}[{key}]")
        elif field.is_repeated:
            for index, item in enumerate(value):
                yield from _walk(item, f"{where}[{index}]")
        else:
            yield from _walk(value, where)


def _sdk_inline(event: HistoryEvent, path: str) -> bool:
    """A payload the SDK writes itself, past the data converter (and its External Storage)."""
    if ".search_attributes.indexed_fields[" in path:
        return True
    marker = event.marker_recorded_event_attributes
    return any(
        marker.marker_name == name and path == f"marker_recorded_event_attributes.details[{key}].payloads[0]"
        for name, key in _SDK_MARKER_DETAILS
    )


def _reference(payload: Payload) -> ExternalStorageReference | None:
    if not (
        payload.metadata.get("encoding") == b"json/protobuf"
        and payload.metadata.get("messageType") == _REFERENCE_TYPE
        and len(payload.external_payloads) == 1
    ):
        return None
    return json_format.Parse(payload.data, ExternalStorageReference())


def _key_path(folder: Path, key: str) -> Path:
    """The object a claim key names (`LocalFolderDriver`'s layout: a two-letter fan-out)."""
    digest = key.rsplit("/", 1)[-1]
    return folder.parent.parent / key.rsplit("/", 1)[0] / digest[:2] / digest


async def _stored_messages(sessions: AgentSessionClient, session_id: str) -> list[AgentMessage]:
    """Every message of the session as the session keeps it (bodies not read)."""
    return await sessions.stored_messages(session_id)


def _outputs_of(played: PlayedCase, tool_name: str) -> set[str]:
    """What the case's tool `tool_name` can return: its text, its verify's, a person's answers."""
    tool = next(tool for tool in played.case.tools if tool.name == tool_name)
    outputs = {tool.behaviour.output()}
    if tool.verify is not None:
        outputs.add(tool.verify.text)
    outputs |= {step.answer for step in played.case.steps if isinstance(step, ResolveStep) and step.answer}
    return outputs


async def _decoded(client: Client, folder: Path, objects: set[Path]) -> list[object]:
    """Every object of the session's folder, read through the client's store (and codec) and decoded."""
    storage = client.data_converter.external_storage
    assert storage is not None
    prefix = f"{folder.parent.name}/{folder.name}"
    claims = [StorageDriverClaim(claim_data={"key": f"{prefix}/{path.name}"}) for path in sorted(objects)]
    payloads = await storage.drivers[0].retrieve(StorageDriverRetrieveContext(), claims)
    converter = client.data_converter.payload_converter
    return [converter.from_payload(payload) for payload in payloads]


async def check_by_reference(played: PlayedCase, store_root: Path) -> ByReference:
    """Assert that the play kept every payload and body in the store at `store_root`; what it counted."""
    client = played.client
    session_id = played.session_id
    folder = store_root / scope_name("default") / scope_name(session_id)
    objects = {path for path in folder.rglob("*") if path.is_file() and not path.name.startswith(".")}

    # -- the history: references only, each a small payload naming an object of the folder.
    histories = await run_histories(client, session_id)
    events = [event for history in histories for event in history.events]
    inline: list[str] = []
    too_large: list[str] = []
    payloads = references = sdk_inline = 0
    for event in events:
        for path, payload in history_payloads(event):
            payloads += 1
            where = f"event {event.event_id} {path} ({payload.ByteSize()} bytes)"
            if payload.ByteSize() > MAX_HISTORY_PAYLOAD_BYTES:
                too_large.append(where)
            reference = _reference(payload)
            if reference is None:
                if _sdk_inline(event, path):
                    sdk_inline += 1
                else:
                    inline.append(f"{where}, metadata {dict(payload.metadata)}")
                continue
            references += 1
            stored = _key_path(folder, reference.claim_data["key"])
            assert stored in objects, f"{where} names {reference.claim_data['key']!r}, not in the store"
            size = payload.external_payloads[0].size_bytes
            assert stored.stat().st_size == size, f"{where}: stored {stored.stat().st_size} bytes, not {size}"
    assert not too_large, f"history payloads over {MAX_HISTORY_PAYLOAD_BYTES} bytes: {too_large}"
    assert not inline, f"{len(inline)} of {payloads} history payloads are inline, not by reference: {inline}"
    assert references == payloads - sdk_inline and references > 0, (references, payloads, sdk_inline)
    assert objects, f"the store holds no object of session {session_id!r} ({folder})"

    # -- the bodies: every message, and every tool output, is an object of the folder.
    sessions = played.sessions
    stored_messages = await _stored_messages(sessions, session_id)
    body_refs: list[BodyRef] = []
    for message in stored_messages:
        body = message.message.body
        assert body is not None, f"message {message.sequence} ({message.message.role}) is inline"
        assert _key_path(folder, str(body.claim["key"])) in objects, f"message {message.sequence}'s body"
        body_refs.append(body)
    texts: list[str] = []
    for message in await sessions.export_messages(session_id):
        if message.message.text:
            texts.append(message.message.text)
    # A tool's output is a text object of its own (`BodyStore.store_text`), whole: the
    # step's result and the tool call's record only name it.
    stored_texts = {value for value in await _decoded(client, folder, objects) if isinstance(value, str)}
    tool_outputs = 0
    for event in played.observation.events:
        if event.type is not AgentEventType.TOOL_CALL_FINISHED or event.data.get("status") != "succeeded":
            continue
        tool_name = str(event.data.get("tool_name"))
        found = stored_texts & _outputs_of(played, tool_name)
        assert found, (
            f"no output of tool call {event.data.get('tool_call_id')} ({tool_name}) is a stored text"
        )
        texts += found
        tool_outputs += 1
    # Bodies are objects of their own (a step's payload only names them): one per distinct body.
    distinct_bodies = {ref.claim["key"] for ref in body_refs}
    assert len(objects) >= len(distinct_bodies) + len(stored_texts) + 1, (len(objects), len(distinct_bodies))

    # -- by size: the case's texts are in the store (above), and none is in the history.
    raw = b"".join(event.SerializeToString() for event in events)
    for text in texts:
        needle = text.encode("utf-8", "replace")
        if len(needle) >= _MIN_SEARCHED_TEXT_BYTES:
            assert needle not in raw, f"the history holds {text[:60]!r} ({len(needle)} bytes) inline"
    # Each distinct text once: the store is content-addressed, and a message body keeps a
    # long text (a tool result's output) as a part, the same object as the stored output.
    text_bytes = sum(utf8_size(text) for text in set(texts))
    assert sum(ref.size for ref in body_refs) + sum(utf8_size(text) for text in stored_texts) >= text_bytes
    return ByReference(
        payloads=payloads,
        references=references,
        sdk_inline=sdk_inline,
        stored_objects=len(objects),
        message_bodies=len(stored_messages),
        tool_outputs=tool_outputs,
        text_bytes=text_bytes,
    )
