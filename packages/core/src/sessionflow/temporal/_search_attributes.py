"""Search attributes of sessions: flow type, state, user and last activity, for visibility queries.

A client sets them when it starts a session, and the session updates its state and last
activity as they change, so `list_sessions` can ask the server for "alice's sessions
waiting for an approval" instead of reading every session. They must be registered in
the namespace first: the embedded dev server registers them at launch; on a cluster run
`register_search_attributes` (or the command `SearchAttributesMissingError` names), on
Temporal Cloud ``tcld namespace search-attributes add``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from enum import StrEnum
from types import MappingProxyType

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest, ListSearchAttributesRequest
from temporalio.client import Client
from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes
from temporalio.service import RPCError, RPCStatusCode

from sessionflow.session.errors import UserError

__all__ = [
    "FLOW_TYPE_KEY",
    "LAST_ACTIVITY_KEY",
    "SEARCH_ATTRIBUTES",
    "STATE_KEY",
    "USER_KEY",
    "SearchAttributesMissingError",
    "SessionState",
    "dev_server_arguments",
    "missing_search_attributes",
    "register_search_attributes",
    "registration_command",
    "search_attributes_registered",
    "start_attributes",
    "try_register_search_attributes",
    "visibility_query",
]

FLOW_TYPE_KEY = SearchAttributeKey.for_keyword("SessionflowFlowType")
STATE_KEY = SearchAttributeKey.for_keyword("SessionflowStatus")
USER_KEY = SearchAttributeKey.for_keyword("SessionflowUser")
LAST_ACTIVITY_KEY = SearchAttributeKey.for_datetime("SessionflowLastActivity")

SEARCH_ATTRIBUTES: Mapping[str, str] = MappingProxyType(
    {
        FLOW_TYPE_KEY.name: "Keyword",
        STATE_KEY.name: "Keyword",
        USER_KEY.name: "Keyword",
        LAST_ACTIVITY_KEY.name: "Datetime",
    }
)
"""Each search attribute's name and Temporal type."""

_INDEXED = {
    "Keyword": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    "Datetime": IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
}


class SessionState(StrEnum):
    """A session's state as its ``SessionflowStatus`` search attribute says it."""

    IDLE = "idle"
    RUNNING = "running"
    WAITING_FOR_APPROVAL = "waiting_for_approval"
    STOPPED = "stopped"


class SearchAttributesMissingError(UserError):
    """The namespace lacks sessionflow's search attributes, which a filtered listing needs.

    Attributes:
        missing: The names that are not registered.
    """

    def __init__(self, namespace: str, missing: list[str]) -> None:
        super().__init__(
            f"namespace {namespace!r} lacks the search attributes {', '.join(missing)}, so sessions cannot "
            f"be filtered by state, user or last activity; register them once with: "
            f"{registration_command(namespace)}"
        )
        self.missing = missing


def registration_command(namespace: str) -> str:
    """The ``temporal operator search-attribute create`` command that registers all of them."""
    pairs = " ".join(f"--name {name} --type {kind}" for name, kind in SEARCH_ATTRIBUTES.items())
    return f"temporal operator search-attribute create --namespace {namespace} {pairs}"


def dev_server_arguments() -> list[str]:
    """``temporal server start-dev`` arguments that register them at launch."""
    arguments: list[str] = []
    for name, kind in SEARCH_ATTRIBUTES.items():
        arguments += ["--search-attribute", f"{name}={kind}"]
    return arguments


async def missing_search_attributes(client: Client) -> list[str]:
    """Names of sessionflow's search attributes the client's namespace lacks.

    Raises:
        RPCError: The server did not list them (unreachable, or no operator permission,
            as with some Temporal Cloud API keys).
    """
    response = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=client.namespace)
    )
    known = {**response.custom_attributes, **response.system_attributes}
    return [
        name for name, kind in SEARCH_ATTRIBUTES.items() if name not in known or known[name] != _INDEXED[kind]
    ]


async def search_attributes_registered(client: Client) -> bool | None:
    """All of them are registered: True or False, or None when the server would not say."""
    try:
        return not await missing_search_attributes(client)
    except RPCError as error:
        if error.status in (RPCStatusCode.PERMISSION_DENIED, RPCStatusCode.UNIMPLEMENTED):
            return False
        return None


async def register_search_attributes(client: Client) -> list[str]:
    """Register the missing ones in the client's namespace; returns the names it added.

    Needs operator rights on a self-hosted cluster; on Temporal Cloud use ``tcld`` instead.
    """
    missing = await missing_search_attributes(client)
    if missing:
        await client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(
                namespace=client.namespace,
                search_attributes={name: _INDEXED[SEARCH_ATTRIBUTES[name]] for name in missing},
            )
        )
    return missing


async def try_register_search_attributes(client: Client) -> bool:
    """`register_search_attributes`, best effort: False when the server refused or failed."""
    try:
        await register_search_attributes(client)
    except RPCError:
        return False
    return True


def start_attributes(flow_type: str, user: str | None, now: datetime | None = None) -> TypedSearchAttributes:
    """The attributes a session starts with: idle, its flow type and user, active now."""
    pairs: list[SearchAttributePair[str] | SearchAttributePair[datetime]] = [
        SearchAttributePair(FLOW_TYPE_KEY, flow_type),
        SearchAttributePair(STATE_KEY, SessionState.IDLE.value),
        SearchAttributePair(LAST_ACTIVITY_KEY, now or datetime.now(UTC)),
    ]
    if user:
        pairs.append(SearchAttributePair(USER_KEY, user))
    return TypedSearchAttributes(pairs)


def visibility_query(
    flow_type: str,
    *,
    state: SessionState | str | None = None,
    user: str | None = None,
    since: datetime | None = None,
) -> str:
    """The visibility query for a flow type's sessions with these attributes."""
    clauses = [f"{FLOW_TYPE_KEY.name} = {_quoted(flow_type)}"]
    if state is not None:
        clauses.append(f"{STATE_KEY.name} = {_quoted(SessionState(state).value)}")
    if user is not None:
        clauses.append(f"{USER_KEY.name} = {_quoted(user)}")
    if since is not None:
        moment = since if since.tzinfo is not None else since.replace(tzinfo=UTC)
        clauses.append(f"{LAST_ACTIVITY_KEY.name} >= {_quoted(moment.astimezone(UTC).isoformat())}")
    return " AND ".join(clauses)


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
