"""The messages a model step reads: kept per session on the worker, checked by rolling digest.

`MessageCache` gives a model step every stored message of its session: the cached prefix
when its digest matches the one the workflow sent, else read again through the stored
message index (or, for inputs recorded before it, the workflow's query).
"""

from __future__ import annotations

from collections import OrderedDict

from sessionflow.session.bodies import BodyRef
from sessionflow.session.errors import SessionStateError
from sessionflow.session.messages import AgentMessage, FrameworkMessage, message_digest
from sessionflow.session.state import AgentMessagesPage
from sessionflow.temporal._payloads import (
    LIST_AGENT_MESSAGES,
    ListAgentMessagesRequest,
    MessageIndexChunk,
    RunModelInput,
)
from sessionflow.temporal.activities._step_context import StepContext

__all__ = ["MessageCache"]

_CACHE_SESSIONS = 512


class _CachedMessages:
    """Messages 1..n of one session with the rolling digest after each."""

    def __init__(self) -> None:
        self.messages: list[AgentMessage] = []
        self.digests: list[str] = []

    def extend(self, messages: list[AgentMessage]) -> None:
        for stored in messages:
            if stored.sequence != len(self.messages) + 1:
                raise SessionStateError(f"message {stored.sequence} does not follow {len(self.messages)}")
            self.digests.append(message_digest(self.digests[-1] if self.digests else "", stored))
            self.messages.append(stored)

    def digest_after(self, messages: list[AgentMessage]) -> str:
        digest = self.digests[-1] if self.digests else ""
        for stored in messages:
            digest = message_digest(digest, stored)
        return digest

    def truncate(self, count: int) -> None:
        del self.messages[count:]
        del self.digests[count:]

    @staticmethod
    def rolling(messages: list[AgentMessage]) -> str:
        digest = ""
        for stored in messages:
            digest = message_digest(digest, stored)
        return digest

    def digest_at(self, count: int) -> str:
        return self.digests[count - 1] if count else ""


class MessageCache:
    """The stored messages of the last sessions this flow's model steps ran, by session."""

    def __init__(self, steps: StepContext) -> None:
        self._steps = steps
        self._cache: OrderedDict[tuple[str, str], _CachedMessages] = OrderedDict()

    async def messages(self, request: RunModelInput) -> list[AgentMessage]:
        """Every stored message as the session keeps it: cached prefix if its digest matches,
        else read through the stored index (or, for inputs recorded before it, the workflow)."""
        key = (request.session_id, request.session_nonce)
        cached = self._cache.pop(key, None) or _CachedMessages()
        self._cache[key] = cached
        while len(self._cache) > _CACHE_SESSIONS:
            self._cache.popitem(last=False)
        count = request.prefix_count
        if len(cached.messages) < count or cached.digest_at(count) != request.prefix_digest:
            cached.truncate(0)
            if request.prefix_ref is not None:
                await self._read_index(cached, request.prefix_ref)
            else:
                await self._fetch_into(cached, request.session_id, count)
        cached.truncate(count)
        if cached.digest_at(count) != request.prefix_digest:
            raise SessionStateError("stored messages do not match the session's digest")
        cached.extend(request.tail)
        return list(cached.messages)

    def digest_after(
        self, request: RunModelInput, entries: list[AgentMessage], added: list[AgentMessage]
    ) -> str:
        """The rolling digest of `entries` then `added`: from the cache when it holds `entries`."""
        cached = self._cache.get((request.session_id, request.session_nonce))
        digest = (
            cached.digest_after(added) if cached is not None and len(cached.messages) == len(entries) else ""
        )
        if not digest:
            digest = _CachedMessages.rolling([*entries, *added])
        return digest

    def forget(self, request: RunModelInput) -> None:
        """Drop the session's cached messages (the turn replaced some): the next step reads them again."""
        self._cache.pop((request.session_id, request.session_nonce), None)

    def remember(
        self, request: RunModelInput, messages: list[AgentMessage], new: list[FrameworkMessage]
    ) -> None:
        # The workflow appends the answer right after the messages we saw; cache it so the
        # next turn's prefix is a hit. The digest check catches any mismatch.
        cached = self._cache.get((request.session_id, request.session_nonce))
        if cached is None or len(cached.messages) != len(messages):
            return
        start = len(messages) + 1
        cached.extend(
            [AgentMessage(sequence=start + i, turn_id=request.turn_id, message=m) for i, m in enumerate(new)]
        )

    async def _read_index(self, cached: _CachedMessages, ref: BodyRef) -> None:
        bodies = self._steps.require_bodies()
        chunks: list[MessageIndexChunk] = []
        link: BodyRef | None = ref
        while link is not None:
            chunk = await bodies.get(link, MessageIndexChunk)
            if not isinstance(chunk, MessageIndexChunk):
                raise SessionStateError("the payload store holds a message index chunk of the wrong shape")
            chunks.append(chunk)
            link = chunk.parent
        for chunk in reversed(chunks):
            cached.extend(chunk.entries)

    async def _fetch_into(self, cached: _CachedMessages, session_id: str, count: int) -> None:
        handle = self._steps.client.get_workflow_handle(session_id)
        while len(cached.messages) < count:
            page = await handle.query(
                LIST_AGENT_MESSAGES,
                ListAgentMessagesRequest(after=len(cached.messages), limit=200),
                result_type=AgentMessagesPage,
            )
            if not page.messages:
                raise SessionStateError(f"session {session_id!r} has fewer than {count} messages")
            cached.extend(page.messages[: count - len(cached.messages)])
