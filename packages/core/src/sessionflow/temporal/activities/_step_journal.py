"""The tool step's journal (`sessionflow.kit.StepJournal`) on Temporal: the attempt's heartbeat details.

A retried activity reads the details its last attempt heartbeated (`activity.info().
heartbeat_details`), so they are the step's own durable record across attempts, with no
workflow command and nothing in the session's history. The index lives there; each entry's
text goes to the payload store by reference once it is large (`BodyStore.store_text`), so
the details stay small however much a nested run says.

A write is durable when it returns: the index goes to the server by a direct
``RecordActivityTaskHeartbeat`` (the client's async activity handle), which the worker's
own heartbeats would only send throttled. Every heartbeat of the step carries the whole
index (`HeartbeatJournal.details`), since a heartbeat replaces the details the server keeps;
the worker's buffered one is replaced first, so an older index never lands after a newer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from temporalio import activity
from temporalio.client import AsyncActivityCancelledError, Client

from sessionflow.session.bodies import BodyRef
from sessionflow.temporal.storage._bodies import BodyStore, StoreScope

__all__ = ["JOURNAL_FORMAT", "HeartbeatJournal"]

JOURNAL_FORMAT = "sessionflow/step-journal-1"


class HeartbeatJournal:
    """One tool step's journal: entries by key, in the attempt's heartbeat details."""

    def __init__(
        self,
        *,
        client: Client,
        task_token: bytes,
        bodies: BodyStore | None,
        scope: StoreScope | None,
        prior: Sequence[Any],
    ) -> None:
        self._client = client
        self._task_token = task_token
        self._bodies = bodies
        self._scope = scope
        self._entries: dict[str, dict[str, Any]] = _entries_of(prior)

    def __len__(self) -> int:
        return len(self._entries)

    def details(self) -> tuple[Any, ...]:
        """What every heartbeat of the step sends: the index, or nothing before the first entry."""
        if not self._entries:
            return ()
        return ({"format": JOURNAL_FORMAT, "entries": self._entries},)

    def heartbeat(self, *_: Any) -> None:
        """The step's heartbeat (any details a caller passes are the journal's to keep)."""
        activity.heartbeat(*self.details())

    async def read(self, key: str) -> str | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if "text" in entry:
            return str(entry["text"])
        if self._bodies is None:
            raise RuntimeError(f"journal entry {key!r} is in a payload store, and this worker has none")
        ref = cast(dict[str, Any], entry["ref"])
        return await self._bodies.load_text(
            BodyRef(
                driver=ref["driver"], claim=dict(ref["claim"]), size=int(ref["size"]), sha256=ref["sha256"]
            )
        )

    async def write(self, key: str, value: str) -> None:
        ref = None
        if self._bodies is not None and self._scope is not None:
            ref = await self._bodies.store_text(value, self._scope)
        self._entries[key] = (
            {"text": value}
            if ref is None
            else {"ref": {"driver": ref.driver, "claim": ref.claim, "size": ref.size, "sha256": ref.sha256}}
        )
        # The worker's pending heartbeat (if throttled) now holds this index, then the server does.
        self.heartbeat()
        try:
            await self._client.get_async_activity_handle(task_token=self._task_token).heartbeat(
                *self.details()
            )
        except AsyncActivityCancelledError:
            pass  # the worker's own heartbeat delivers the cancellation to the step


def _entries_of(prior: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """The index an earlier attempt left, or none (details of another kind, or no attempt before)."""
    if not prior:
        return {}
    first = prior[0]
    if not isinstance(first, dict):
        return {}
    details = cast(dict[str, Any], first)
    if details.get("format") != JOURNAL_FORMAT:
        return {}
    entries = details.get("entries")
    return dict(cast(dict[str, dict[str, Any]], entries)) if isinstance(entries, dict) else {}
