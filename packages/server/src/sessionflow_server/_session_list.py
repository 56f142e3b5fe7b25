"""The session list and the inbox: each session's true state, title, usage and cost.

Visibility (the search attributes) says which sessions a user has and when each was last
active, without asking any worker. What a person wants to see (is it waiting for me, did
its last turn fail, what did it cost) is in the session's own snapshot, a Query a worker
answers, so each listed row costs one. Two things keep a listing bounded and fast: only
the rows of the answer are asked (a page, `limit`), with a few queries at a time, and
what a settled session says (idle or stopped, unchanged since: same run, same last
activity) is remembered, so a console polling the list asks only the busy ones again.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, TypeVar, get_args

import msgspec

from sessionflow import (
    AgentInterrupt,
    AgentSessionClient,
    AgentSnapshot,
    AgentStatus,
    AgentUsage,
    ForkedFrom,
    MessageRole,
    TurnOutcome,
)
from sessionflow.temporal import SessionState, SessionStatus, SessionSummary, list_sessions, lookup_prices

__all__ = [
    "DEFAULT_LIMIT",
    "LIST_STATES",
    "MAX_LIMIT",
    "TITLE_CHARS",
    "ListState",
    "SessionItem",
    "SessionLister",
    "WaitingInterrupt",
    "title_of",
]

ListState = Literal["idle", "working", "waiting_for_you", "failed", "stopped"]
"""What a session is doing, as a person asks it (not the workflow's status, which says
`running` for every session that can take a message)."""
LIST_STATES: tuple[str, ...] = get_args(ListState)
TITLE_CHARS = 80
DEFAULT_LIMIT = 100
MAX_LIMIT = 500
_CONCURRENCY = 8
"""Snapshot queries in flight at once for one listing: a worker answers them one by one anyway."""
_QUERY_TIMEOUT = 10.0
_REMEMBERED = 4096
"""Settled sessions whose facts are remembered (and titles): least recently used go first."""
_REMEMBERED_SECONDS = 30.0
"""How long an open session's remembered facts are trusted: a session whose run does not
upsert its search attributes (recorded before they existed) never moves its last activity."""
_TITLE_PAGE = 4
"""Messages read from the start for a title: the first user message is the first, or nearly."""

K = TypeVar("K")
V = TypeVar("V")


class SessionItem(msgspec.Struct, kw_only=True):
    """One row of `GET /api/v1/sessions`.

    `status`, `agent_status`, `turns`, `pending_approvals`, `stopped`, `start_time`,
    `close_time` and `last_activity` are the fields the list had before, unchanged; the
    rest say what a person asks of a session.
    """

    session_id: str
    flow_type: str
    title: str
    """The first user message, on one line, at most 80 characters; "" when there is none."""
    state: ListState
    queued_message_count: int
    """Messages waiting for the running turn to end (0 when no worker answered)."""
    usage: AgentUsage
    """Tokens of the whole session (zeros when no worker answered: then `turns` is null)."""
    cost_usd: float | None
    """`usage` at the flow's model's prices; null when the prices are unknown."""
    forked_from: ForkedFrom | None
    created_at: datetime | None
    """When the session's first run started."""
    last_activity_at: datetime | None
    user: str | None
    status: SessionStatus
    """The workflow's status: `running` for any session that takes messages, idle or not."""
    agent_status: AgentStatus | None
    turns: int | None
    pending_approvals: int | None
    stopped: bool
    run_id: str | None
    start_time: datetime | None
    close_time: datetime | None
    last_activity: datetime | None


@dataclass(frozen=True)
class WaitingInterrupt:
    """A pending approval or question, with its session's title."""

    session_id: str
    flow_type: str
    session_title: str
    interrupt: AgentInterrupt


@dataclass(frozen=True, kw_only=True)
class _Facts:
    """What a session's snapshot says, or None-ish defaults when no worker answered."""

    known: bool
    turns: int | None = None
    agent_status: AgentStatus | None = None
    pending: tuple[AgentInterrupt, ...] = ()
    queued: int = 0
    usage: AgentUsage = field(default_factory=AgentUsage)
    forked_from: ForkedFrom | None = None
    stopped: bool = False
    last_turn_error: str | None = None
    last_turn_outcome: str | None = None
    title: str | None = None
    """The title when the snapshot held the first message; None when it did not."""

    @property
    def settled(self) -> bool:
        """Nothing changes it until its state does (which changes its last activity)."""
        return (
            self.known
            and self.agent_status in (None, AgentStatus.WAITING_FOR_USER_MESSAGE)
            and not self.pending
            and self.queued == 0
        )


