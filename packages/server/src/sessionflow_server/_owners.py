"""Which flow a session runs under and whose it is, read from the server and cached.

The owner is the ``user`` of the session's start environment (else its ``user_name``), the
value `AgentSessionClient.start_session` also gives the ``SessionflowUser`` search attribute.
Neither the flow type nor the start environment of a session ever changes, so a positive
answer is kept for the process's life (bounded).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sessionflow import AgentSessionClient
from sessionflow.temporal import describe_session, read_start_environment, validate_session_id

__all__ = ["Owners", "owner_of_environment"]

_MAX_CACHED = 50_000


def owner_of_environment(environment: Mapping[str, str] | None) -> str | None:
    if not environment:
        return None
    return environment.get("user") or environment.get("user_name") or None


@dataclass(frozen=True)
class _Known:
    flow: AgentSessionClient
    owner: str | None


class Owners:
    def __init__(self, flows: Sequence[AgentSessionClient]) -> None:
        self._flows = {flow.flow_type: flow for flow in flows}
        self._known: dict[str, _Known] = {}

    def remember(self, session_id: str, flow: AgentSessionClient, owner: str | None) -> None:
        if len(self._known) >= _MAX_CACHED:
            self._known.clear()
        self._known[session_id] = _Known(flow, owner)

    async def lookup(self, session_id: str) -> tuple[AgentSessionClient, str | None] | None:
        """The session's flow (one this server serves) and owner; None when there is no such session."""
        known = self._known.get(session_id)
        if known is not None:
            return known.flow, known.owner
        try:
            validate_session_id(session_id)
        except ValueError:
            return None
        clients = {id(flow.client): flow.client for flow in self._flows.values()}
        for client in clients.values():
            summary = await describe_session(client, session_id)
            if summary is None:
                continue
            flow = self._flows.get(summary.flow_type)
            if flow is None:
                return None
            owner = owner_of_environment(await read_start_environment(client, session_id))
            self.remember(session_id, flow, owner)
            return flow, owner
        return None

    async def flow_for(self, session_id: str, user: str) -> AgentSessionClient | None:
        """The session's flow when `user` owns it; None otherwise (absent and foreign look the same).

        Only the caller's own sessions are answered from the cache. Any other ID, another
        user's or a missing one, costs the same server calls (a describe and a read of the
        start event, whatever the first answers), so neither the answer nor its time tells
        them apart.
        """
        known = self._known.get(session_id)
        if known is not None and known.owner == user:
            return known.flow
        found = await self._probe(session_id)
        if found is None or found[1] != user:
            return None
        return found[0]

    async def _probe(self, session_id: str) -> tuple[AgentSessionClient, str | None] | None:
        """`lookup` from the server, with the same calls for a missing session as for a present one."""
        try:
            validate_session_id(session_id)
        except ValueError:
            return None
        clients = {id(flow.client): flow.client for flow in self._flows.values()}
        found: tuple[AgentSessionClient, str | None] | None = None
        decided = False
        for client in clients.values():
            summary = await describe_session(client, session_id)
            environment = await read_start_environment(client, session_id)
            if summary is None or decided:
                continue
            decided = True  # the first server that has it answers, even for a flow not served here
            flow = self._flows.get(summary.flow_type)
            if flow is not None:
                owner = owner_of_environment(environment)
                self.remember(session_id, flow, owner)
                found = (flow, owner)
        return found
