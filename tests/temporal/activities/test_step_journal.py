"""The tool step's journal on Temporal: what an attempt reads of the index its last attempt heartbeated.

Writing goes to a real server and is tested with the Pydantic AI adapter's delegation
(`tests/adapter_pydantic_ai/test_delegation.py`, `differential/test_delegation.py`: a
SIGKILL, and a failed attempt whose entry is in the payload store). Here: the details an
attempt starts from, and the details every heartbeat then sends.
"""

from __future__ import annotations

from typing import Any, cast

from temporalio.client import Client

from sessionflow.kit import current_step_journal, step_journal_scope
from sessionflow.temporal.activities._step_journal import JOURNAL_FORMAT, HeartbeatJournal

# Reading and `details()` never reach the server: no client is needed for them.
NO_CLIENT = cast(Client, None)


def journal(prior: list[Any]) -> HeartbeatJournal:
    return HeartbeatJournal(client=NO_CLIENT, task_token=b"t", bodies=None, scope=None, prior=prior)


async def test_an_attempt_reads_the_entries_its_last_attempt_heartbeated() -> None:
    index = {"format": JOURNAL_FORMAT, "entries": {"c1.1": {"text": "a response"}, "c1.c2": {"text": "done"}}}
    found = journal([index])
    assert len(found) == 2
    assert await found.read("c1.1") == "a response"
    assert await found.read("c1.c2") == "done"
    assert await found.read("c1.2") is None
    # Every heartbeat goes on sending the whole index.
    assert found.details() == (index,)


async def test_the_index_is_the_first_detail() -> None:
    index = {"format": JOURNAL_FORMAT, "entries": {"c1.1": {"text": "a response"}}}
    assert await journal([index, "a detail after it"]).read("c1.1") == "a response"


async def test_details_of_another_kind_or_none_start_an_empty_journal() -> None:
    for prior in (
        [],
        [{"format": "something-else", "entries": {"k": {"text": "x"}}}],
        ["text"],
        [{"entries": 3}],
    ):
        empty = journal(prior)
        assert len(empty) == 0
        assert empty.details() == (), "a step with no entries heartbeats no details, as before"
        assert await empty.read("k") is None


def test_the_current_journal_is_set_for_the_block_only() -> None:
    assert current_step_journal() is None
    found = journal([])
    with step_journal_scope(found) as scoped:
        assert scoped is found
        assert current_step_journal() is found
    assert current_step_journal() is None