def title_of(text: str | None) -> str:
    """A message's text as a title: whitespace runs as one space, at most `TITLE_CHARS`."""
    line = " ".join((text or "").split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


def _facts_of(snapshot: AgentSnapshot) -> _Facts:
    state = snapshot.state
    first = snapshot.messages[0] if snapshot.messages else None
    title: str | None = None
    if first is not None and first.sequence == 1:
        users = [m for m in snapshot.messages if m.message.role is MessageRole.USER]
        title = title_of(users[0].message.text) if users else None
    return _Facts(
        known=True,
        turns=state.turn_count if state is not None else 0,
        agent_status=state.status if state is not None else None,
        pending=tuple(snapshot.pending_interrupts),
        queued=snapshot.queued_message_count,
        usage=snapshot.usage,
        forked_from=snapshot.forked_from,
        stopped=snapshot.stopped,
        last_turn_error=state.last_turn_error if state is not None else None,
        last_turn_outcome=state.last_turn_outcome if state is not None else None,
        title=title,
    )


_BY_SEARCH_ATTRIBUTE: dict[SessionState, ListState] = {
    SessionState.STOPPED: "stopped",
    SessionState.WAITING_FOR_APPROVAL: "waiting_for_you",
    SessionState.RUNNING: "working",
}


def _state(summary: SessionSummary, facts: _Facts) -> ListState:
    if summary.status in (SessionStatus.FAILED, SessionStatus.TIMED_OUT):
        return "failed"
    if summary.status not in (SessionStatus.RUNNING, SessionStatus.UNKNOWN):
        return "stopped"  # completed (stopped), terminated or cancelled from outside
    if not facts.known:
        # No worker answered: the search attribute is the best word there is.
        return _BY_SEARCH_ATTRIBUTE.get(summary.state, "idle") if summary.state is not None else "idle"
    if facts.stopped:
        return "stopped"
    if facts.pending:
        return "waiting_for_you"
    if facts.agent_status not in (None, AgentStatus.WAITING_FOR_USER_MESSAGE) or facts.queued:
        return "working"
    # A turn a person cancelled leaves the session idle, not failed.
    if facts.last_turn_error is not None and facts.last_turn_outcome != TurnOutcome.CANCELLED:
        return "failed"
    return "idle"


_MAY_BE: dict[str, frozenset[SessionState | None]] = {
    "idle": frozenset({SessionState.IDLE, None}),
    "failed": frozenset({SessionState.IDLE, None}),
    "working": frozenset({SessionState.RUNNING, SessionState.WAITING_FOR_APPROVAL, None}),
    "waiting_for_you": frozenset({SessionState.RUNNING, SessionState.WAITING_FOR_APPROVAL, None}),
    "stopped": frozenset(SessionState) | {None},
}
"""Search-attribute states a session in each state can have, to skip queries that cannot match.

A session changes its search attribute as its state changes; "working" and "waiting" are
one step apart (a question leaves it `running`), and a stopped session's attribute may
lag its closed workflow."""


class _Lru(OrderedDict[K, V]):
    def remember(self, key: K, value: V) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > _REMEMBERED:
            self.popitem(last=False)


class SessionLister:
    """Lists the sessions of some flows for a user, and their pending interrupts."""

    def __init__(self, flows: Sequence[AgentSessionClient], *, query_timeout: float = _QUERY_TIMEOUT) -> None:
        self.flows = {flow.flow_type: flow for flow in flows}
        self.query_timeout = query_timeout
        self._facts: _Lru[str, tuple[tuple[object, ...], float, _Facts]] = _Lru()
        self._titles: _Lru[str, str] = _Lru()
        self._prices: dict[str, tuple[float, float] | None] = {}

    async def summaries(
        self,
        user: str,
        *,
        flow_types: Sequence[str],
        status: SessionState | None = None,
        since: datetime | None = None,
    ) -> list[SessionSummary]:
        """The user's sessions from visibility alone (no query), most recent activity first.

        Raises:
            SearchAttributesMissingError: The namespace lacks sessionflow's search attributes.
        """
        found: list[SessionSummary] = []
        for flow_type in flow_types:
            flow = self.flows[flow_type]
            found += await list_sessions(flow.client, flow.flow_type, user=user, state=status, since=since)
        epoch = datetime.min.replace(tzinfo=UTC)
        return sorted(found, key=lambda s: s.last_activity or s.start_time or epoch, reverse=True)

    async def items(
        self,
        summaries: Sequence[SessionSummary],
        *,
        state: ListState | None = None,
        q: str | None = None,
        limit: int = DEFAULT_LIMIT,
    ) -> list[SessionItem]:
        """The first `limit` rows of `summaries` that are in `state` and match `q`.

        Rows are read a batch at a time, in order, until `limit` match: without a filter
        only the first `limit` sessions are asked.
        """
        if state is not None:
            summaries = [s for s in summaries if s.state in _MAY_BE[state] or s.status.is_open is False]
        needle = q.casefold() if q else None
        semaphore = asyncio.Semaphore(_CONCURRENCY)

        async def row(summary: SessionSummary) -> SessionItem | None:
            async with semaphore:
                item = await self._item(summary)
            if state is not None and item.state != state:
                return None
            if (
                needle is not None
                and needle not in item.session_id.casefold()
                and needle not in item.title.casefold()
            ):
                return None
            return item

        found: list[SessionItem] = []
        batch = max(limit, _CONCURRENCY * 4)
        for start in range(0, len(summaries), batch):
            rows = await asyncio.gather(*(row(s) for s in summaries[start : start + batch]))
            found += [r for r in rows if r is not None]
            if len(found) >= limit:
                break
        return found[:limit]

    async def waiting(self, summaries: Sequence[SessionSummary]) -> list[WaitingInterrupt]:
        """The pending interrupts of `summaries`' sessions, oldest first."""
        semaphore = asyncio.Semaphore(_CONCURRENCY)

        async def of(summary: SessionSummary) -> list[WaitingInterrupt]:
            if not summary.status.is_open:
                return []
            async with semaphore:
                facts = await self._facts_for(summary)
                if not facts.pending:
                    return []
                title = await self._title(summary, facts)
            return [WaitingInterrupt(summary.session_id, summary.flow_type, title, i) for i in facts.pending]

        found = [w for ws in await asyncio.gather(*(of(s) for s in summaries)) for w in ws]
        return sorted(found, key=lambda w: w.interrupt.raised_at)

    async def _item(self, summary: SessionSummary) -> SessionItem:
        facts = await self._facts_for(summary)
        title = await self._title(summary, facts)
        return SessionItem(
            session_id=summary.session_id,
            flow_type=summary.flow_type,
            title=title,
            state=_state(summary, facts),
            queued_message_count=facts.queued,
            usage=facts.usage,
            cost_usd=self._cost(summary.flow_type, facts.usage) if facts.known else None,
            forked_from=facts.forked_from,
            created_at=summary.created_at or summary.start_time,
            last_activity_at=summary.last_activity,
            user=summary.user,
            status=summary.status,
            agent_status=facts.agent_status,
            turns=facts.turns,
            pending_approvals=len(facts.pending) if facts.known else None,
            stopped=summary.stopped or facts.stopped,
            run_id=summary.run_id,
            start_time=summary.start_time,
            close_time=summary.close_time,
            last_activity=summary.last_activity,
        )

    async def _facts_for(self, summary: SessionSummary) -> _Facts:
        # A settled session keeps its facts until its run or its last activity changes:
        # a state change (a turn starting, a stop) upserts a new last activity.
        key = (summary.run_id, summary.status, summary.state, summary.last_activity)
        closed = not summary.status.is_open and summary.status is not SessionStatus.UNKNOWN
        remembered = self._facts.get(summary.session_id)
        now = time.monotonic()
        if (
            remembered is not None
            and remembered[0] == key
            and (closed or now - remembered[1] < _REMEMBERED_SECONDS)
        ):
            self._facts.move_to_end(summary.session_id)
            return remembered[2]
        flow = self.flows.get(summary.flow_type)
        snapshot = await self._ask(lambda: flow.get_agent_snapshot(summary.session_id)) if flow else None
        facts = _facts_of(snapshot) if snapshot is not None else _Facts(known=False)
        agrees = summary.state in (SessionState.IDLE, SessionState.STOPPED) and facts.settled
        if facts.known and (closed or agrees):
            self._facts.remember(summary.session_id, (key, now, facts))
        return facts

    async def _title(self, summary: SessionSummary, facts: _Facts) -> str:
        known = self._titles.get(summary.session_id)
        if known is not None:
            return known
        title = facts.title
        flow = self.flows.get(summary.flow_type)
        if title is None and facts.known and flow is not None:
            page = await self._ask(
                lambda: flow.list_agent_messages(
                    summary.session_id, after=0, limit=_TITLE_PAGE, include_superseded=True
                )
            )
            users = [m for m in page.messages if m.message.role is MessageRole.USER] if page else []
            title = title_of(users[0].message.text) if users else None
        if title:
            # The first message never changes: one read per session while remembered.
            self._titles.remember(summary.session_id, title)
        return title or ""

    async def _ask(self, call: Callable[[], Awaitable[V]]) -> V | None:
        """A query's answer, or None when no worker answered in time (or the session cannot)."""
        try:
            return await asyncio.wait_for(call(), self.query_timeout)
        except Exception:
            return None

    def _cost(self, flow_type: str, usage: AgentUsage) -> float | None:
        if flow_type not in self._prices:
            self._prices[flow_type] = _prices_of(self.flows[flow_type]) if flow_type in self.flows else None
        prices = self._prices[flow_type]
        if prices is None:
            return None
        return round((usage.input_tokens * prices[0] + usage.output_tokens * prices[1]) / 1e6, 6)


def _prices_of(sessions: AgentSessionClient) -> tuple[float, float] | None:
    """USD per million (input, output) tokens of the flow's model: its budget's, else the table's."""
    flow = sessions.flow
    if flow is None:
        return None  # a client built from a flow type alone does not know the model
    budget = flow.options.budget
    if (
        budget is not None
        and budget.input_price_per_mtok is not None
        and budget.output_price_per_mtok is not None
    ):
        return (budget.input_price_per_mtok, budget.output_price_per_mtok)
    model = (budget.price_model if budget is not None else None) or flow.model_name
    if not model:
        return None
    return lookup_prices(model, budget.price_provider if budget is not None else None)
