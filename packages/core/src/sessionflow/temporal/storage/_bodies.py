"""Bodies by reference on the payload store: what activities and clients read and write.

The store is the driver of the client's Temporal External Storage, so one setting decides
where both kinds of payload go: payloads the SDK offloads on its own, and the bodies the
session keeps by reference (messages, tool outputs, run states, images).
"""

from __future__ import annotations

import copy
import hashlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any, cast

from temporalio.client import Client
from temporalio.converter import (
    DataConverter,
    ExternalStorage,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
    StorageDriverWorkflowInfo,
)

from sessionflow._environment import read_env
from sessionflow.session.bodies import (
    INLINE_BODY_BYTES,
    BodyRef,
    cap_text,
    fits_inline,
    preview_text,
    utf8_size,
)
from sessionflow.session.messages import FrameworkMessage
from sessionflow.session.tools import AgentToolCall
from sessionflow.temporal.storage._store_errors import PayloadStoreError

__all__ = ["BodyStore", "StoreScope", "inline_limit"]


def inline_limit(storage: ExternalStorage) -> int:
    """Bytes of a message body the session keeps inline with `storage` as its payload store."""
    # A threshold of 0 ("everything by reference") applies to bodies too.
    return min(INLINE_BODY_BYTES, storage.payload_size_threshold)


_PARTS = "parts"
"""Set in a message body whose long texts are parts of their own (bodies since 0.1: older
bodies hold their texts whole, and load as they are)."""
_PART = "\x00sessionflow.part"
"""The key of the one-entry mapping that stands for a stored part: its `BodyRef` fields."""
_MIN_PART_BYTES = 1024
"""Texts up to this size stay in their message body even when everything else is by
reference (threshold 0): a part per short text would only add objects."""

_CACHE_BYTES = int(read_env("SESSIONFLOW_BODY_CACHE_BYTES", str(256 * 1024 * 1024)))
"""Bytes of bodies a worker keeps decoded, shared by all its sessions: a model step of a
long session then reads its conversation from memory, and the worker's size stays bounded."""


@dataclass(frozen=True, kw_only=True)
class StoreScope:
    """The session a body belongs to: the store groups objects by it, for clean-up."""

    namespace: str
    session_id: str
    flow_type: str | None = None
    run_id: str | None = None


