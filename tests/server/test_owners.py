"""`Owners`: which flow a session runs under and whose it is, read from a real dev server and cached."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sessionflow import AgentSessionClient
from sessionflow.temporal import DevServer, DevServerConfig
from sessionflow.testing import AgentTestStack, save_scripted_flow
from sessionflow_server._owners import Owners, owner_of_environment


@pytest.mark.parametrize(
    ("environment", "owner"),
    [
        (None, None),
        ({}, None),
        ({"user": "alice"}, "alice"),
        ({"user": "alice", "user_name": "Alice A."}, "alice"),
        ({"user_name": "Alice A."}, "Alice A."),
        ({"user": "", "user_name": "Alice A."}, "Alice A."),
        ({"user": "", "user_name": ""}, None),
        ({"team": "blue"}, None),
    ],
)
def test_the_owner_is_the_user_else_the_user_name(
    environment: dict[str, str] | None, owner: str | None
) -> None:
    assert owner_of_environment(environment) == owner


@dataclass
class TwoFlows:
    served: AgentSessionClient
    other: AgentSessionClient

    def new_id(self, label: str) -> str:
        return f"own-{label}-{uuid.uuid4().hex[:10]}"


@pytest.fixture
async def flows(temporal_address: str, tmp_path: Path) -> AsyncIterator[TwoFlows]:
    # No worker: a session's flow type and start environment are on the server from its start.
    suffix = uuid.uuid4().hex[:8]
    served = save_scripted_flow(tmp_path / "served", f"owners-served-{suffix}")
    other = save_scripted_flow(tmp_path / "other", f"owners-other-{suffix}")
    stack = AgentTestStack(tmp_path / "served", [served, other], server_address=temporal_address)
    await stack.__aenter__()
    try:
        yield TwoFlows(stack.sessions(served), stack.sessions(other))
    finally:
        await stack.__aexit__(None, None, None)


async def test_lookup_reads_the_flow_and_owner_from_the_server(flows: TwoFlows) -> None:
    owners = Owners([flows.served])
    by_user, by_name, nobody = flows.new_id("user"), flows.new_id("name"), flows.new_id("nobody")
    await flows.served.start_session(by_user, environment={"user": "alice", "user_name": "Alice A."})
    await flows.served.start_session(by_name, environment={"user_name": "bob"})
    await flows.served.start_session(nobody)
    assert await owners.lookup(by_user) == (flows.served, "alice")
    assert await owners.lookup(by_name) == (flows.served, "bob")
    assert await owners.lookup(nobody) == (flows.served, None)
    assert await owners.lookup(flows.new_id("missing")) is None
    assert await owners.lookup("not a session id!") is None


async def test_a_session_of_a_flow_this_server_does_not_serve_is_absent(flows: TwoFlows) -> None:
    owners = Owners([flows.served])
    foreign = flows.new_id("foreign")
    await flows.other.start_session(foreign, environment={"user": "alice"})
    assert await owners.lookup(foreign) is None
    assert await owners.flow_for(foreign, "alice") is None
    # The server that serves both flows finds it.
    assert await Owners([flows.served, flows.other]).lookup(foreign) == (flows.other, "alice")
    assert await Owners([flows.served, flows.other]).flow_for(foreign, "alice") is flows.other


async def test_flow_for_answers_only_the_owner(flows: TwoFlows) -> None:
    owners = Owners([flows.served])
    mine = flows.new_id("mine")
    await flows.served.start_session(mine, environment={"user": "alice"})
    assert await owners.flow_for(mine, "alice") is flows.served
    assert await owners.flow_for(mine, "bob") is None
    assert await Owners([flows.served]).flow_for(mine, "bob") is None  # not from the cache either
    assert await owners.flow_for(flows.new_id("missing"), "alice") is None
    assert await owners.flow_for("not a session id!", "alice") is None
    ownerless = flows.new_id("ownerless")
    await flows.served.start_session(ownerless)
    assert await owners.flow_for(ownerless, "alice") is None


async def test_a_remembered_session_is_answered_without_the_server(flows: TwoFlows) -> None:
    # What the server just created is remembered: no round trip for the creator's next call.
    owners = Owners([flows.served])
    created = flows.new_id("created")  # never started: only the cache knows it
    owners.remember(created, flows.served, "alice")
    assert await owners.lookup(created) == (flows.served, "alice")
    assert await owners.flow_for(created, "alice") is flows.served
    # Another user is never answered from the cache: the server is asked, and has no such session.
    assert await owners.flow_for(created, "bob") is None


async def test_the_cache_holds_50000_sessions_then_starts_again(flows: TwoFlows) -> None:
    owners = Owners([flows.served])
    for index in range(50_000):
        owners.remember(f"cached-{index}", flows.served, "alice")
    assert await owners.lookup("cached-0") == (flows.served, "alice")
    assert await owners.lookup("cached-49999") == (flows.served, "alice")
    owners.remember("cached-50000", flows.served, "alice")  # one past the bound: the cache is emptied first
    assert await owners.lookup("cached-50000") == (flows.served, "alice")
    assert await owners.lookup("cached-0") is None  # forgotten, and not on the server
    assert await owners.lookup("cached-49999") is None


@pytest.fixture
async def far_flow(tmp_path: Path) -> AsyncIterator[AgentSessionClient]:
    """A flow on a second Temporal server: one API server may serve flows of several."""
    server = DevServer(DevServerConfig(data_dir=tmp_path / "far-temporal"))
    handle = await server.start()
    try:
        flow = save_scripted_flow(tmp_path / "far", f"owners-far-{uuid.uuid4().hex[:8]}")
        async with AgentTestStack(tmp_path / "far", [flow], server_address=handle.address) as stack:
            yield stack.sessions(flow)
    finally:
        await server.stop()


async def test_on_two_temporal_servers_the_first_that_has_the_session_answers(
    flows: TwoFlows, far_flow: AgentSessionClient
) -> None:
    only_far = flows.new_id("only-far")
    await far_flow.start_session(only_far, environment={"user": "carol"})
    assert await Owners([flows.served, far_flow]).lookup(only_far) == (far_flow, "carol")
    assert await Owners([flows.served, far_flow]).flow_for(only_far, "carol") is far_flow
    # One ID on both servers: the first server's session is the one, whoever owns the other.
    both = flows.new_id("both")
    await flows.served.start_session(both, environment={"user": "alice"})
    await far_flow.start_session(both, environment={"user": "bob"})
    assert await Owners([flows.served, far_flow]).lookup(both) == (flows.served, "alice")
    assert await Owners([flows.served, far_flow]).flow_for(both, "alice") is flows.served
    assert await Owners([flows.served, far_flow]).flow_for(both, "bob") is None
    # Even when the first server's session is of a flow not served here.
    shadowed = flows.new_id("shadowed")
    await flows.other.start_session(shadowed, environment={"user": "bob"})
    await far_flow.start_session(shadowed, environment={"user": "bob"})
    assert await Owners([flows.served, far_flow]).lookup(shadowed) is None
    assert await Owners([flows.served, far_flow]).flow_for(shadowed, "bob") is None
