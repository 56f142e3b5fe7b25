"""The payload store: its threshold, huge outputs, caps for the model, faults, threshold 0,
clean-up, kills."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.session.bodies import cap_text
from sessionflow.temporal import PayloadStore, build_data_converter, collect_payloads
from sessionflow.temporal.storage._compact_payloads import COMPACT_DATA_CONVERTER
from sessionflow.temporal.storage._payload_store import (
    DEFAULT_PAYLOAD_THRESHOLD,
    PAYLOAD_THRESHOLD_ENV,
    PAYLOADS_ENV,
)
from sessionflow.testing import wait_until
from tests.harness import FAST, Harness, HarnessFactory
from tests.harness_helpers import idle_after

HUGE = 20_000_000
REFERENCE_TYPE = b"temporal.api.sdk.v1.ExternalStorageReference"


def _objects(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()]


async def _encoded(store: PayloadStore, value: object) -> Payload:
    """`value` as a client with `store` (and no codec) puts it in a history event."""
    converter = build_data_converter(store, codec=None)
    [payload] = await converter.encode([value])
    assert await converter.decode([payload]) == [value]
    return payload


def _is_reference(payload: Payload) -> bool:
    return payload.metadata.get("messageType") == REFERENCE_TYPE and len(payload.external_payloads) == 1


async def test_a_payload_of_the_threshold_or_more_is_stored_and_one_byte_less_stays_inline(
    tmp_path: Path,
) -> None:
    value = "v" * 500
    size = COMPACT_DATA_CONVERTER.payload_converter.to_payloads([value])[0].ByteSize()
    for threshold, stored in ((size - 1, True), (size, True), (size + 1, False)):
        root = tmp_path / str(threshold)
        payload = await _encoded(PayloadStore(location=str(root), threshold=threshold), value)
        assert _is_reference(payload) is stored, (threshold, size)
        assert len(_objects(root)) == (1 if stored else 0)
        if stored:
            # The reference says how big the payload it stands for is; it is small itself.
            assert payload.external_payloads[0].size_bytes == size
            assert payload.ByteSize() < 300
        else:
            assert payload.data == f'"{value}"'.encode()


async def test_threshold_zero_stores_even_the_smallest_payload(tmp_path: Path) -> None:
    for value in (None, "", 0):
        payload = await _encoded(PayloadStore(location=str(tmp_path), threshold=0), value)
        assert _is_reference(payload), value
    assert len(_objects(tmp_path)) == 3


async def test_the_default_threshold_keeps_a_payload_under_128_kib_inline(tmp_path: Path) -> None:
    assert DEFAULT_PAYLOAD_THRESHOLD == 128 * 1024
    store = PayloadStore(location=str(tmp_path))
    assert store.threshold == DEFAULT_PAYLOAD_THRESHOLD
    external = build_data_converter(store, codec=None).external_storage
    assert external is not None and external.payload_size_threshold == DEFAULT_PAYLOAD_THRESHOLD
    assert not _is_reference(await _encoded(store, "w" * (100 * 1024)))
    assert _is_reference(await _encoded(store, "w" * (128 * 1024)))


@pytest.mark.parametrize(
    ("text", "threshold"),
    [(None, DEFAULT_PAYLOAD_THRESHOLD), ("", DEFAULT_PAYLOAD_THRESHOLD), ("0", 0), ("1", 1), ("4096", 4096)],
)
def test_the_threshold_comes_from_the_environment(tmp_path: Path, text: str | None, threshold: int) -> None:
    environ = {PAYLOADS_ENV: str(tmp_path)} | ({PAYLOAD_THRESHOLD_ENV: text} if text is not None else {})
    store = PayloadStore.from_environment(environ)
    assert store.threshold == threshold
    # A worker child given the store's environment builds the same store.
    assert PayloadStore.from_environment(store.environment()) == store
    assert store.environment()[PAYLOAD_THRESHOLD_ENV] == str(threshold)


@pytest.mark.parametrize(
    ("text", "message"), [("12k", "is not a number of bytes"), ("-1", "0 or more bytes")]
)
def test_a_threshold_that_is_not_a_size_is_refused(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PayloadStore.from_environment({PAYLOADS_ENV: str(tmp_path), PAYLOAD_THRESHOLD_ENV: text})
    with pytest.raises(ValueError, match="0 or more bytes"):
        PayloadStore(location=str(tmp_path), threshold=-1)


def _tool_turn(tool: str, answer: str = "done") -> list[dict[str, object]]:
    return [{"tool_calls": [{"id": "c1", "name": tool, "arguments": {}}]}, {"text": answer}]


def _seen_tool_result(harness: Harness, session_id: str) -> str:
    """The tool result as the model's second call of turn 1 saw it."""
    second = harness.log.entries("model", session=session_id)[-1]
    return second["seen"][-1]