class BodyStore:
    """Put and get bodies on one External Storage driver, with a small cache of bodies read."""

    def __init__(self, storage: ExternalStorage, converter: DataConverter) -> None:
        self._driver = storage.drivers[0]
        self._converter = converter.payload_converter
        self.inline_limit = inline_limit(storage)
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._cache_sizes: dict[str, int] = {}
        self._cached_bytes = 0

    @staticmethod
    def of(client: Client) -> BodyStore | None:
        """The body store of `client`'s data converter; None when it has no payload store."""
        converter = client.data_converter
        storage = converter.external_storage
        return BodyStore(storage, converter) if storage is not None else None

    @property
    def driver_name(self) -> str:
        return self._driver.name()

    # -- raw values ----------------------------------------------------------------------

    async def put(self, value: Any, scope: StoreScope) -> BodyRef:
        payload = self._converter.to_payload(value)
        target = StorageDriverWorkflowInfo(
            namespace=scope.namespace, id=scope.session_id, type=scope.flow_type, run_id=scope.run_id
        )
        try:
            claims = await self._driver.store(StorageDriverStoreContext(target=target), [payload])
        except PayloadStoreError:
            raise
        except Exception as error:
            raise PayloadStoreError(self.driver_name, "cannot store a body", error) from None
        digest = hashlib.sha256(payload.SerializeToString()).hexdigest()
        ref = BodyRef(
            driver=self.driver_name, claim=dict(claims[0].claim_data), size=payload.ByteSize(), sha256=digest
        )
        self._remember(ref, value)
        return ref

    async def get(self, ref: BodyRef, type_hint: type[Any] | None = None, *, cache: bool = True) -> Any:
        """The stored value; `cache=False` for a body read once (a tool output for its model step)."""
        cached = self._cache.get(ref.sha256)
        if cached is not None:
            self._cache.move_to_end(ref.sha256)
            return cached
        if ref.driver != self.driver_name:
            raise PayloadStoreError(
                self.driver_name,
                f"holds no body of store {ref.driver!r}: configure the store the session used",
            )
        try:
            payloads = await self._driver.retrieve(
                StorageDriverRetrieveContext(), [StorageDriverClaim(claim_data=ref.claim)]
            )
        except PayloadStoreError:
            raise
        except Exception as error:
            raise PayloadStoreError(self.driver_name, "cannot read a body", error) from None
        payload = payloads[0]
        if hashlib.sha256(payload.SerializeToString()).hexdigest() != ref.sha256:
            raise PayloadStoreError(self.driver_name, "returned a body that does not match its digest")
        value: Any = (
            self._converter.from_payload(payload, type_hint)
            if type_hint
            else self._converter.from_payload(payload)
        )
        if cache:
            self._remember(ref, value)
        return value

    def _remember(self, ref: BodyRef, value: Any) -> None:
        if ref.size > _CACHE_BYTES // 4 or ref.sha256 in self._cache:
            return
        self._cache[ref.sha256] = value
        self._cache_sizes[ref.sha256] = ref.size
        self._cached_bytes += ref.size
        while self._cached_bytes > _CACHE_BYTES:
            old, _ = self._cache.popitem(last=False)
            self._cached_bytes -= self._cache_sizes.pop(old)

    # -- messages ------------------------------------------------------------------------

    async def store_message(
        self, message: FrameworkMessage, scope: StoreScope, *, inline_limit: int | None = None
    ) -> FrameworkMessage:
        """The message as the session keeps it: by reference when it is large.

        `inline_limit` overrides the store's (0: by reference whatever its size).
        """
        limit = self.inline_limit if inline_limit is None else inline_limit
        if message.body is not None or fits_inline(message.framework_item, message.text, limit):
            return message
        item: Any = message.framework_item
        body: dict[str, Any] = {"framework_item": item, "text": message.text}
        if (
            isinstance(item, dict)
            and message.text is not None
            and cast(dict[str, Any], item).get("content") == message.text
        ):
            # The text is the item's own content (a tool result, a plain answer): store it once.
            body = {"framework_item": item, "text_is_content": True}
        # Its long texts (a tool result's content above all) go in as parts of their own: the
        # store is content-addressed, so a text the tool step already stored is kept once.
        body = {**await self._long_texts_as_parts(body, scope), _PARTS: True}
        ref = await self.put(body, scope)
        text = preview_text(message.text) if message.text is not None else None
        return FrameworkMessage(role=message.role, framework_item=None, text=text, body=ref)

    async def load_message(self, message: FrameworkMessage) -> FrameworkMessage:
        """The whole message, as the runner first returned it."""
        if message.body is None:
            return message
        value = await self.get(message.body)
        if not isinstance(value, dict) or "framework_item" not in value:
            raise PayloadStoreError(self.driver_name, "holds a message body of the wrong shape")
        body: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        if body.get(_PARTS):
            body = await self._parts_read(body)
        # A copy: the cached body is shared by every later step, and a runner may edit its items.
        item: Any = copy.deepcopy(body["framework_item"])
        text: Any = body.get("text")
        if body.get("text_is_content") and isinstance(item, dict):
            text = cast(dict[str, Any], item).get("content")
        return FrameworkMessage(
            role=message.role, framework_item=item, text=text if isinstance(text, str) else None
        )

    async def _long_texts_as_parts(self, value: Any, scope: StoreScope) -> Any:
        """``value`` with each text longer than the part size replaced by a stored part's ref."""
        # Walk, store, then swap: a store failure is raised from a shallow stack, and its
        # failure stays within the server's size limit for failures (a retried step's kept
        # failure is whole only up to 4 KB).
        limit = max(self.inline_limit, _MIN_PART_BYTES)
        refs = {text: asdict(await self.put(text, scope)) for text in _long_texts(value, limit)}
        return _swapped(value, lambda text: {_PART: refs[text]} if text in refs else text, None)

    async def _parts_read(self, value: Any) -> Any:
        """``value`` with every part ref replaced by its stored text (`_long_texts_as_parts`)."""
        texts: dict[str, str] = {}
        for part in _parts(value):
            ref = BodyRef(**part)
            texts[ref.sha256] = await self.load_text(ref)
        return _swapped(value, lambda text: text, lambda part: texts[str(part["sha256"])])

    # -- tool outputs and run states -----------------------------------------------------

    async def store_text(self, text: str, scope: StoreScope) -> BodyRef | None:
        """A reference for a long text, or None when it stays inline."""
        if utf8_size(text) <= self.inline_limit and self.inline_limit > 0:
            return None
        return await self.put(text, scope)

    async def load_text(self, ref: BodyRef, *, cache: bool = True) -> str:
        value = await self.get(ref, cache=cache)
        if not isinstance(value, str):
            raise PayloadStoreError(self.driver_name, "holds a text body of the wrong shape")
        return value

    async def model_view(self, record: AgentToolCall, cap: int) -> AgentToolCall:
        """The record as the model sees it: the whole output, cut to `cap` bytes with a note."""
        # Read once, for this turn's next model step: caching it would only push out bodies
        # that every later step reads again.
        output = (
            await self.load_text(record.output_ref, cache=False)
            if record.output_ref is not None
            else record.output
        )
        if output is None:
            return record
        return replace(record, output=cap_text(output, cap), output_ref=None)


def _long_texts(value: Any, limit: int) -> list[str]:
    """The distinct texts in ``value`` (nested lists and mappings) longer than ``limit`` bytes."""
    found: dict[str, None] = {}
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if utf8_size(item) > limit:
                found[item] = None
        elif isinstance(item, list):
            stack.extend(cast(list[Any], item))
        elif isinstance(item, dict):
            stack.extend(cast(dict[Any, Any], item).values())
    return list(found)


def _part_of(item: Any) -> dict[str, Any] | None:
    if isinstance(item, dict) and len(cast(dict[Any, Any], item)) == 1:
        part = cast(dict[Any, Any], item).get(_PART)
        if isinstance(part, dict):
            return cast(dict[str, Any], part)
    return None


def _parts(value: Any) -> list[dict[str, Any]]:
    """The part refs in ``value`` (`_long_texts_as_parts`), as their `BodyRef` fields."""
    found: list[dict[str, Any]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        part = _part_of(item)
        if part is not None:
            found.append(part)
        elif isinstance(item, list):
            stack.extend(cast(list[Any], item))
        elif isinstance(item, dict):
            stack.extend(cast(dict[Any, Any], item).values())
    return found


def _swapped(
    value: Any, on_text: Callable[[str], Any], on_part: Callable[[dict[str, Any]], Any] | None
) -> Any:
    """A copy of ``value`` with each text, and each part ref when `on_part` is given,
    replaced by what the callables say."""
    if isinstance(value, str):
        return on_text(value)
    part = _part_of(value) if on_part is not None else None
    if part is not None and on_part is not None:
        return on_part(part)
    if isinstance(value, list):
        return [_swapped(v, on_text, on_part) for v in cast(list[Any], value)]
    if isinstance(value, dict):
        return {k: _swapped(v, on_text, on_part) for k, v in cast(dict[Any, Any], value).items()}
    return value