async def test_a_twenty_megabyte_output_runs_once_and_the_model_sees_its_capped_head(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory()
    harness.script("huge-1", [_tool_turn("dump")], {"dump": {"effect": "read", "output_bytes": HUGE}})
    await harness.sessions.start_session("huge-1", "dump it")
    await idle_after(harness, "huge-1", 1)
    assert len(harness.log.entries("tool", session="huge-1")) == 1
    seen = _seen_tool_result(harness, "huge-1")
    assert seen == cap_text("x" * HUGE, 1024 * 1024)
    assert seen.endswith(
        "cut to its first 1,048,576 of 20,000,000 bytes; the whole of it is stored with the session]"
    )
    snapshot = await harness.sessions.get_agent_snapshot("huge-1")
    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    assert snapshot.messages[-1].message.text == "done"


async def test_a_tool_policy_caps_what_the_model_sees(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(
        tool_policies={"dump": ToolPolicy(effect=ToolEffect.READ, max_output_bytes=1000)}
    )
    harness.script("cap-1", [_tool_turn("dump")], {"dump": {"output_bytes": 300_000}})
    await harness.sessions.start_session("cap-1", "dump it")
    await idle_after(harness, "cap-1", 1)
    seen = _seen_tool_result(harness, "cap-1")
    assert seen.startswith(
        "x" * 1000 + "\n\n[sessionflow: this output was cut to its first 1,000 of 300,000 bytes"
    )
    # The whole output stayed with the session: the stored tool message holds what the model saw.
    stored = await harness.sessions.get_message("cap-1", 3)
    assert stored.message.framework_item["content"] == seen


async def test_a_store_that_cannot_write_fails_the_step_which_retries_and_loses_nothing(
    harness_factory: HarnessFactory, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store's parent folder should be")
    store = PayloadStore(location=str(blocker / "payloads"))
    timings = replace(FAST, retry_initial_interval=timedelta(seconds=3))
    harness: Harness = await harness_factory(payloads=store, timings=timings)
    harness.script(
        "fault-1", [_tool_turn("read_big")], {"read_big": {"effect": "read", "output_bytes": 300_000}}
    )
    await harness.sessions.start_session("fault-1", "read it")
    handle = harness.stack.client.get_workflow_handle("fault-1")

    async def failure() -> str | None:
        description = await handle.describe()
        for pending in description.raw_description.pending_activities:
            if pending.last_failure.message:
                return pending.last_failure.message
        return None

    message = await wait_until("the tool step to fail on the store", failure, timeout=60)
    assert f"payload store (local folder {blocker / 'payloads'}) cannot write" in message, message
    blocker.unlink()
    await idle_after(harness, "fault-1", 1, timeout=60)
    # A read runs again once the store is back; the whole output is stored and readable.
    assert len(harness.log.entries("tool", session="fault-1")) >= 2
    stored = await harness.sessions.get_message("fault-1", 3)
    assert len(stored.message.framework_item["content"]) == 300_000


async def test_threshold_zero_keeps_every_payload_out_of_the_history(
    harness_factory: HarnessFactory, tmp_path: Path
) -> None:
    store = PayloadStore(location=str(tmp_path / "payloads"), threshold=0)
    harness: Harness = await harness_factory(payloads=store)
    harness.script(
        "zero-1", [_tool_turn("lookup", "found it")], {"lookup": {"effect": "read", "output": "42"}}
    )
    await harness.sessions.start_session("zero-1", "look it up")
    await idle_after(harness, "zero-1", 1)
    snapshot = await harness.sessions.get_agent_snapshot("zero-1")
    assert snapshot.messages[-1].message.text == "found it"
    history = await harness.stack.client.get_workflow_handle("zero-1").fetch_history()
    payloads: list[Payload] = []
    for event in history.events:
        attributes = event.activity_task_scheduled_event_attributes
        payloads += attributes.input.payloads
        payloads += event.activity_task_completed_event_attributes.result.payloads
        payloads += event.workflow_execution_started_event_attributes.input.payloads
    assert len(payloads) >= 5
    assert all(p.metadata.get("messageType") == REFERENCE_TYPE for p in payloads), payloads[0].metadata
    assert any((tmp_path / "payloads").rglob("*"))


async def test_gc_removes_a_stopped_sessions_objects_and_never_a_running_one(
    harness_factory: HarnessFactory, tmp_path: Path
) -> None:
    store = PayloadStore(location=str(tmp_path / "payloads"))
    harness: Harness = await harness_factory(payloads=store)
    tools = {"read_big": {"effect": "read", "output_bytes": 100_000, "unique_output": True}}
    for session_id in ("gc-stopped", "gc-live"):
        harness.script(session_id, [_tool_turn("read_big"), _tool_turn("read_big")], tools)
        await harness.sessions.start_session(session_id, "first")
        await idle_after(harness, session_id, 1)
    assert await harness.sessions.stop_session("gc-stopped")
    folder = tmp_path / "payloads" / "default"
    assert (folder / "gc-stopped").is_dir() and (folder / "gc-live").is_dir()

    kept = await collect_payloads(harness.stack.client, store, older_than=timedelta(days=30))
    assert kept.removed_sessions == [] and (folder / "gc-stopped").is_dir()
    assert "gc-live" in kept.kept_running and "gc-stopped" in kept.kept_recent

    report = await collect_payloads(harness.stack.client, store, older_than=timedelta(0))
    assert report.removed_sessions == ["gc-stopped"] and report.removed_objects > 0
    assert not (folder / "gc-stopped").exists()
    assert "gc-live" in report.kept_running and (folder / "gc-live").is_dir()
    # The live session keeps every body and takes its next turn.
    assert (
        len((await harness.sessions.get_message("gc-live", 3)).message.framework_item["content"]) == 100_000
    )
    assert await harness.sessions.send_user_message("gc-live", "second")
    await idle_after(harness, "gc-live", 2)
    assert len(harness.log.entries("model", session="gc-live")) == 4


_WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from temporalio.api.common.v1 import Payload
    from temporalio.converter import StorageDriverStoreContext, StorageDriverWorkflowInfo
    from sessionflow.temporal.storage._local_driver import LocalFolderDriver

    async def main():
        driver = LocalFolderDriver(Path(sys.argv[1]))
        payload = Payload(metadata={"encoding": b"binary/plain"}, data=b"z" * (400 * 1024 * 1024))
        target = StorageDriverWorkflowInfo(namespace="default", id="killed")
        print("writing", flush=True)
        await driver.store(StorageDriverStoreContext(target=target), [payload])
        print("written", flush=True)

    asyncio.run(main())
    """
)


async def test_a_sigkill_during_a_write_leaves_no_partial_object(tmp_path: Path) -> None:
    root = tmp_path / "payloads"
    child = subprocess.Popen(  # noqa: ASYNC220 - the child runs on its own; the test watches its files
        [sys.executable, "-c", _WRITER, str(root)], stdout=subprocess.PIPE, start_new_session=True
    )
    try:

        def temporary_growing() -> bool:
            # The object is being written under its temporary name.
            return any(p.name.startswith(".tmp-") and p.stat().st_size > 0 for p in root.rglob(".tmp-*"))

        await wait_until("the write to start", lambda: temporary_growing() or None, timeout=60)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert child.stdout is not None and b"written" not in child.stdout.read()
    objects = [p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".tmp-")]
    assert objects == [], objects
